/**
 * Candles of a pair (token0 in token1) and their roll-ups. A candle is a left fold of its trades
 * in key order (block, log index), so a candle grown trade by trade across batches is bit for
 * bit the candle aggregated at once from the same trades.
 */
import type { Candle, CandleSeconds, CandleSums, ChartCandle, UsdOhlcv } from "../model/index.js";
import { addExact, type ExactDecimal, exactOf, exactValue } from "./exact-sum.js";
import type { Trade } from "./trade.js";

/**
 * A trade as the candles see it: its rounded prices, volumes (exact and rounded) and side as
 * trade.ts makes them (without the exact ratio), its ordering key, and its USD figures. `time`
 * in ms since the epoch.
 */
export type CandleTrade = Omit<Trade, "ratio"> & {
  key: number;
  time: number;
  /** The trade's USD value (0 when unknown). */
  volumeUsd: number;
  /** The stored USD price of token0 at the trade (`swaps.token0_usd`); null when unknown. */
  usd0: number | null;
  /** The stored USD price of token1 at the trade; null when unknown. */
  usd1: number | null;
};

/** Which prices a candle of the API carries: the pair's other token, or US dollars. */
export type CandleCurrency = "token" | "usd";

/** Stored pool candle resolutions, seconds. */
export const POOL_RESOLUTIONS = [60, 3600, 86_400] as const;
export type PoolResolution = (typeof POOL_RESOLUTIONS)[number];

/** The stored resolution an interval rolls up from: 5m/15m/30m from 1m, 4h from 1h, 1d from 1d. */
export function baseResolutionOf(intervalSeconds: CandleSeconds): PoolResolution {
  if (intervalSeconds >= 86_400) return 86_400;
  if (intervalSeconds >= 3600) return 3600;
  return 60;
}

/** Start (ms) of the epoch-aligned interval of `seconds` that contains `timeMs`. */
export function bucketOf(timeMs: number, seconds: number): number {
  const size = seconds * 1000;
  return Math.floor(timeMs / size) * size;
}

/** A bucket's prices. */
type Ohlc = { open: number; high: number; low: number; close: number };

/** The prices of a bucket opened by one price. */
export const opened = (price: number): Ohlc => ({ open: price, high: price, low: price, close: price });

/**
 * Adds a trade's USD price of one token to that token's USD candle: a trade without one leaves the
 * candle as it is (null: no USD-priced trade yet). `volume`: the candle's volume with the trade's
 * (the correctly rounded exact sum). Never mutates `candle`.
 */
export function foldUsdPrice(candle: UsdOhlcv | null, price: number | null, volume: number): UsdOhlcv | null {
  if (price === null) return candle;
  if (!candle) return { ...opened(price), volume };
  return {
    open: candle.open,
    high: Math.max(candle.high, price),
    low: Math.min(candle.low, price),
    close: price,
    volume,
  };
}

/** The USD candle of two consecutive stretches (`a` before `b`) with their summed volume; either may be null. */
export function mergeUsdCandles(a: UsdOhlcv | null, b: UsdOhlcv | null, volume: number): UsdOhlcv | null {
  if (!b) return a;
  if (!a) return b;
  return {
    open: a.open,
    high: Math.max(a.high, b.high),
    low: Math.min(a.low, b.low),
    close: b.close,
    volume,
  };
}

/** a + b, where null is no term. */
const addOptional = (a: ExactDecimal | null, b: ExactDecimal | null): ExactDecimal | null =>
  a === null ? b : b === null ? a : addExact(a, b);

/** The exact sums of a candle with a trade's (undefined: the trade alone). */
function sumsWith(sums: CandleSums | undefined, trade: CandleTrade): CandleSums {
  const usd = exactOf(trade.volumeUsd);
  const usd0 = trade.usd0 === null ? null : usd;
  const usd1 = trade.usd1 === null ? null : usd;
  if (!sums) return { volume0: trade.exact0, volume1: trade.exact1, volumeUsd: usd, usd0, usd1 };
  return {
    volume0: addExact(sums.volume0, trade.exact0),
    volume1: addExact(sums.volume1, trade.exact1),
    volumeUsd: addExact(sums.volumeUsd, usd),
    usd0: addOptional(sums.usd0, usd0),
    usd1: addOptional(sums.usd1, usd1),
  };
}

