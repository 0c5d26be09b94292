// The two charts of the token page, on TradingView's lightweight-charts (canvas, no requests of
// its own): candles of a pair with a volume histogram, and the hourly USD line.

import {
  CandlestickSeries,
  ColorType,
  createChart,
  HistogramSeries,
  type IChartApi,
  type ISeriesApi,
  LineSeries,
  type MouseEventParams,
  type Time,
  type UTCTimestamp,
} from "lightweight-charts";
import type { Candle, LineChart } from "./api.js";
import { pricePrecision } from "./format.js";

const toSeconds = (ms: number) => Math.floor(ms / 1000) as UTCTimestamp;

type Palette = { text: string; grid: string; border: string; up: string; down: string; line: string };

/** Colours from the page's CSS custom properties, so that the charts follow the colour scheme. */
function palette(element: HTMLElement): Palette {
  const style = getComputedStyle(element);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read("--muted", "#5b6475"),
    grid: read("--grid", "#eef0f4"),
    border: read("--border", "#d9dde5"),
    up: read("--up", "#0f9d58"),
    down: read("--down", "#d93025"),
    line: read("--accent", "#2563eb"),
  };
}

function baseChart(container: HTMLElement, colors: Palette): IChartApi {
  return createChart(container, {
    autoSize: true,
    layout: {
      background: { type: ColorType.Solid, color: "transparent" },
      textColor: colors.text,
      fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
      // The logo injects a <style> element, which the page's CSP refuses; the footer carries the
      // attribution with its link to TradingView instead, as the library's licence notice asks.
      attributionLogo: false,
    },
    grid: { vertLines: { color: colors.grid }, horzLines: { color: colors.grid } },
    rightPriceScale: { borderColor: colors.border },
    timeScale: { borderColor: colors.border, timeVisible: true, secondsVisible: false },
    localization: { locale: "en-US" },
  });
}

function priceFormat(values: readonly number[]) {
  const sample = values.filter((v) => Number.isFinite(v) && v !== 0);
  const smallest = sample.length ? Math.min(...sample.map(Math.abs)) : 1;
  const precision = pricePrecision(smallest);
  return { type: "price" as const, precision, minMove: 10 ** -precision };
}

export type CandleChart = {
  /** Replaces all bars (a new pair, side or interval). */
  setCandles(candles: readonly Candle[]): void;
  /** Updates the last bar and appends newer ones (each at or after the last bar). */
  updateCandles(candles: readonly Candle[]): void;
  destroy(): void;
};

/** A candlestick chart with volume bars along the bottom; `onHover` gets the candle under the cursor. */
export function createCandleChart(
  container: HTMLElement,
  onHover: (candle: Candle | undefined) => void,
): CandleChart {
  const colors = palette(container);
  const chart = baseChart(container, colors);
  const candles = chart.addSeries(CandlestickSeries, {
    upColor: colors.up,
    downColor: colors.down,
    borderVisible: false,
    wickUpColor: colors.up,
    wickDownColor: colors.down,
  });
  const volume: ISeriesApi<"Histogram"> = chart.addSeries(HistogramSeries, {
    priceScaleId: "volume",
    priceFormat: { type: "volume" },
    lastValueVisible: false,
    priceLineVisible: false,
  });
  chart.priceScale("volume").applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  candles.priceScale().applyOptions({ scaleMargins: { top: 0.08, bottom: 0.25 } });

  const byTime = new Map<number, Candle>();
  const bar = (c: Candle) => ({
    time: toSeconds(c.time),
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
  });
  const volumeBar = (c: Candle) => ({
    time: toSeconds(c.time),
    value: c.volume,
    color: `${c.close >= c.open ? colors.up : colors.down}66`,
  });

  chart.subscribeCrosshairMove((param: MouseEventParams<Time>) => {
    onHover(param.time === undefined ? undefined : byTime.get(Number(param.time)));
  });

  return {
    setCandles(list) {
      byTime.clear();
      for (const c of list) byTime.set(toSeconds(c.time), c);
      candles.applyOptions({ priceFormat: priceFormat(list.map((c) => c.close)) });
      candles.setData(list.map(bar));
      volume.setData(list.map(volumeBar));
      chart.timeScale().fitContent();
    },
    updateCandles(list) {
      for (const c of list) {
        byTime.set(toSeconds(c.time), c);
        candles.update(bar(c));
        volume.update(volumeBar(c));
      }
    },
    destroy() {
      chart.remove();
    },
  };
}

export type UsdLineChart = { setLine(line: LineChart): void; destroy(): void };

/** The hourly average USD price as a line. */
export function createLineChart(container: HTMLElement): UsdLineChart {
  const colors = palette(container);
  const chart = baseChart(container, colors);
  const series = chart.addSeries(LineSeries, { color: colors.line, lineWidth: 2 });
  return {
    setLine(line) {
      const points = line.labels
        .map((label, i) => ({ time: toSeconds(Date.parse(label)), value: line.data[i] as number }))
        .filter((p) => Number.isFinite(p.time) && Number.isFinite(p.value))
        .sort((a, b) => a.time - b.time);
      series.applyOptions({ priceFormat: priceFormat(points.map((p) => p.value)) });
      series.setData(points);
      chart.timeScale().fitContent();
    },
    destroy() {
      chart.remove();
    },
  };
}
