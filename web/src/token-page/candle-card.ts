// The candlestick card: pair, side and interval choices, the chart of the pair and its legend.

import { ApiError, type Candle, type Pair } from "../api.js";
import { type CandleChart, createCandleChart } from "../charts.js";
import { type CardState, radioGroup, setCardState } from "../controls.js";
import { h, replace } from "../dom.js";
import { formatAmount, formatPrice } from "../format.js";
import { candleRange, mergeCandles, pairName, refreshFrom, sideInfo } from "../market.js";
import { type Interval, intervals } from "../route.js";
import { isAbort, markFirstChart, messageOf, type PageContext } from "./context.js";

export type CandleCard = {
  element: HTMLElement;
  setState(state: CardState, message?: string): void;
  /** Fills the pair choice (`venues`: each pair's DEX line, as pairVenues gives it). */
  setPairs(pairs: readonly Pair[], venues: ReadonlyMap<string, string | undefined>): void;
  /** Redraws the side choice for the selected pair. */
  renderSide(): void;
  setInterval(interval: Interval): void;
  /** Loads the candles of the selected pair, side and interval. */
  load(): Promise<void>;
  /** A live refresh: re-reads the last bar and any newer ones. */
  refresh(): Promise<void>;
  /** A refresh now, or right after the candles when they are still loading (the stream's gap). */
  catchUp(): void;
  /** A candle pushed by the stream; taken when it is of the pair, side and interval on screen. */
  push(candle: Candle, of: { pairId: string; assetId: string; interval: string }): void;
  destroy(): void;
};