/** The sums of two consecutive stretches. */
function mergedSums(a: CandleSums, b: CandleSums): CandleSums {
  return {
    volume0: addExact(a.volume0, b.volume0),
    volume1: addExact(a.volume1, b.volume1),
    volumeUsd: addExact(a.volumeUsd, b.volumeUsd),
    usd0: addOptional(a.usd0, b.usd0),
    usd1: addOptional(a.usd1, b.usd1),
  };
}

/** A USD side's volume: its exact sum rounded (0 for a side without USD-priced trades, never read). */
const usdVolume = (sum: ExactDecimal | null): number => (sum === null ? 0 : exactValue(sum));

/**
 * Adds a trade to its bucket's candle (undefined: the bucket's first trade). Trades must come in
 * key order; the caller skips those already folded (key ≤ lastKey). Prices fold as doubles (first,
 * last, extremes); volumes are summed exactly and each is its sum correctly rounded.
 */
export function foldTrade(candle: Candle | undefined, trade: CandleTrade, bucket: number): Candle {
  return withVolumes(foldTradeSums(candle, trade, bucket));
}

/**
 * `foldTrade` without rounding the volumes: they stay as they were (0 in a new candle) until
 * `withVolumes` rounds the sums, once for a bucket however many trades it took in.
 */
export function foldTradeSums(candle: Candle | undefined, trade: CandleTrade, bucket: number): Candle {
  const sums = sumsWith(candle?.sums, trade);
  if (!candle) {
    return {
      bucket,
      ...opened(trade.price),
      open1: trade.price1,
      high1: trade.price1,
      low1: trade.price1,
      close1: trade.price1,
      volume0: 0,
      volume1: 0,
      volumeUsd: 0,
      usd0: foldUsdPrice(null, trade.usd0, 0),
      usd1: foldUsdPrice(null, trade.usd1, 0),
      trades: 1,
      buys0: trade.buy0 ? 1 : 0,
      firstKey: trade.key,
      lastKey: trade.key,
      sums,
    };
  }
  if (trade.key <= candle.lastKey) throw new RangeError(`trade ${trade.key} is not after ${candle.lastKey}`);
  return {
    bucket,
    open: candle.open,
    high: Math.max(candle.high, trade.price),
    low: Math.min(candle.low, trade.price),
    close: trade.price,
    open1: candle.open1,
    high1: Math.max(candle.high1, trade.price1),
    low1: Math.min(candle.low1, trade.price1),
    close1: trade.price1,
    volume0: candle.volume0,
    volume1: candle.volume1,
    volumeUsd: candle.volumeUsd,
    usd0: foldUsdPrice(candle.usd0, trade.usd0, candle.usd0?.volume ?? 0),
    usd1: foldUsdPrice(candle.usd1, trade.usd1, candle.usd1?.volume ?? 0),
    trades: candle.trades + 1,
    buys0: candle.buys0 + (trade.buy0 ? 1 : 0),
    firstKey: candle.firstKey,
    lastKey: trade.key,
    sums,
  };
}

/** A candle (with whatever else it carries) with its volumes the correctly rounded doubles of its sums. */
export function withVolumes<C extends Candle>(candle: C): C {
  const { sums } = candle;
  return {
    ...candle,
    volume0: exactValue(sums.volume0),
    volume1: exactValue(sums.volume1),
    volumeUsd: exactValue(sums.volumeUsd),
    usd0: candle.usd0 && { ...candle.usd0, volume: usdVolume(sums.usd0) },
    usd1: candle.usd1 && { ...candle.usd1, volume: usdVolume(sums.usd1) },
  };
}

/**
 * Groups items (ascending by time) into the epoch-aligned intervals of `seconds` and folds each
 * group in order: `fold(undefined, item, bucket)` opens an interval, `fold(acc, item, bucket)`
 * adds the next item to it. Candles, roll-ups and USD series are all this left fold.
 */
export function foldIntoBuckets<T, C>(
  items: readonly T[],
  seconds: number,
  timeOf: (item: T) => number,
  fold: (acc: C | undefined, item: T, bucket: number) => C,
): C[] {
  const out: C[] = [];
  let current: C | undefined;
  let currentBucket = 0;
  for (const item of items) {
    const bucket = bucketOf(timeOf(item), seconds);
    if (current !== undefined && currentBucket !== bucket) {
      out.push(current);
      current = undefined;
    }
    current = fold(current, item, bucket);
    currentBucket = bucket;
  }
  if (current !== undefined) out.push(current);
  return out;
}

