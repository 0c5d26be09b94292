// The token page: price and facts, candlestick chart of a pair, hourly USD line, pairs and
// trades, kept live by polling while the tab is visible. Each card is a module of token-page/;
// this one lays them out, keeps the choice of pair and side, and polls.

import type { ApiClient } from "./api.js";
import { h, replace } from "./dom.js";
import { choosePair, chooseSide, pairVenues } from "./market.js";
import { createPoller, type Poller } from "./poller.js";
import type { TokenRoute } from "./route.js";
import { createCandleCard } from "./token-page/candle-card.js";
import { createPageContext } from "./token-page/context.js";
import { createHeaderCard } from "./token-page/header-card.js";
import { createLineCard } from "./token-page/line-card.js";
import { createPairsCard } from "./token-page/pairs-card.js";
import { createTradesCard } from "./token-page/trades-card.js";

/** Live refresh period: the demo chain makes a block every ~2 s. */
export const pollIntervalMs = 3000;
/** Pairs and the hourly line change slowly: refreshed every this many polls. */
const pairsEveryPolls = 10;
const lineEveryPolls = 20;

export type TokenPage = {
  readonly tokenId: string;
  /** Applies a new route of the same token (pair, side, interval, days). */
  update(route: TokenRoute): void;
  destroy(): void;
};

type Deps = {
  root: HTMLElement;
  api: ApiClient;
  /** Records a changed choice in the URL (without a history entry) and applies it. */
  navigate: (route: TokenRoute) => void;
  onAuthError: (message: string) => void;
};

export function createTokenPage(initial: TokenRoute, deps: Deps): TokenPage {
  const controller = new AbortController();
  const context = createPageContext({
    api: deps.api,
    signal: controller.signal,
    route: initial,
    navigate: deps.navigate,
    onAuthError: deps.onAuthError,
  });
  const { selection } = context;

  const header = createHeaderCard(context);
  const candles = createCandleCard(context);
  const line = createLineCard(context);
  const trades = createTradesCard(context);
  const pairs = createPairsCard(context, {
    listed: () => renderPairs(),
    empty() {
      candles.setState("empty", "No pair to chart.");
      trades.setState("empty", "No pair, no trades.");
    },
    async loaded() {
      if (choose()) await Promise.all([candles.load(), trades.load()]);
    },
    failed(message) {
      if (selection.pair) return;
      candles.setState("error", message);
      trades.setState("error", message);
    },
  });

  /** The pairs' table and the pair choice of the chart. */
  function renderPairs() {
    const venues = pairVenues(pairs.pairs);
    pairs.render(venues);
    candles.setPairs(pairs.pairs, venues);
  }

  /** Picks the pair and side from the route; returns true when they changed. */
  function choose(): boolean {
    const before = `${selection.pair?.pair_id}|${selection.side}`;
    selection.pair = choosePair(pairs.pairs, selection.route.pairId);
    if (selection.pair) selection.side = chooseSide(selection.pair, context.tokenId, selection.route.side);
    const changed = `${selection.pair?.pair_id}|${selection.side}` !== before;
    if (changed) {
      candles.renderSide();
      renderPairs();
      trades.renderHead();
    }
    return changed;
  }

  replace(
    deps.root,
    h(
      "div",
      { class: "token-page" },
      header.element,
      h("div", { class: "col-main" }, candles.element, trades.element),
      h("div", { class: "col-side" }, line.element, pairs.element),
    ),
  );
  candles.setState("loading", "Loading pairs…");
  trades.setState("loading", "Loading trades…");

  let polls = 0;
  const poll = async () => {
    polls++;
    const previousBlock = header.block;
    await header.load();
    // Nothing new indexed since the last poll: candles and trades cannot have changed.
    const unchanged = previousBlock !== undefined && header.block === previousBlock;
    const work: Promise<unknown>[] = [];
    if (!unchanged) work.push(candles.refresh(), trades.refresh());
    if (polls % pairsEveryPolls === 0) work.push(pairs.load(true));
    if (polls % lineEveryPolls === 0) work.push(line.load(true));
    const results = await Promise.allSettled(work);
    for (const result of results) if (result.status === "rejected") context.reportError(result.reason);
  };

  // The logo (a search by address) waits for the requests the first chart needs.
  void Promise.all([header.load(), pairs.load(), line.load()]).then(header.loadLogo);
  const poller: Poller = createPoller({ intervalMs: pollIntervalMs, task: poll, doc: document });

  return {
    tokenId: context.tokenId,
    update(next) {
      const previous = selection.route;
      selection.route = next;
      candles.setInterval(next.interval);
      line.setDays(next.days);
      if (next.days !== previous.days) void line.load();
      const pairChanged = choose();
      if (pairChanged) {
        void candles.load();
        void trades.load();
      } else if (next.interval !== previous.interval) void candles.load();
    },
    destroy() {
      poller.stop();
      controller.abort();
      candles.destroy();
      line.destroy();
    },
  };
}