export function createCandleCard(context: PageContext): CandleCard {
  const { api, signal, selection } = context;
  let bars: Candle[] = [];
  /** What the bars on screen are of: `pair|side|interval`; refreshes of another key are dropped. */
  let barsKey = "";
  let seq = 0;
  let chart: CandleChart | undefined;
  let loading = false;
  let catchUpAfterLoad = false;

  const pairSelect = h("select", {
    id: "pair-select",
    class: "select",
    onchange: () => context.navigate({ ...selection.route, pairId: pairSelect.value, side: undefined }),
  });
  const sideSlot = h("div", { class: "side-slot" });
  const intervalGroup = radioGroup({
    legend: "Interval",
    name: "interval",
    choices: intervals.map((value) => ({ value, label: value })),
    selected: selection.route.interval,
    onChange: (interval) => context.navigate({ ...selection.route, interval }),
  });
  const legend = h("p", { class: "chart-legend num", "aria-live": "off" });
  const box = h("div", {
    class: "chart",
    id: "candle-chart",
    "data-testid": "candle-chart",
    role: "img",
    "aria-label": "Candlestick chart",
  });
  const status = h("p", { class: "card-status" });
  const element = h(
    "section",
    { class: "card candles-card", "aria-labelledby": "candles-title" },
    h("div", { class: "card-head" }, h("h2", { id: "candles-title" }, "Price chart")),
    h(
      "div",
      { class: "toolbar" },
      h("label", { class: "field" }, h("span", { class: "field-label" }, "Pair"), pairSelect),
      sideSlot,
      intervalGroup.element,
    ),
    legend,
    h("div", { class: "chart-wrap" }, box, status),
  );
  pairSelect.disabled = true;

  const showLegend = (candle: Candle | undefined) => {
    const shown = candle ?? bars[bars.length - 1];
    const { pair, side } = selection;
    if (!shown || !pair) {
      replace(legend);
      return;
    }
    const { symbol, quoteSymbol } = sideInfo(pair, side);
    const up = shown.close >= shown.open;
    replace(
      legend,
      h("span", { class: "legend-pair" }, `${symbol} in ${quoteSymbol} · ${selection.route.interval}`),
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

  const setState = (state: CardState, message = "") => {
    setCardState(element, status, state, message);
    box.dataset.state = state;
  };

  const load = async () => {
    const { pair, side } = selection;
    if (!pair) return;
    const key = `${pair.pair_id}|${side}|${selection.route.interval}`;
    const n = ++seq;
    const { assetId, symbol, quoteSymbol } = sideInfo(pair, side);
    const interval = selection.route.interval;
    loading = true;
    setState("loading", `Loading ${symbol} in ${quoteSymbol} candles…`);
    try {
      const range = candleRange(interval, Date.now());
      const list = await api.candles({ assetId, pairId: pair.pair_id, interval, ...range }, signal);
      if (n !== seq) return;
      bars = list;
      barsKey = key;
      chart ??= createCandleChart(box, showLegend);
      chart.setCandles(bars);
      Object.assign(box.dataset, {
        bars: String(bars.length),
        interval,
        pair: pair.pair_id,
        asset: assetId,
      });
      box.setAttribute(
        "aria-label",
        `Candlestick chart of ${symbol} in ${quoteSymbol}, ${interval} candles, ${bars.length} bars`,
      );
      showLegend(undefined);
      if (bars.length === 0) setState("empty", `No trades of ${symbol} in ${quoteSymbol} in this range.`);
      else {
        setState("ready");
        markFirstChart();
      }
      loading = false;
      if (catchUpAfterLoad) {
        catchUpAfterLoad = false;
        void refresh().catch(context.reportError);
      }
    } catch (error) {
      if (isAbort(error) || n !== seq) return;
      loading = false;
      bars = [];
      barsKey = key;
      chart?.setCandles([]);
      box.dataset.bars = "0";
      box.dataset.interval = interval;
      showLegend(undefined);
      context.reportError(error);
      if (error instanceof ApiError && error.status === 404) {
        setState("empty", `No trades of ${symbol} in ${quoteSymbol} in this range (${error.message}).`);
      } else setState("error", messageOf(error));
    }
  };

  const refresh = async () => {
    const { pair, side, route } = selection;
    if (!pair) return;
    const key = `${pair.pair_id}|${side}|${route.interval}`;
    if (key !== barsKey || bars.length === 0) {
      if (element.dataset.state !== "loading") await load();
      return;
    }
    const n = seq;
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
    if (n !== seq || key !== barsKey) return;
    const merged = mergeCandles(bars, list);
    bars = merged.bars;
    if (merged.updates.length) chart?.updateCandles(merged.updates);
    box.dataset.bars = String(bars.length);
    showLegend(undefined);
  };

  return {
    element,
    setState,
    setPairs(pairs, venues) {
      replace(
        pairSelect,
        ...pairs.map((p) =>
          h(
            "option",
            { value: p.pair_id, selected: p.pair_id === selection.pair?.pair_id },
            `${pairName(p)} · ${venues.get(p.pair_id)}`,
          ),
        ),
      );
      pairSelect.disabled = pairs.length === 0;
    },
    renderSide() {
      const { pair, side } = selection;
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
        onChange: (value) => context.navigate({ ...selection.route, side: value }),
      });
      replace(sideSlot, group.element);
    },
    setInterval(interval) {
      intervalGroup.set(interval);
    },
    load,
    refresh,
    catchUp() {
      if (loading) catchUpAfterLoad = true;
      else void refresh().catch(context.reportError);
    },
    push(candle, of) {
      const { pair, side, route } = selection;
      if (!pair || loading || bars.length === 0) return;
      const key = `${pair.pair_id}|${side}|${route.interval}`;
      if (key !== barsKey || of.pairId !== pair.pair_id || of.interval !== route.interval) return;
      if (of.assetId !== sideInfo(pair, side).assetId) return;
      const merged = mergeCandles(bars, [candle]);
      bars = merged.bars;
      if (merged.updates.length) chart?.updateCandles(merged.updates);
      box.dataset.bars = String(bars.length);
      box.dataset.pushed = String(Number(box.dataset.pushed ?? 0) + 1);
      showLegend(undefined);
    },
    destroy() {
      chart?.destroy();
    },
  };
}
