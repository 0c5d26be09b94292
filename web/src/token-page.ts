// The token page: price and facts, market windows, candlestick chart of a pair, hourly USD line,
// pairs and trades. Each card is a module of token-page/; this one lays them out, keeps the choice
// of pair and side, and keeps the page current: trades, candles and the price arrive through the
// stream (stream.ts); polling takes over while the stream is down.

import type { ApiClient, Network, TokenMarket } from "./api.js";
import { h, replace } from "./dom.js";
import { choosePair, chooseSide, sideInfo, tokenIdOf } from "./market.js";
import { createPoller, type Poller } from "./poller.js";
import { pairVenues } from "./pool-label.js";
import type { TokenRoute } from "./route.js";
import { createStream, type Stream, streamUrl } from "./stream.js";
import { liveIndicator, type Subscription, subscriptionKey } from "./stream-state.js";
import { createCandleCard } from "./token-page/candle-card.js";
import { createPageContext, type Selection } from "./token-page/context.js";
import { createHeaderCard } from "./token-page/header-card.js";
import { createLineCard } from "./token-page/line-card.js";
import { createMarketCard } from "./token-page/market-card.js";
import { createPairsCard } from "./token-page/pairs-card.js";
import { createTradesCard } from "./token-page/trades-card.js";

/** Polling period while the stream is down: the demo chain makes a block every ~2 s. */
export const pollIntervalMs = 3000;
/** While the stream is live a poll only keeps the block, the market windows and the slow cards current. */
export const livePollIntervalMs = 15_000;
/** The slow cards: market windows, pairs and the hourly line, refreshed at most this often. */
const marketEveryMs = 15_000;
const pairsEveryMs = 30_000;
const lineEveryMs = 60_000;

export type TokenPage = {
  readonly tokenId: string;
  /** Applies a new route of the same token (pair, side, interval, days). */
  update(route: TokenRoute): void;
  destroy(): void;
};

type Deps = {
  root: HTMLElement;
  api: ApiClient;
  /** The API key, for the stream's first message. */
  getKey: () => string;
  /** The configured networks (names, block explorers); [] when they cannot be loaded. */
  networks: Promise<readonly Network[]>;
  logoHosts: readonly string[];
  /** Records a changed choice in the URL (without a history entry) and applies it. */
  navigate: (route: TokenRoute) => void;
  onAuthError: (message: string) => void;
};

type PageSubscriptions = {
  trades?: Extract<Subscription, { channel: "trades" }>;
  candles?: Extract<Subscription, { channel: "candles" }>;
};

/** The trades and candles subscriptions of the pair, side and interval on screen (none without a pair). */
function wantedSubscriptions({ pair, side, route }: Selection): PageSubscriptions {
  if (!pair) return {};
  const assetId = sideInfo(pair, side).assetId;
  return {
    trades: { channel: "trades", pair_id: pair.pair_id, asset_id: assetId },
    candles: { channel: "candles", pair_id: pair.pair_id, asset_id: assetId, interval: route.interval },
  };
}

