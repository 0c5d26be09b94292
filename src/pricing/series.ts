import type { SeriesCandle } from "../model/index.js";
import { foldIntoBuckets } from "./candles.js";
import { addExact, type ExactDecimal, exactValue } from "./exact-sum.js";

/**
 * The USD series of a token: its trades in qualifying pools at their USD price. A bucket is a
 * left fold of its points in key order, like the pool candles.
 */

/** One trade of the token at its USD price. `time` in ms. */
export type SeriesPoint = {
  key: number;
  time: number;
  /** The trade's USD price of the token: execution price × the quote token's USD price. */
  priceUsd: number;
  /** Token amount traded, decimal-adjusted (correctly rounded). */
  volume: number;
  /** The same amount exactly (the bucket's volume sums these). */
  volumeExact: ExactDecimal;
  /** The trade's USD value at that price. */
  volumeUsd: number;
};

/** Stored series resolutions, seconds: 5 minutes (deprecated candle chart) and 1 hour (line chart). */
export const SERIES_RESOLUTIONS = [300, 3600] as const;
export type SeriesResolution = (typeof SERIES_RESOLUTIONS)[number];

/** Adds a point to its bucket (undefined: the bucket's first point); points in key order. */
export function foldSeriesPoint(
  candle: SeriesCandle | undefined,
  point: SeriesPoint,
  bucket: number,
): SeriesCandle {
  if (!candle) {
    return {
      bucket,
      open: point.priceUsd,
      high: point.priceUsd,
      low: point.priceUsd,
      close: point.priceUsd,
      volume: point.volume,
      volumeExact: point.volumeExact,
      sumPv: point.priceUsd * point.volumeUsd,
      sumV: point.volumeUsd,
      firstKey: point.key,
      lastKey: point.key,
    };
  }
  if (point.key <= candle.lastKey) throw new RangeError(`point ${point.key} is not after ${candle.lastKey}`);
  const volumeExact = addExact(candle.volumeExact, point.volumeExact);
  return {
    bucket,
    open: candle.open,
    high: Math.max(candle.high, point.priceUsd),
    low: Math.min(candle.low, point.priceUsd),
    close: point.priceUsd,
    volume: exactValue(volumeExact),
    volumeExact,
    sumPv: candle.sumPv + point.priceUsd * point.volumeUsd,
    sumV: candle.sumV + point.volumeUsd,
    firstKey: candle.firstKey,
    lastKey: point.key,
  };
}

/** The series buckets of `seconds` of points sorted by key. */
export function aggregateSeries(points: readonly SeriesPoint[], seconds: number): SeriesCandle[] {
  return foldIntoBuckets(points, seconds, (point) => point.time, foldSeriesPoint);
}

/** Coarser series buckets from finer ones (ascending). */
export function rollUpSeries(candles: readonly SeriesCandle[], seconds: number): SeriesCandle[] {
  return foldIntoBuckets(
    candles,
    seconds,
    (c) => c.bucket,
    (current: SeriesCandle | undefined, c, bucket) => {
      if (!current) return { ...c, bucket };
      current.high = Math.max(current.high, c.high);
      current.low = Math.min(current.low, c.low);
      current.close = c.close;
      current.volumeExact = addExact(current.volumeExact, c.volumeExact);
      current.volume = exactValue(current.volumeExact);
      current.sumPv += c.sumPv;
      current.sumV += c.sumV;
      current.lastKey = c.lastKey;
      return current;
    },
  );
}

/** The volume-weighted average USD price of a bucket (its close when it carries no USD volume). */
export function averagePriceOf(candle: Pick<SeriesCandle, "sumPv" | "sumV" | "close">): number {
  return candle.sumV > 0 ? candle.sumPv / candle.sumV : candle.close;
}

/** A line chart: one point per hour, labels in ISO 8601 UTC. */
export type LineChart = { labels: string[]; data: number[] };

/**
 * The hourly line chart over [firstHour, lastHour] (ms, aligned): each hour the bucket's average
 * price, hours without a bucket carry the previous point (starting from `prior`, the last average
 * before the range, when known); hours before the first known price are left out. Empty when
 * no bucket falls in the range.
 */
export function hourlyLineChart(
  buckets: readonly { bucket: number; value: number }[],
  prior: number | null,
  firstHour: number,
  lastHour: number,
): LineChart {
  const inRange = buckets.filter((b) => b.bucket >= firstHour && b.bucket <= lastHour);
  if (inRange.length === 0) return { labels: [], data: [] };
  const byHour = new Map(inRange.map((b) => [b.bucket, b.value]));
  const labels: string[] = [];
  const data: number[] = [];
  let last = prior;
  for (let hour = firstHour; hour <= lastHour; hour += 3_600_000) {
    const value = byHour.get(hour);
    if (value !== undefined) last = value;
    if (last === null) continue;
    labels.push(new Date(hour).toISOString());
    data.push(last);
  }
  return { labels, data };
}
