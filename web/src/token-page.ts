// The token page: price and facts, candlestick chart of a pair, hourly USD line, pairs and
// trades, kept live by polling while the tab is visible.

import {
  type ApiClient,
  ApiError,
  type Candle,
  type Freshness,
  type Pair,
  type TokenMetadata,
  type Trade,
} from "./api.js";
import { type CandleChart, createCandleChart, createLineChart, type UsdLineChart } from "./charts.js";
import { type CardState, radioGroup, setCardState } from "./controls.js";
import { h, replace } from "./dom.js";
import {
  chainName,
  formatAmount,
  formatChange,
  formatPrice,
  formatSupply,
  formatTradeTime,
  formatUsd,
  formatUsdCompact,
  missing,
  shortHex,
} from "./format.js";
import {
  appendOlderTrades,
  candleRange,
  choosePair,
  chooseSide,
  mergeCandles,
  mergeNewTrades,
  pairName,
  pairVenues,
  refreshFrom,
  sideInfo,
  sortPairs,
  symbolOr,
  tradeAmounts,
  tradeKey,
} from "./market.js";
import { createPoller, type Poller } from "./poller.js";
import { intervals, lineDays, type TokenRoute } from "./route.js";
import { tokenAvatar } from "./search.js";

/** Live refresh period: the demo chain makes a block every ~2 s. */
export const pollIntervalMs = 3000;
/** Trades of the first page (a trade record is ~0.9 KB of JSON) and of each "Load older". */
const tradesFirstPage = 25;
const tradesPageSize = 50;
/** A live poll asks for this many newest trades and merges them on top. */
const tradesPollSize = 20;
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

let firstChartMarked = false;