/** The candles of `seconds` of trades sorted by key, ascending. */
export function aggregateTrades(trades: readonly CandleTrade[], seconds: number): Candle[] {
  return foldIntoBuckets(trades, seconds, (trade) => trade.time, foldTradeSums).map(withVolumes);
}

/**
 * Coarser buckets from finer ones (ascending), each starting at its field `at` (ms): open of the
 * first, high and low of all, close of the last; `merge` adds the rest of a finer bucket to its
 * coarser one.
 */
export function rollUp<K extends "bucket" | "time", C extends Record<K, number> & Ohlc>(
  finer: readonly C[],
  seconds: number,
  at: K,
  merge: (current: C, c: C) => void,
): C[] {
  return foldIntoBuckets(
    finer,
    seconds,
    (c) => c[at],
    (current: C | undefined, c, start) => {
      if (!current) return { ...c, [at]: start };
      current.high = Math.max(current.high, c.high);
      current.low = Math.min(current.low, c.low);
      current.close = c.close;
      merge(current, c);
      return current;
    },
  );
}

/** Coarser candles from finer ones (ascending): with both sides' prices, and exact sums. */
export function rollUpCandles(candles: readonly Candle[], seconds: number): Candle[] {
  return rollUp(candles, seconds, "bucket", (current, c) => {
    const sums = mergedSums(current.sums, c.sums);
    current.high1 = Math.max(current.high1, c.high1);
    current.low1 = Math.min(current.low1, c.low1);
    current.close1 = c.close1;
    current.volume0 = exactValue(sums.volume0);
    current.volume1 = exactValue(sums.volume1);
    current.volumeUsd = exactValue(sums.volumeUsd);
    current.usd0 = mergeUsdCandles(current.usd0, c.usd0, usdVolume(sums.usd0));
    current.usd1 = mergeUsdCandles(current.usd1, c.usd1, usdVolume(sums.usd1));
    current.trades += c.trades;
    current.buys0 += c.buys0;
    current.lastKey = c.lastKey;
    current.sums = sums;
  });
}

/**
 * One side of a pool candle. Side 0: token0 in token1 with volume0. Side 1: token1 in token0
 * (the stored side-1 prices, each the correctly rounded reciprocal of a trade's exact price) with
 * volume1. In USD: that side's token's USD candle with its USD volume, null when the bucket had
 * no USD-priced trade of it.
 */
export function candleSide(candle: Candle, side: 0 | 1, currency: "usd"): ChartCandle | null;
export function candleSide(candle: Candle, side: 0 | 1, currency?: "token"): ChartCandle;
export function candleSide(
  candle: Candle,
  side: 0 | 1,
  currency: CandleCurrency = "token",
): ChartCandle | null {
  if (currency === "usd") {
    const usd = side === 0 ? candle.usd0 : candle.usd1;
    return usd && { time: candle.bucket, ...usd };
  }
  if (side === 0) {
    return {
      time: candle.bucket,
      open: candle.open,
      high: candle.high,
      low: candle.low,
      close: candle.close,
      volume: candle.volume0,
    };
  }
  return {
    time: candle.bucket,
    open: candle.open1,
    high: candle.high1,
    low: candle.low1,
    close: candle.close1,
    volume: candle.volume1,
  };
}

/**
 * Fills empty intervals between the first candle and `end` (exclusive: the last interval is the
 * one starting before `end`) with volume 0 at the previous close. Candles ascending.
 */
export function fillCandleGaps(candles: readonly ChartCandle[], seconds: number, end: number): ChartCandle[] {
  const first = candles[0];
  if (!first) return [];
  const size = seconds * 1000;
  const out: ChartCandle[] = [];
  let index = 0;
  let previous: ChartCandle | undefined;
  for (let time = first.time; time < end || index < candles.length; time += size) {
    const candle = candles[index];
    if (candle && candle.time === time) {
      out.push(candle);
      previous = candle;
      index += 1;
    } else if (candle && candle.time < time) {
      // Not aligned to the grid (cannot happen with epoch-aligned buckets): keep it as it is.
      out.push(candle);
      previous = candle;
      index += 1;
      time -= size;
    } else if (previous) {
      const close = previous.close;
      out.push({ time, open: close, high: close, low: close, close, volume: 0 });
    }
  }
  return out;
}
