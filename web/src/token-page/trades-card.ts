// The trades card: the selected pair's trades, newest first, with "Load older" and live additions
// (pushed by the stream, or polled when it is down).

import type { Trade } from "../api.js";
import { type CardState, setCardState } from "../controls.js";
import { externalLink, h, replace } from "../dom.js";
import { formatAmount, formatPrice, formatTradeTime, formatUsd, missing, shortHex } from "../format.js";
import {
  appendOlderTrades,
  insertPushedTrade,
  mergeNewTrades,
  pairName,
  sideInfo,
  tradeAmounts,
  tradeKey,
} from "../market.js";
import { poolVenue, poolVenueTitle } from "../pool-label.js";
import { isAbort, messageOf, type PageContext } from "./context.js";

/** Trades of the first page (a trade record is ~0.9 KB of JSON) and of each "Load older". */
const tradesFirstPage = 25;
const tradesPageSize = 50;
/** A live poll asks for this many newest trades and merges them on top. */
const tradesPollSize = 20;

export type TradesCard = {
  element: HTMLElement;
  setState(state: CardState, message?: string): void;
  /** Redraws the pair and the column heads for the selected pair and side. */
  renderHead(): void;
  /** Loads the first page of the selected pair's trades. */
  load(): Promise<void>;
  /** A live refresh: puts the newest trades on top. */
  refresh(): Promise<void>;
  /** A refresh now, or right after the first page when it is still loading (the stream's gap). */
  catchUp(): void;
  /** A trade pushed by the stream for the selected pair and side. */
  push(trade: Trade): void;
  /** Redraws the rows (the explorer's links, once the network is known). */
  redraw(): void;
};

