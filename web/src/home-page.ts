// The home page: for each configured network, its top pools by volume, trending pools and new
// pools (/api/v1/pools/top), each row linking to its tokens' pages. The search box stays in the
// top bar. The lists are refreshed every 30 s while the tab is visible.

import type { ApiClient, Network, PoolSort, TokenMarket, TopPool } from "./api.js";
import { ApiError } from "./api.js";
import { setCardState } from "./controls.js";
import { h, replace } from "./dom.js";
import { chainName } from "./format.js";
import { createPoller, type Poller } from "./poller.js";
import {
  baseTokenIds,
  listedPools,
  networkSummary,
  type PoolList,
  type PoolRow,
  poolListSize,
  poolLists,
  poolRow,
} from "./pools.js";

/** The lists move with each block, but a home page is for browsing: 30 s is current enough. */
export const homeRefreshMs = 30_000;

export type HomePage = { destroy(): void };

type Deps = {
  root: HTMLElement;
  api: ApiClient;
  networks: Promise<readonly Network[]>;
  /** Puts a query into the search box (the "Try" chips). */
  search: (query: string) => void;
  onAuthError: (message: string) => void;
};

type ListView = { network: Network; list: PoolList; load(quiet: boolean): Promise<void> };

export function createHomePage(deps: Deps): HomePage {
  const controller = new AbortController();
  const { api } = deps;
  const signal = controller.signal;
  let views: ListView[] = [];

  const reportError = (error: unknown) => {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403))
      deps.onAuthError(error.message);
  };

  const tryToken = (query: string) =>
    h("button", { type: "button", class: "chip chip-button", onclick: () => deps.search(query) }, query);
  const networksSlot = h("div", { class: "networks" });
  const networksStatus = h("p", { class: "card-status" });
  replace(
    deps.root,
    h(
      "div",
      { class: "home-page" },
      h(
        "section",
        { class: "card home-intro", "aria-labelledby": "home-title" },
        h("h1", { id: "home-title" }, "Token prices, candles and trades from DEX swaps"),
        h(
          "p",
          { class: "muted" },
          "Search a token by name, symbol or contract address, or pick a pool below: USD prices, ",
          "market windows, candlestick charts and trades as they happen.",
        ),
        h(
          "p",
          { class: "try" },
          h("span", { class: "muted" }, "Try "),
          tryToken("WETH"),
          tryToken("USDC"),
          tryToken("WBTC"),
        ),
        networksStatus,
      ),
      networksSlot,
    ),
  );
  setCardState(networksStatus.parentElement as HTMLElement, networksStatus, "loading", "Loading networks…");

  /** One list's card (top, trending or new) of a network. */
  function listCard(network: Network, list: PoolList): { element: HTMLElement; view: ListView } {
    const titleId = `home-${list.id}-${network.chain}-title`;
    const body = h("tbody");
    const status = h("p", { class: "card-status" });
    const element = h(
      "section",
      {
        class: `card pool-list pool-list-${list.id}`,
        "aria-labelledby": titleId,
        "data-testid": `home-${list.id}`,
        "data-chain": network.chain,
      },
      h(
        "div",
        { class: "card-head" },
        h("h3", { id: titleId }, list.title),
        h("span", { class: "muted" }, list.subtitle),
      ),
      status,
      h(
        "div",
        { class: "table-wrap", role: "region", "aria-labelledby": titleId, tabindex: 0 },
        h(
          "table",
          { class: "table pools" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col", class: "rank" }, h("span", { class: "visually-hidden" }, "Rank"), "#"),
              h("th", { scope: "col" }, "Pool · DEX"),
              h(
                "th",
                { scope: "col", class: "r" },
                "Price",
                h("span", { class: "cell-sub" }, `change ${windowLabel(list.window)}`),
              ),
              h(
                "th",
                { scope: "col", class: "r" },
                `Volume ${windowLabel(list.window)}`,
                h("span", { class: "cell-sub" }, "liquidity"),
              ),
            ),
          ),
          body,
        ),
      ),
    );
    let seq = 0;
    const render = (pools: TopPool[], markets: ReadonlyMap<string, TokenMarket>) => {
      const now = Date.now();
      replace(body, ...pools.map((pool, i) => poolRowElement(poolRow(pool, list, now, markets), i, list)));
    };
    const load = async (quiet: boolean) => {
      const n = ++seq;
      if (!quiet) setCardState(element, status, "loading", "Loading pools…");
      try {
        const pools = listedPools(
          await api.poolsTop(
            { chain: network.chain, sort: list.sort as PoolSort, limit: poolListSize },
            signal,
          ),
          list,
        );
        // The bases' own USD changes; without them the rows still show, with dashes for the change.
        const markets = await api.tokenMarkets(baseTokenIds(pools), signal).catch((error: unknown) => {
          if ((error as Error).name === "AbortError") throw error;
          reportError(error);
          return new Map<string, TokenMarket>();
        });
        if (n !== seq) return;
        render(pools, markets);
        if (pools.length === 0) setCardState(element, status, "empty", emptyMessage(list));
        else setCardState(element, status, "ready");
      } catch (error) {
        if ((error as Error).name === "AbortError" || n !== seq) return;
        reportError(error);
        if (!quiet || body.childElementCount === 0) {
          replace(body);
          setCardState(element, status, "error", (error as Error).message);
        }
      }
    };
    return { element, view: { network, list, load } };
  }

  const renderNetworks = (networks: readonly Network[]) => {
    views = [];
    replace(
      networksSlot,
      ...networks.map((network) => {
        const titleId = `network-${network.chain}-title`;
        const cards = poolLists.map((list) => listCard(network, list));
        views.push(...cards.map((c) => c.view));
        return h(
          "section",
          { class: "network", "aria-labelledby": titleId, "data-chain": network.chain },
          h(
            "div",
            { class: "network-head" },
            h("h2", { id: titleId }, network.name || chainName(network.chain)),
            h(
              "span",
              { class: `chip ${network.ready ? "" : "chip-warn"}` },
              network.ready ? "indexed" : "catching up",
            ),
            h("span", { class: "muted num" }, networkSummary(network)),
          ),
          h("div", { class: "pool-lists" }, ...cards.map((c) => c.element)),
        );
      }),
    );
  };

  const intro = networksStatus.parentElement as HTMLElement;
  void deps.networks
    .then((networks) => {
      if (signal.aborted) return;
      if (networks.length === 0) {
        setCardState(intro, networksStatus, "empty", "No network is configured.");
        return;
      }
      setCardState(intro, networksStatus, "ready");
      renderNetworks(networks);
      void Promise.all(views.map((v) => v.load(false)));
    })
    .catch((error: unknown) => {
      if (signal.aborted) return;
      reportError(error);
      setCardState(intro, networksStatus, "error", `Cannot list the networks: ${(error as Error).message}`);
    });

  const poller: Poller = createPoller({
    intervalMs: homeRefreshMs,
    doc: document,
    task: async () => {
      await Promise.allSettled(views.map((v) => v.load(true)));
    },
  });

  return {
    destroy() {
      poller.stop();
      controller.abort();
    },
  };
}

