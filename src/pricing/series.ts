import { ratioToNumber } from "../exact/ratio.js";
import type { SeriesCandle } from "../model/index.js";
import { foldIntoBuckets, opened } from "./candles.js";
import {
  addExact,
  EXACT_ZERO,
  type ExactDecimal,
  exactOf,
  exactProduct,
  exactValue,
  powerOf10,
} from "./exact-sum.js";

/**
 * The USD series of a token: its trades in the pools that set its price, at its USD price. A
 * bucket is a left fold of its points in key order, like the pool candles. Its volume-weighted
 * average Σ p·v / Σ v (the line chart's point) is summed exactly: v = the exact amount × p, p·v
 * exactly, both sums kept as exact decimals and their ratio rounded once; with p the stored
 * double, so that a bucket grown trade by trade and one rebuilt from the stored swaps agree.
 */

/** One trade of the token at its USD price. `time` in ms. */
export type SeriesPoint = {
  key: number;
  time: number;
  /** The token's USD price at the trade (trade-usd.ts valueTrade). */
  priceUsd: number;
  /** Token amount traded, decimal-adjusted (correctly rounded). */
  volume: number;
  /** The same amount exactly (the bucket's volume sums these). */
  volumeExact: ExactDecimal;
};

/** A point's exact USD value v = amount × p and p·v. */
function pointSums(point: SeriesPoint): { pv: ExactDecimal; v: ExactDecimal } {
  // A point is folded into each resolution's bucket in turn: its sums are made once.
  if (point === lastPoint.point) return lastPoint.sums;
  const p = exactOf(point.priceUsd);
  const v = exactProduct(point.volumeExact, p);
  const sums = { pv: exactProduct(p, v), v };
  lastPoint = { point, sums };
  return sums;
}

/** The last point whose sums were made, and its sums (points are not changed once made). */
let lastPoint: { point: SeriesPoint | null; sums: { pv: ExactDecimal; v: ExactDecimal } } = {
  point: null,
  sums: { pv: EXACT_ZERO, v: EXACT_ZERO },
};

/** Stored series resolutions, seconds: 5 minutes (deprecated candle chart) and 1 hour (line chart). */
export const SERIES_RESOLUTIONS = [300, 3600] as const;
export type SeriesResolution = (typeof SERIES_RESOLUTIONS)[number];

/**
 * Adds a point to its bucket (undefined: the bucket's first point); points in key order. Volume
 * and average stay as they were (0 in a new bucket) until `withRoundedSeries` rounds the exact
 * sums, once for a bucket.
 */
export function foldSeriesSums(
  candle: SeriesCandle | undefined,
  point: SeriesPoint,
  bucket: number,
): SeriesCandle {
  const sums = pointSums(point);
  if (!candle) {
    return {
      bucket,
      ...opened(point.priceUsd),
      volume: 0,
      volumeExact: point.volumeExact,
      sumPvExact: sums.pv,
      sumVExact: sums.v,
      average: 0,
      firstKey: point.key,
      lastKey: point.key,
    };
  }
  if (point.key <= candle.lastKey) throw new RangeError(`point ${point.key} is not after ${candle.lastKey}`);
  return {
    bucket,
    open: candle.open,
    high: Math.max(candle.high, point.priceUsd),
    low: Math.min(candle.low, point.priceUsd),
    close: point.priceUsd,
    volume: candle.volume,
    volumeExact: addExact(candle.volumeExact, point.volumeExact),
    sumPvExact: addExact(candle.sumPvExact, sums.pv),
    sumVExact: addExact(candle.sumVExact, sums.v),
    average: candle.average,
    firstKey: candle.firstKey,
    lastKey: point.key,
  };
}

/** A series bucket (with whatever else it carries) with its rounded figures from its exact sums. */
export function withRoundedSeries<C extends SeriesCandle>(candle: C): C {
  return {
    ...candle,
    volume: exactValue(candle.volumeExact),
    average: averagePriceOf(candle),
  };
}

/** The series buckets of `seconds` of points sorted by key. */
export function aggregateSeries(points: readonly SeriesPoint[], seconds: number): SeriesCandle[] {
  return foldIntoBuckets(points, seconds, (point) => point.time, foldSeriesSums).map(withRoundedSeries);
}

/**
 * The volume-weighted average USD price of a bucket, Σ p·v / Σ v of its exact sums rounded once
 * (its close when it carries no USD volume): never outside [low, high].
 */
export function averagePriceOf(candle: Pick<SeriesCandle, "sumPvExact" | "sumVExact" | "close">): number {
  const { sumPvExact: pv, sumVExact: v } = candle;
  if (!(v.digits > 0n)) return candle.close;
  // (pv.digits / 10^pv.scale) / (v.digits / 10^v.scale), over one power of ten.
  const shift = pv.scale - v.scale;
  return shift >= 0
    ? ratioToNumber(pv.digits, v.digits * powerOf10(shift))
    : ratioToNumber(pv.digits * powerOf10(-shift), v.digits);
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