export function createTradesCard(context: PageContext): TradesCard {
  const { api, signal, selection } = context;
  let trades: Trade[] = [];
  let tradesKey = "";
  let cursor: string | undefined;
  let loading = false;
  let catchUpAfterLoad = false;
  const seq = { trades: 0, older: 0 };

  const body = h("tbody");
  const status = h("p", { class: "card-status" });
  const pairEl = h("span", { class: "muted", "data-testid": "trades-pair" });
  const priceHead = h("th", { scope: "col", class: "r" }, "Price");
  const amountHead = h("th", { scope: "col", class: "r" }, "Amount");
  const olderButton = h(
    "button",
    { type: "button", class: "button", "data-testid": "load-older", onclick: () => void loadOlder() },
    "Load older",
  );
  const olderStatus = h("span", { class: "muted", role: "status" });
  const element = h(
    "section",
    { class: "card trades-card", "aria-labelledby": "trades-title" },
    h("div", { class: "card-head" }, h("h2", { id: "trades-title" }, "Trades"), pairEl),
    status,
    h(
      "div",
      { class: "table-wrap", role: "region", "aria-labelledby": "trades-title", tabindex: 0 },
      h(
        "table",
        { class: "table trades", "data-testid": "trades" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Time (UTC)"),
            h("th", { scope: "col" }, "Side"),
            priceHead,
            amountHead,
            h("th", { scope: "col", class: "r" }, "Value"),
            h("th", { scope: "col", class: "opt" }, "Maker"),
            h("th", { scope: "col", class: "opt" }, "Tx"),
          ),
        ),
        body,
      ),
    ),
    h("div", { class: "card-foot" }, olderButton, olderStatus),
  );
  olderButton.hidden = true;
  const setState = (state: CardState, message = "") => setCardState(element, status, state, message);

  const row = (trade: Trade, fresh: boolean) => {
    const { amount } = tradeAmounts(trade, selection.side);
    const buy = trade.side === "buy";
    return h(
      "tr",
      {
        class: `${trade.side}${fresh ? " is-new" : ""}`,
        "data-trade-id": tradeKey(trade),
        "data-side": trade.side,
      },
      h("td", { class: "num" }, h("time", { datetime: trade.date }, formatTradeTime(trade.date))),
      h(
        "td",
        {},
        h(
          "span",
          { class: `side-badge ${trade.side}` },
          h("span", { "aria-hidden": "true" }, buy ? "▲ " : "▼ "),
          buy ? "Buy" : "Sell",
        ),
      ),
      h("td", { class: "r num" }, formatPrice(trade.price)),
      h("td", { class: "r num" }, formatAmount(amount)),
      h("td", { class: "r num" }, formatUsd(trade.volume)),
      h(
        "td",
        { class: "opt" },
        trade.maker
          ? externalLink(
              context.explorer?.address(trade.maker),
              trade.maker,
              h("code", {}, shortHex(trade.maker)),
            )
          : missing,
      ),
      h(
        "td",
        { class: "opt" },
        externalLink(context.explorer?.tx(trade.hash), trade.hash, h("code", {}, shortHex(trade.hash))),
      ),
    );
  };

  const updateOlderButton = () => {
    olderButton.hidden = cursor === undefined;
    olderButton.disabled = false;
  };

  const loadOlder = async () => {
    const { pair, side } = selection;
    if (!pair || cursor === undefined) return;
    const n = ++seq.older;
    olderButton.disabled = true;
    replace(olderStatus, "Loading older trades…");
    try {
      const page = await api.trades(
        { assetId: sideInfo(pair, side).assetId, pairId: pair.pair_id, limit: tradesPageSize, cursor },
        signal,
      );
      if (n !== seq.older) return;
      const before = trades.length;
      trades = appendOlderTrades(trades, page.trades);
      body.append(...trades.slice(before).map((t) => row(t, false)));
      cursor = page.nextCursor;
      updateOlderButton();
      replace(olderStatus, cursor === undefined ? "No older trades." : `${trades.length} trades shown.`);
    } catch (error) {
      if (isAbort(error) || n !== seq.older) return;
      context.reportError(error);
      olderButton.disabled = false;
      replace(olderStatus, h("span", { class: "is-error", role: "alert" }, messageOf(error)));
    }
  };

  const refresh = async () => {
    const { pair, side } = selection;
    if (!pair) return;
    const key = `${pair.pair_id}|${side}`;
    if (key !== tradesKey) return;
    const n = seq.trades;
    const page = await api.trades(
      { assetId: sideInfo(pair, side).assetId, pairId: pair.pair_id, limit: tradesPollSize },
      signal,
    );
    if (n !== seq.trades || key !== tradesKey) return;
    const merged = mergeNewTrades(trades, page.trades);
    trades = merged.trades;
    if (merged.reset) {
      seq.older++;
      cursor = page.nextCursor;
      replace(body, ...trades.map((t) => row(t, false)));
      updateOlderButton();
    } else if (merged.added.length) {
      body.prepend(...merged.added.map((t) => row(t, true)));
    }
    if (trades.length) setState("ready");
  };

  return {
    element,
    setState,
    renderHead() {
      const { pair, side } = selection;
      if (!pair) return;
      const { symbol, quoteSymbol } = sideInfo(pair, side);
      replace(pairEl, `${pairName(pair)} · ${poolVenue(pair)}`);
      pairEl.title = poolVenueTitle(pair);
      replace(priceHead, `Price (${quoteSymbol})`);
      replace(amountHead, `Amount (${symbol})`);
    },
    async load() {
      const { pair, side } = selection;
      if (!pair) return;
      const key = `${pair.pair_id}|${side}`;
      const n = ++seq.trades;
      seq.older++;
      loading = true;
      setState("loading", "Loading trades…");
      try {
        const page = await api.trades(
          { assetId: sideInfo(pair, side).assetId, pairId: pair.pair_id, limit: tradesFirstPage },
          signal,
        );
        if (n !== seq.trades) return;
        trades = page.trades;
        tradesKey = key;
        cursor = page.nextCursor;
        replace(body, ...trades.map((t) => row(t, false)));
        updateOlderButton();
        replace(olderStatus);
        if (trades.length === 0) setState("empty", "No trades in this pair yet.");
        else setState("ready");
        loading = false;
        if (catchUpAfterLoad) {
          catchUpAfterLoad = false;
          void refresh().catch(context.reportError);
        }
      } catch (error) {
        if (isAbort(error) || n !== seq.trades) return;
        loading = false;
        context.reportError(error);
        trades = [];
        tradesKey = key;
        cursor = undefined;
        replace(body);
        updateOlderButton();
        setState("error", messageOf(error));
      }
    },
    refresh,
    catchUp() {
      if (loading) catchUpAfterLoad = true;
      else void refresh().catch(context.reportError);
    },
    push(trade) {
      const { pair, side } = selection;
      if (!pair || trade.pair_id !== pair.pair_id || `${pair.pair_id}|${side}` !== tradesKey || loading)
        return;
      const next = insertPushedTrade(trades, trade);
      if (next.index === -1) return;
      // A trade older than every row while older pages exist belongs to those pages.
      if (next.index === trades.length && cursor !== undefined) return;
      trades = next.trades;
      body.insertBefore(row(trade, true), body.children[next.index] ?? null);
      setState("ready");
    },
    redraw() {
      replace(body, ...trades.map((t) => row(t, false)));
    },
  };
}