export function createTokenPage(initial: TokenRoute, deps: Deps): TokenPage {
  const controller = new AbortController();
  const context = createPageContext({
    api: deps.api,
    signal: controller.signal,
    route: initial,
    navigate: deps.navigate,
    onAuthError: deps.onAuthError,
    logoHosts: deps.logoHosts,
  });
  const { selection } = context;

  const header = createHeaderCard(context);
  /** The market records of the token and its pairs' bases: every USD change the page shows. */
  let markets: ReadonlyMap<string, TokenMarket> = new Map();
  const baseIds = () => [...new Set(pairs.pairs.map((p) => tokenIdOf(p.base_address, p.chain)))];
  const market = createMarketCard(context, {
    others: baseIds,
    loaded(found) {
      markets = found;
      header.setChange(found.get(context.tokenId)?.windows["24h"].price_change);
      renderPairs();
    },
  });
  const candles = createCandleCard(context);
  const line = createLineCard(context);
  const trades = createTradesCard(context);
  const pairs = createPairsCard(context, {
    listed() {
      renderPairs();
      // A base the last market records lack (the first pairs, a new pool): fetch them again.
      if (baseIds().some((id) => !markets.has(id))) void market.load(true);
    },
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
    pairs.render(venues, markets);
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
    subscribe();
    return changed;
  }

  replace(
    deps.root,
    h(
      "div",
      { class: "token-page" },
      header.element,
      h("div", { class: "col-main" }, candles.element, trades.element),
      h("div", { class: "col-side" }, market.element, line.element, pairs.element),
    ),
  );
  candles.setState("loading", "Loading pairs…");
  trades.setState("loading", "Loading trades…");

  // ---- Live: the stream, and what it is subscribed to ----

  /** The subscriptions of what is on screen, by channel. */
  const current: PageSubscriptions = {};
  /**
   * Trades are taken from the stream only once their subscription is acknowledged: pushes of the
   * previous pair or side that were on their way before the unsubscribe arrive before that.
   */
  let tradesAcked = false;
  let wasLive = false;
  /** False after the server refused a subscription (a 400, a limit): those cards poll instead. */
  let subscriptionsOk = true;
  /** Trades and candles come through the stream: polling rests. */
  const streaming = () => stream.isLive() && subscriptionsOk;

  const stream: Stream = createStream({
    url: streamUrl(location),
    getKey: deps.getKey,
    doc: document,
    handlers: {
      onPush(message) {
        switch (message.type) {
          case "trade":
            if (!tradesAcked) break;
            // A push of the other side of the same pair (a switch still on its way) is not ours.
            if (message.asset_id && message.asset_id.toLowerCase() !== current.trades?.asset_id) break;
            trades.push(message.data);
            break;
          case "candle":
            candles.push(message.data, {
              pairId: message.pair_id,
              assetId: message.asset_id,
              interval: message.interval,
            });
            break;
          case "price":
            header.setPrice(message.data);
            break;
          case "rollback":
            // Blocks were undone: what is shown after them may be gone. Reload from the API.
            if (String(message.chain) === context.chain) void Promise.all([candles.load(), trades.load()]);
            break;
        }
      },
      onSubscribed(subscription) {
        // Pushes follow from here; what was indexed between the last fetch and now is fetched once.
        const key = subscriptionKey(subscription);
        if (current.trades && key === subscriptionKey(current.trades)) {
          tradesAcked = true;
          trades.catchUp();
        } else if (current.candles && key === subscriptionKey(current.candles)) candles.catchUp();
      },
      onError(status, message) {
        // A refused key also fails the page's requests, which show the API's message.
        if (status === 401 || status === 403) return;
        // A refused subscription (or a limit): trades and candles go back to polling.
        subscriptionsOk = false;
        header.setLive({
          mode: "polling",
          text: "Polling",
          title: `The stream refused a subscription (${message}); polling every ${pollIntervalMs / 1000} s`,
        });
        poller.poke();
      },
      onState(state) {
        if (subscriptionsOk || state.phase !== "live") header.setLive(liveIndicator(state, pollIntervalMs));
        const live = state.phase === "live";
        // The stream went down: poll at once rather than after the slow live period.
        if (wasLive && !live) poller.poke();
        wasLive = live;
      },
    },
  });
  stream.subscribe({ channel: "prices", asset_ids: context.tokenId });

  /** Moves the trades and candles subscriptions to the pair, side and interval on screen. */
  function subscribe() {
    const wanted = wantedSubscriptions(selection);
    for (const channel of ["trades", "candles"] as const) {
      const before = current[channel];
      const after = wanted[channel];
      if (before && after && subscriptionKey(before) === subscriptionKey(after)) continue;
      if (before) stream.unsubscribe(before);
      if (channel === "trades") tradesAcked = false;
      if (after) stream.subscribe(after);
      if (channel === "trades") current.trades = wanted.trades;
      else current.candles = wanted.candles;
      // New subscriptions: given the chance, the stream carries them again.
      if (!subscriptionsOk) {
        subscriptionsOk = true;
        header.setLive(liveIndicator(stream.state, pollIntervalMs));
      }
    }
  }

  // ---- Polling: the slow cards always, trades and candles while the stream is down ----

  const lastAt = { market: 0, pairs: 0, line: 0 };
  const due = (what: keyof typeof lastAt, everyMs: number) => {
    const now = Date.now();
    if (now - lastAt[what] < everyMs) return false;
    lastAt[what] = now;
    return true;
  };
  const poll = async () => {
    const live = streaming();
    const previousBlock = header.block;
    await header.load();
    const work: Promise<unknown>[] = [];
    // Without the stream: nothing new indexed since the last poll, candles and trades cannot have changed.
    if (!live && (previousBlock === undefined || header.block !== previousBlock)) {
      work.push(candles.refresh(), trades.refresh());
    }
    if (due("market", marketEveryMs)) work.push(market.load(true));
    if (due("pairs", pairsEveryMs)) work.push(pairs.load(true));
    if (due("line", lineEveryMs)) work.push(line.load(true));
    const results = await Promise.allSettled(work);
    for (const result of results) if (result.status === "rejected") context.reportError(result.reason);
  };

  // The logo (a search by address) waits for the requests the first chart needs.
  lastAt.market = lastAt.pairs = lastAt.line = Date.now();
  void Promise.all([header.load(), pairs.load(), line.load(), market.load()]).then(header.loadLogo);
  void deps.networks.then((networks) => {
    if (controller.signal.aborted) return;
    context.setNetworks(networks);
    header.renderNetwork();
    if (context.explorer) trades.redraw();
  });
  const poller: Poller = createPoller({
    intervalMs: () => (streaming() ? livePollIntervalMs : pollIntervalMs),
    task: poll,
    doc: document,
  });

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
      stream.stop();
      controller.abort();
      candles.destroy();
      line.destroy();
    },
  };
}
