// The header card: logo, name, USD price, 24 h change, decimals, supply, the indexed block and
// whether the page is live (stream) or polling.

import type { Freshness, TokenMetadata } from "../api.js";
import { setCardState } from "../controls.js";
import { externalLink, h, replace } from "../dom.js";
import {
  chainName,
  formatChange,
  formatSupply,
  formatTradeTime,
  formatUsd,
  missing,
  shortHex,
} from "../format.js";
import { symbolOr } from "../market.js";
import { tokenAvatar } from "../search.js";
import type { LiveIndicator, PriceRecord } from "../stream-state.js";
import { isAbort, messageOf, type PageContext } from "./context.js";

export type HeaderCard = {
  element: HTMLElement;
  /** The block the API had indexed at the last metadata answer. */
  readonly block: number | undefined;
  /** Loads (or reloads) the token's metadata. */
  load(): Promise<void>;
  /** The logo and name come with search results (project_info), which metadata does not carry. */
  loadLogo(): Promise<void>;
  /** A price pushed by the stream. */
  setPrice(record: PriceRecord): void;
  /**
   * The token's USD change over 24 h, from its market record (the market card's 24 h window):
   * one figure per token on the page, whatever the metadata or a pushed price carry.
   */
  setChange(change: number | null | undefined): void;
  /** Shows whether updates arrive live or by polling. */
  setLive(indicator: LiveIndicator): void;
  /** Redraws what depends on the network (its name, explorer links) once it is known. */
  renderNetwork(): void;
};

export function createHeaderCard(context: PageContext): HeaderCard {
  const { api, signal, tokenId, tokenAddress, chain } = context;
  let meta: TokenMetadata | undefined;
  let freshness: Freshness | undefined;
  let seq = 0;

  const avatarSlot = h("span", { class: "avatar-slot" }, tokenAvatar("?", null, "l"));
  const chainChip = h("span", { class: "chip" }, chainName(chain));
  const addressSlot = h("span", { class: "address-slot" });
  const title = h("h1", { id: "token-title", class: "token-title" }, "Loading token…");
  const symbolEl = h("span", { class: "token-symbol" });
  const priceEl = h("p", { class: "token-price num", "data-testid": "token-price", "aria-live": "off" }, "—");
  const changeEl = h(
    "span",
    {
      class: "change flat num",
      "data-testid": "token-change",
      title: "USD price change over the last 24 hours (the market card's 24 h window)",
    },
    "—",
  );
  const decimalsEl = h("dd", { class: "num" }, "—");
  const supplyEl = h("dd", { class: "num" }, "—");
  const liveEl = h("dd", { class: "live", "data-testid": "live" }, "—");
  const modeEl = h("span", { class: "live-mode", "data-testid": "live-mode", "data-mode": "connecting" });
  const blockEl = h("span", { class: "live-block" });
  const status = h("p", { class: "card-status", hidden: true });
  const element = h(
    "section",
    { class: "card token-head", "aria-labelledby": "token-title" },
    h(
      "div",
      { class: "token-id" },
      avatarSlot,
      h(
        "div",
        {},
        h("div", { class: "token-title-row" }, title, symbolEl),
        h("p", { class: "token-sub" }, chainChip, addressSlot),
      ),
    ),
    h("div", { class: "token-quote" }, priceEl, h("p", { class: "token-change" }, changeEl, " 24\u00a0h")),
    h(
      "dl",
      { class: "facts" },
      h("div", {}, h("dt", {}, "Decimals"), decimalsEl),
      h("div", {}, h("dt", {}, "Total supply"), supplyEl),
      h("div", {}, h("dt", {}, "Data"), liveEl),
    ),
    status,
  );
  replace(liveEl, modeEl, blockEl);

  // The native coin (the zero address in pools that trade it as such) has no token contract to link to.
  const isNativeCoin = /^0x0{40}$/.test(tokenAddress);
  const renderAddress = () =>
    replace(
      addressSlot,
      externalLink(
        isNativeCoin ? undefined : context.explorer?.token(tokenAddress),
        isNativeCoin
          ? "The chain's native coin"
          : context.explorer
            ? `${tokenAddress} on the block explorer`
            : tokenAddress,
        h("code", { class: "address" }, shortHex(tokenAddress, 8, 6)),
      ),
    );
  renderAddress();

  const renderPrice = () => {
    if (!meta) return;
    const symbol = symbolOr(meta.symbol, tokenAddress);
    document.title = `${symbol} ${formatUsd(meta.usd_price)} · tokenmarket`;
    replace(priceEl, formatUsd(meta.usd_price));
  };

  const renderBlock = () => {
    if (freshness?.block === undefined) return;
    const at = freshness.at ? ` · ${formatTradeTime(freshness.at)} UTC` : "";
    replace(
      blockEl,
      externalLink(
        context.explorer?.block(freshness.block),
        "The last block indexed",
        `Block ${freshness.block}`,
      ),
      at,
    );
  };

  const render = () => {
    if (!meta) return;
    const symbol = symbolOr(meta.symbol, tokenAddress);
    replace(title, meta.name ?? symbol);
    replace(symbolEl, meta.name ? symbol : "");
    renderPrice();
    replace(decimalsEl, meta.decimals === null ? missing : String(meta.decimals));
    replace(supplyEl, formatSupply(meta.total_supply), meta.total_supply === null ? "" : ` ${symbol}`);
    renderBlock();
  };

  /** The stream's status, shown only for a token the server knows: nothing is live about another. */
  let live: LiveIndicator | undefined;
  function renderLive() {
    if (live === undefined || !meta) {
      delete modeEl.dataset.mode;
      modeEl.title = "";
      replace(modeEl);
      return;
    }
    modeEl.dataset.mode = live.mode;
    modeEl.title = live.title;
    replace(modeEl, h("span", { class: "live-dot", "aria-hidden": "true" }), live.text);
  }

  return {
    element,
    get block() {
      return freshness?.block;
    },
    async load() {
      const n = ++seq;
      try {
        const answer = await api.metadata(tokenId, signal);
        if (n !== seq) return;
        meta = answer.token;
        freshness = answer.freshness;
        setCardState(element, status, "ready");
        render();
        renderLive();
      } catch (error) {
        if (isAbort(error) || n !== seq) return;
        context.reportError(error);
        if (!meta) replace(title, "Token unavailable");
        setCardState(element, status, "error", messageOf(error));
      }
    },
    async loadLogo() {
      try {
        const found = await api.search(tokenAddress, signal);
        const token = found.find((t) => `${t.contract.toLowerCase()}:${t.chain}` === tokenId);
        const symbol = symbolOr(token?.symbol ?? meta?.symbol, tokenAddress);
        replace(avatarSlot, tokenAvatar(symbol, token?.project_info?.logo_url, "l", context.logoHosts));
      } catch {
        replace(avatarSlot, tokenAvatar(symbolOr(meta?.symbol, tokenAddress), null, "l"));
      }
    },
    setPrice(record) {
      if (!meta || `${record.contract.toLowerCase()}:${record.chain}` !== tokenId) return;
      meta = { ...meta, usd_price: record.usd_price };
      renderPrice();
      priceEl.dataset.pushed = String(Number(priceEl.dataset.pushed ?? 0) + 1);
    },
    setChange(value) {
      const change = formatChange(value);
      replace(changeEl, change.text);
      changeEl.className = `change ${change.direction} num`;
    },
    setLive(indicator) {
      live = indicator;
      renderLive();
    },
    renderNetwork() {
      if (context.network) replace(chainChip, context.network.name);
      renderAddress();
      renderBlock();
    },
  };
}