/** Marks the first time candles are on screen, for the browser test's time-to-first-chart. */
function markFirstChart(): void {
  if (firstChartMarked) return;
  firstChartMarked = true;
  requestAnimationFrame(() => performance.mark("tokenmarket:first-chart"));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const isAbort = (error: unknown) => (error as Error | undefined)?.name === "AbortError";

export function createTokenPage(initial: TokenRoute, deps: Deps): TokenPage {
  const { api } = deps;
  let route = initial;
  const tokenId = initial.tokenId;
  const [tokenAddress = "", chain = ""] = tokenId.split(":");

  let meta: TokenMetadata | undefined;
  let freshness: Freshness | undefined;
  let pairs: Pair[] = [];
  let pair: Pair | undefined;
  let side: 0 | 1 = 0;
  let bars: Candle[] = [];
  /** What the bars on screen are of: `pair|side|interval`; refreshes of another key are dropped. */
  let barsKey = "";
  let trades: Trade[] = [];
  let tradesKey = "";
  let cursor: string | undefined;
  let polls = 0;
  const controller = new AbortController();
  const signal = controller.signal;
  const seq = { meta: 0, pairs: 0, candles: 0, trades: 0, line: 0, older: 0 };

  const reportError = (error: unknown) => {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      deps.onAuthError(error.message);
    }
  };

  // ---- Header: name, price, change, facts -------------------------------------------------
  const avatarSlot = h("span", { class: "avatar-slot" }, tokenAvatar("?", null, "l"));
  const title = h("h1", { id: "token-title", class: "token-title" }, "Loading token…");
  const symbolEl = h("span", { class: "token-symbol" });
  const priceEl = h("p", { class: "token-price num", "data-testid": "token-price", "aria-live": "off" }, "—");
  const changeEl = h("span", { class: "change flat num" }, "—");
  const decimalsEl = h("dd", { class: "num" }, "—");
  const supplyEl = h("dd", { class: "num" }, "—");
  const liveEl = h("dd", { class: "live", "data-testid": "live" }, "—");
  const headStatus = h("p", { class: "card-status", hidden: true });
  const head = h(
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
        h(
          "p",
          { class: "token-sub" },
          h("span", { class: "chip" }, chainName(chain)),
          h("code", { class: "address", title: tokenAddress }, shortHex(tokenAddress, 8, 6)),
        ),
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
    headStatus,
  );

  const renderMeta = () => {
    if (!meta) return;
    const symbol = symbolOr(meta.symbol, tokenAddress);
    replace(title, meta.name ?? symbol);
    replace(symbolEl, meta.name ? symbol : "");
    document.title = `${symbol} ${formatUsd(meta.usd_price)} · tokenmarket`;
    replace(priceEl, formatUsd(meta.usd_price));
    const change = formatChange(meta.price_change);
    replace(changeEl, change.text);
    changeEl.className = `change ${change.direction} num`;
    replace(decimalsEl, meta.decimals === null ? missing : String(meta.decimals));
    replace(supplyEl, formatSupply(meta.total_supply), meta.total_supply === null ? "" : ` ${symbol}`);
    if (freshness?.block !== undefined) {
      const at = freshness.at ? ` · ${formatTradeTime(freshness.at)} UTC` : "";
      replace(
        liveEl,
        h("span", { class: "live-dot", "aria-hidden": "true" }),
        `Block ${freshness.block}${at}`,
      );
    }
  };

  const loadMeta = async () => {
    const n = ++seq.meta;
    try {
      const answer = await api.metadata(tokenId, signal);
      if (n !== seq.meta) return;
      meta = answer.token;
      freshness = answer.freshness;
      setCardState(head, headStatus, "ready");
      renderMeta();
    } catch (error) {
      if (isAbort(error) || n !== seq.meta) return;
      reportError(error);
      if (!meta) replace(title, "Token unavailable");
      setCardState(head, headStatus, "error", messageOf(error));
    }
  };

  /** The logo and name come with search results (project_info), which metadata does not carry. */
  const loadLogo = async () => {
    try {
      const found = await api.search(tokenAddress, signal);
      const token = found.find((t) => `${t.contract.toLowerCase()}:${t.chain}` === tokenId);
      const symbol = symbolOr(token?.symbol ?? meta?.symbol, tokenAddress);
      replace(avatarSlot, tokenAvatar(symbol, token?.project_info?.logo_url, "l"));
    } catch {
      replace(avatarSlot, tokenAvatar(symbolOr(meta?.symbol, tokenAddress), null, "l"));
    }
  };

  // ---- Candlestick chart ---------------------------------------------------------------------
  const pairSelect = h("select", {
    id: "pair-select",
    class: "select",
    onchange: () => deps.navigate({ ...route, pairId: pairSelect.value, side: undefined }),
  });
  const sideSlot = h("div", { class: "side-slot" });
  const intervalGroup = radioGroup({
    legend: "Interval",
    name: "interval",
    choices: intervals.map((value) => ({ value, label: value })),
    selected: route.interval,
    onChange: (interval) => deps.navigate({ ...route, interval }),
  });
  const legend = h("p", { class: "chart-legend num", "aria-live": "off" });
  const candleBox = h("div", {
    class: "chart",
    id: "candle-chart",
    "data-testid": "candle-chart",
    role: "img",
    "aria-label": "Candlestick chart",
  });
  const candleStatus = h("p", { class: "card-status" });
  const candleTitle = h("h2", { id: "candles-title" }, "Price chart");
  const candleCard = h(
    "section",
    { class: "card candles-card", "aria-labelledby": "candles-title" },
    h("div", { class: "card-head" }, candleTitle),
    h(
      "div",
      { class: "toolbar" },
      h("label", { class: "field" }, h("span", { class: "field-label" }, "Pair"), pairSelect),
      sideSlot,
      intervalGroup.element,
    ),
    legend,
    h("div", { class: "chart-wrap" }, candleBox, candleStatus),
  );
  let candleChart: CandleChart | undefined;

  const showLegend = (candle: Candle | undefined) => {
    const shown = candle ?? bars[bars.length - 1];
    if (!shown || !pair) {
      replace(legend);
      return;
    }
    const { symbol, quoteSymbol } = sideInfo(pair, side);
    const up = shown.close >= shown.open;
    replace(
      legend,
      h("span", { class: "legend-pair" }, `${symbol}/${quoteSymbol} · ${route.interval}`),
      ...(
        [
          ["O", formatPrice(shown.open)],
          ["H", formatPrice(shown.high)],
          ["L", formatPrice(shown.low)],
          ["C", formatPrice(shown.close)],
          ["V", formatAmount(shown.volume)],
        ] as const
      ).map(([k, v]) => h("span", {}, `${k} `, h("b", { class: up ? "up" : "down" }, v))),
      h(
        "span",
        { class: "muted" },
        `${new Date(shown.time).toISOString().slice(0, 16).replace("T", " ")} UTC`,
      ),
    );
  };

  const setCandleState = (state: CardState, message = "") => {
    setCardState(candleCard, candleStatus, state, message);
    candleBox.dataset.state = state;
  };

  const loadCandles = async () => {
    if (!pair) return;
    const key = `${pair.pair_id}|${side}|${route.interval}`;
    const n = ++seq.candles;
    const { assetId, symbol, quoteSymbol } = sideInfo(pair, side);
    const interval = route.interval;
    setCandleState("loading", `Loading ${symbol}/${quoteSymbol} candles…`);
    try {
      const range = candleRange(interval, Date.now());
      const list = await api.candles({ assetId, pairId: pair.pair_id, interval, ...range }, signal);
      if (n !== seq.candles) return;
      bars = list;
      barsKey = key;
      candleChart ??= createCandleChart(candleBox, showLegend);
      candleChart.setCandles(bars);
      Object.assign(candleBox.dataset, {
        bars: String(bars.length),
        interval,
        pair: pair.pair_id,
        asset: assetId,
      });
      candleBox.setAttribute(
        "aria-label",
        `Candlestick chart of ${symbol} in ${quoteSymbol}, ${interval} candles, ${bars.length} bars`,
      );
      showLegend(undefined);
      if (bars.length === 0) setCandleState("empty", `No trades of ${symbol}/${quoteSymbol} in this range.`);
      else {
        setCandleState("ready");
        markFirstChart();
      }
    } catch (error) {
      if (isAbort(error) || n !== seq.candles) return;
      bars = [];
      barsKey = key;
      candleChart?.setCandles([]);
      candleBox.dataset.bars = "0";
      candleBox.dataset.interval = interval;
      showLegend(undefined);
      reportError(error);
      if (error instanceof ApiError && error.status === 404) {
        setCandleState("empty", `No trades of ${symbol}/${quoteSymbol} in this range (${error.message}).`);
      } else setCandleState("error", messageOf(error));
    }
  };

  /** A live refresh: re-reads the last bar and any newer ones. */
  const refreshCandles = async () => {
    if (!pair) return;
    const key = `${pair.pair_id}|${side}|${route.interval}`;
    if (key !== barsKey || bars.length === 0) {
      if (candleCard.dataset.state !== "loading") await loadCandles();
      return;
    }
    const n = seq.candles;
    const now = Date.now();
    const list = await api.candles(
      {
        assetId: sideInfo(pair, side).assetId,
        pairId: pair.pair_id,
        interval: route.interval,
        from: refreshFrom(bars, route.interval, now),
        to: new Date(now),
      },
      signal,
    );
    if (n !== seq.candles || key !== barsKey) return;
    const merged = mergeCandles(bars, list);
    bars = merged.bars;
    if (merged.updates.length) candleChart?.updateCandles(merged.updates);
    candleBox.dataset.bars = String(bars.length);
    showLegend(undefined);
  };

  // ---- Hourly USD line -------------------------------------------------------------------------
  const daysGroup = radioGroup({
    legend: "Range",
    name: "days",
    choices: lineDays.map((value) => ({ value, label: `${value}D`, title: `${value} days` })),
    selected: route.days,
    onChange: (days) => deps.navigate({ ...route, days }),
  });
  const lineBox = h("div", {
    class: "chart chart-line",
    id: "line-chart",
    "data-testid": "line-chart",
    role: "img",
    "aria-label": "USD price line chart",
  });
  const lineStatus = h("p", { class: "card-status" });
  const lineCard = h(
    "section",
    { class: "card line-card", "aria-labelledby": "line-title" },
    h(
      "div",
      { class: "card-head" },
      h("h2", { id: "line-title" }, "USD price, hourly average"),
      daysGroup.element,
    ),
    h("div", { class: "chart-wrap" }, lineBox, lineStatus),
  );
  let lineChart: UsdLineChart | undefined;

  const loadLine = async (quiet = false) => {
    const n = ++seq.line;
    const days = route.days;
    if (!quiet) setCardState(lineCard, lineStatus, "loading", "Loading USD prices…");
    try {
      const line = await api.lineChart(tokenId, days, signal);
      if (n !== seq.line) return;
      lineChart ??= createLineChart(lineBox);
      lineChart.setLine(line);
      lineBox.dataset.points = String(line.data.length);
      lineBox.dataset.days = String(days);
      lineBox.setAttribute(
        "aria-label",
        `USD price, hourly average over ${days} days, ${line.data.length} points`,
      );
      if (line.data.length === 0) setCardState(lineCard, lineStatus, "empty", "No USD prices in this range.");
      else setCardState(lineCard, lineStatus, "ready");
    } catch (error) {
      if (isAbort(error) || n !== seq.line) return;
      reportError(error);
      lineChart?.setLine({ labels: [], data: [] });
      lineBox.dataset.points = "0";
      if (error instanceof ApiError && error.status === 404) {
        setCardState(
          lineCard,
          lineStatus,
          "empty",
          `No USD prices in the last ${days} days (${error.message}).`,
        );
      } else setCardState(lineCard, lineStatus, "error", messageOf(error));
    }
  };

  // ---- Pairs -----------------------------------------------------------------------------------
  const pairsBody = h("tbody");
  const pairsStatus = h("p", { class: "card-status" });
  const pairsCard = h(
    "section",
    { class: "card pairs-card", "aria-labelledby": "pairs-title" },
    h(
      "div",
      { class: "card-head" },
      h("h2", { id: "pairs-title" }, "Pairs"),
      h("span", { class: "muted" }, "by 24\u00a0h volume"),
    ),
    pairsStatus,
    h(
      "div",
      { class: "table-wrap", role: "region", "aria-labelledby": "pairs-title", tabindex: 0 },
      h(
        "table",
        { class: "table", "data-testid": "pairs" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Pair · DEX"),
            h("th", { scope: "col", class: "r" }, "Liquidity"),
            h("th", { scope: "col", class: "r" }, "Volume 24\u00a0h"),
            h("th", { scope: "col", class: "r" }, "Change"),
          ),
        ),
        pairsBody,
      ),
    ),
  );

  const renderPairs = () => {
    const venues = pairVenues(pairs);
    replace(
      pairsBody,
      ...pairs.map((p) => {
        const selected = p.pair_id === pair?.pair_id;
        const change = formatChange(p.change);
        return h(
          "tr",
          { class: selected ? "is-selected" : "", "data-pair-id": p.pair_id },
          h(
            "th",
            { scope: "row" },
            h(
              "button",
              {
                type: "button",
                class: "link",
                "aria-current": selected ? "true" : null,
                title: `Chart ${pairName(p)}`,
                onclick: () => deps.navigate({ ...route, pairId: p.pair_id, side: undefined }),
              },
              pairName(p),
            ),
            h("span", { class: "cell-sub" }, venues.get(p.pair_id)),
          ),
          h("td", { class: "r num" }, formatUsdCompact(p.liquidity_value)),
          h("td", { class: "r num" }, formatUsdCompact(p.volume)),
          h("td", { class: `r num change ${change.direction}` }, change.text),
        );
      }),
    );
    replace(
      pairSelect,
      ...pairs.map((p) =>
        h(
          "option",
          { value: p.pair_id, selected: p.pair_id === pair?.pair_id },
          `${pairName(p)} · ${venues.get(p.pair_id)}`,
        ),
      ),
    );
    pairSelect.disabled = pairs.length === 0;
  };

  const renderSide = () => {
    if (!pair) {
      replace(sideSlot);
      return;
    }
    const a = sideInfo(pair, 0);
    const b = sideInfo(pair, 1);
    const group = radioGroup<0 | 1>({
      legend: "Price of",
      name: "side",
      choices: [
        { value: 0, label: `${a.symbol} in ${a.quoteSymbol}` },
        { value: 1, label: `${b.symbol} in ${b.quoteSymbol}` },
      ],
      selected: side,
      onChange: (value) => deps.navigate({ ...route, side: value }),
    });
    replace(sideSlot, group.element);
  };

  /** Picks the pair and side from the route; returns true when they changed. */
  const choose = (): boolean => {
    const before = `${pair?.pair_id}|${side}`;
    pair = choosePair(pairs, route.pairId);
    if (pair) side = chooseSide(pair, tokenId, route.side);
    const changed = `${pair?.pair_id}|${side}` !== before;
    if (changed) {
      renderSide();
      renderPairs();
      renderTradesHead();
    }
    return changed;
  };

  const loadPairs = async (quiet = false) => {
    const n = ++seq.pairs;
    if (!quiet) setCardState(pairsCard, pairsStatus, "loading", "Loading pairs…");
    try {
      const list = await api.pairs(tokenId, signal);
      if (n !== seq.pairs) return;
      pairs = sortPairs(list);
      renderPairs();
      if (pairs.length === 0) {
        setCardState(pairsCard, pairsStatus, "empty", "No pairs contain this token yet.");
        setCandleState("empty", "No pair to chart.");
        setCardState(tradesCard, tradesStatus, "empty", "No pair, no trades.");
      } else setCardState(pairsCard, pairsStatus, "ready");
      if (choose()) {
        await Promise.all([loadCandles(), loadTrades()]);
      }
    } catch (error) {
      if (isAbort(error) || n !== seq.pairs) return;
      reportError(error);
      if (!quiet || pairs.length === 0) {
        const message = messageOf(error);
        setCardState(pairsCard, pairsStatus, "error", message);
        if (!pair) {
          setCandleState("error", message);
          setCardState(tradesCard, tradesStatus, "error", message);
        }
      }
    }
  };

  // ---- Trades ----------------------------------------------------------------------------------
  const tradesBody = h("tbody");
  const tradesStatus = h("p", { class: "card-status" });
  const tradesPairEl = h("span", { class: "muted" });
  const priceHead = h("th", { scope: "col", class: "r" }, "Price");
  const amountHead = h("th", { scope: "col", class: "r" }, "Amount");
  const olderButton = h(
    "button",
    { type: "button", class: "button", "data-testid": "load-older", onclick: () => void loadOlder() },
    "Load older",
  );
  const olderStatus = h("span", { class: "muted", role: "status" });
  const tradesCard = h(
    "section",
    { class: "card trades-card", "aria-labelledby": "trades-title" },
    h("div", { class: "card-head" }, h("h2", { id: "trades-title" }, "Trades"), tradesPairEl),
    tradesStatus,
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
        tradesBody,
      ),
    ),
    h("div", { class: "card-foot" }, olderButton, olderStatus),
  );

  function renderTradesHead() {
    if (!pair) return;
    const { symbol, quoteSymbol } = sideInfo(pair, side);
    replace(tradesPairEl, `${symbol}/${quoteSymbol} · ${pair.factory_name}`);
    replace(priceHead, `Price (${quoteSymbol})`);
    replace(amountHead, `Amount (${symbol})`);
  }

  const tradeRow = (trade: Trade, fresh: boolean) => {
    const { amount } = tradeAmounts(trade, side);
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
        trade.maker ? h("code", { title: trade.maker }, shortHex(trade.maker)) : missing,
      ),
      h("td", { class: "opt" }, h("code", { title: trade.hash }, shortHex(trade.hash))),
    );
  };

  const updateOlderButton = () => {
    olderButton.hidden = cursor === undefined;
    olderButton.disabled = false;
  };

  const loadTrades = async () => {
    if (!pair) return;
    const key = `${pair.pair_id}|${side}`;
    const n = ++seq.trades;
    seq.older++;
    setCardState(tradesCard, tradesStatus, "loading", "Loading trades…");
    try {
      const page = await api.trades(
        { assetId: sideInfo(pair, side).assetId, pairId: pair.pair_id, limit: tradesFirstPage },
        signal,
      );
      if (n !== seq.trades) return;
      trades = page.trades;
      tradesKey = key;
      cursor = page.nextCursor;
      replace(tradesBody, ...trades.map((t) => tradeRow(t, false)));
      updateOlderButton();
      replace(olderStatus);
      if (trades.length === 0) setCardState(tradesCard, tradesStatus, "empty", "No trades in this pair yet.");
      else setCardState(tradesCard, tradesStatus, "ready");
    } catch (error) {
      if (isAbort(error) || n !== seq.trades) return;
      reportError(error);
      trades = [];
      tradesKey = key;
      cursor = undefined;
      replace(tradesBody);
      updateOlderButton();
      setCardState(tradesCard, tradesStatus, "error", messageOf(error));
    }
  };

  const refreshTrades = async () => {
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
      replace(tradesBody, ...trades.map((t) => tradeRow(t, false)));
      updateOlderButton();
    } else if (merged.added.length) {
      tradesBody.prepend(...merged.added.map((t) => tradeRow(t, true)));
    }
    if (trades.length) setCardState(tradesCard, tradesStatus, "ready");
  };

  const loadOlder = async () => {
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
      tradesBody.append(...trades.slice(before).map((t) => tradeRow(t, false)));
      cursor = page.nextCursor;
      updateOlderButton();
      replace(olderStatus, cursor === undefined ? "No older trades." : `${trades.length} trades shown.`);
    } catch (error) {
      if (isAbort(error) || n !== seq.older) return;
      reportError(error);
      olderButton.disabled = false;
      replace(olderStatus, h("span", { class: "is-error", role: "alert" }, messageOf(error)));
    }
  };

  // ---- Layout, live polling ----------------------------------------------------------------
  replace(
    deps.root,
    h(
      "div",
      { class: "token-page" },
      head,
      h("div", { class: "col-main" }, candleCard, tradesCard),
      h("div", { class: "col-side" }, lineCard, pairsCard),
    ),
  );
  olderButton.hidden = true;
  pairSelect.disabled = true;
  setCandleState("loading", "Loading pairs…");
  setCardState(tradesCard, tradesStatus, "loading", "Loading trades…");

  const poll = async () => {
    polls++;
    const previousBlock = freshness?.block;
    await loadMeta();
    // Nothing new indexed since the last poll: candles and trades cannot have changed.
    const unchanged = previousBlock !== undefined && freshness?.block === previousBlock;
    const work: Promise<unknown>[] = [];
    if (!unchanged) work.push(refreshCandles(), refreshTrades());
    if (polls % pairsEveryPolls === 0) work.push(loadPairs(true));
    if (polls % lineEveryPolls === 0) work.push(loadLine(true));
    const results = await Promise.allSettled(work);
    for (const result of results) if (result.status === "rejected") reportError(result.reason);
  };

  // The logo (a search by address) waits for the requests the first chart needs.
  void Promise.all([loadMeta(), loadPairs(), loadLine()]).then(loadLogo);
  const poller: Poller = createPoller({ intervalMs: pollIntervalMs, task: poll, doc: document });

  return {
    tokenId,
    update(next) {
      const previous = route;
      route = next;
      intervalGroup.set(next.interval);
      daysGroup.set(next.days);
      if (next.days !== previous.days) void loadLine();
      const pairChanged = choose();
      if (pairChanged) {
        void loadCandles();
        void loadTrades();
      } else if (next.interval !== previous.interval) void loadCandles();
    },
    destroy() {
      poller.stop();
      controller.abort();
      candleChart?.destroy();
      lineChart?.destroy();
    },
  };
}