/** A pool's row in a list, at position `i`. */
function poolRowElement(row: PoolRow, i: number, list: PoolList): HTMLElement {
  return h(
    "tr",
    { "data-pair-id": row.pairId, "data-protocol": row.protocol },
    // The position in the list as shown (trending leaves pools out of the API's ranking).
    h("td", { class: "rank num muted" }, String(i + 1)),
    h(
      "th",
      { scope: "row" },
      h(
        "span",
        { class: "pool-name" },
        h("a", { href: row.hrefs[0], class: "token-link" }, row.symbols[0]),
        "/",
        h("a", { href: row.hrefs[1], class: "token-link" }, row.symbols[1]),
      ),
      h("span", { class: "cell-sub venue", title: row.venueTitle }, row.venue),
    ),
    // Two lines per cell keep a list readable in a third of a desktop or on a phone.
    h(
      "td",
      {
        class: "r num",
        title: `${row.symbols[0]} in USD, and its USD change over ${windowLabel(list.window)}`,
      },
      row.price,
      h("span", { class: `cell-sub change ${row.change.direction}` }, row.change.text),
    ),
    h(
      "td",
      { class: "r num" },
      row.volume,
      h("span", { class: "cell-sub", title: "Liquidity" }, `liq. ${row.liquidity}`),
    ),
  );
}

/** `24 h`, `1 h`. */
function windowLabel(window: string): string {
  return window.replace(/^(\d+)([a-z])$/, "$1\u00a0$2");
}

function emptyMessage(list: PoolList): string {
  switch (list.sort) {
    case "trending":
      return "No pool is trending: none has an hour well above its daily average with enough liquidity.";
    case "new":
      return "No new pool with a trade yet.";
    default:
      return "No pool has traded yet.";
  }
}
