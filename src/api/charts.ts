/**
 * The chart reads of the API: candles of a pair, the hourly line chart and the USD candles of a
 * token. They read only the stored aggregates (never raw swaps, src/store) and roll them up with
 * the pricing's pure functions (src/pricing).
 */
import type { CandleSeconds, ChartCandle } from "../model/index.js";
import { baseResolutionOf, bucketOf, type CandleCurrency, fillCandleGaps } from "../pricing/candles.js";
import { hourlyLineChart, type LineChart } from "../pricing/series.js";
import { loadAssetChartCandles, loadChartCandleBefore, loadChartCandles } from "../store/candles.js";
import type { Queryable } from "../store/db.js";
import { loadRetainedFrom } from "../store/partitions.js";
import { loadHourlyAverageBefore, loadHourlyAverages, loadSeriesChart } from "../store/series.js";

const HOUR = 3_600_000;

/**
 * The interval to roll stored candles up to, for one rolled up from a finer resolution (5m, 15m,
 * 30m, 4h; the store sums their exact volumes and rounds once); undefined when it is stored.
 */
const rollUpOf = (interval: CandleSeconds): CandleSeconds | undefined =>
  baseResolutionOf(interval) !== interval ? interval : undefined;
const DAY = 86_400_000;

export type { ChartCandle, LineChart };

/**
 * Candles of a pair from one token's side, ascending: side 0 prices token0 in token1 with
 * token0's volume; side 1 is the reciprocal with token1's volume. With `currency: "usd"` the
 * side's token's USD price at each trade with the trades' USD volume (trades without a USD price
 * of it left out). Intervals whose start lies in [from aligned down to the interval, to) appear,
 * each with all its trades; empty intervals between the first trade in range and min(to, now)
 * carry the previous close with volume 0. 5m/15m/30m roll up from the 1-minute candles, 4h from
 * the hourly ones, 1d is stored. Empty when no trade falls in the range.
 */
export async function getPairCandles(
  db: Queryable,
  options: PairCandlesRange & { side: 0 | 1 },
): Promise<ChartCandle[]> {
  const range = await pairCandlesRange(db, options);
  if (range === null) return [];
  const read = {
    chainId: options.chainId,
    pool: options.pool.toLowerCase(),
    side: options.side,
    currency: options.currency ?? "token",
    resolution: baseResolutionOf(options.intervalSeconds),
    from: range.start,
    to: range.end,
    rollUpTo: rollUpOf(options.intervalSeconds),
  };
  return completePairCandles(await loadChartCandles(db, read), options);
}

/**
 * `getPairCandles` from the side of `asset`, with the pool looked up in the candles' statement
 * (the answer's round trips: the candles route's range reads): undefined when the pool is not
 * known, `side: null` when `asset` is neither of its tokens, else the side and the candles that
 * `getPairCandles` gives for it.
 */
export async function getAssetPairCandles(
  db: Queryable,
  options: PairCandlesRange & { asset: string },
): Promise<{ side: 0 | 1; candles: ChartCandle[] } | { side: null } | undefined> {
  const range = await pairCandlesRange(db, options);
  const found = await loadAssetChartCandles(db, {
    chainId: options.chainId,
    pool: options.pool.toLowerCase(),
    asset: options.asset.toLowerCase(),
    currency: options.currency ?? "token",
    resolution: baseResolutionOf(options.intervalSeconds),
    // An empty range still looks the pool up: [0, 0) holds no candle.
    from: range?.start ?? 0,
    to: range?.end ?? 0,
    rollUpTo: rollUpOf(options.intervalSeconds),
  });
  if (found === undefined || found.side === null) return found;
  return { side: found.side, candles: completePairCandles(found.candles, options) };
}

/**
 * One side of a pair's candles: 0 prices token0 in token1, 1 token1 in token0; in `currency`
 * `usd`, the side's token's USD price at each trade and the USD volume (default `token`).
 */
export type PairSide = { chainId: number; pool: string; side: 0 | 1; currency?: CandleCurrency };

type PairCandlesRange = {
  chainId: number;
  pool: string;
  currency?: CandleCurrency;
  intervalSeconds: CandleSeconds;
  from: Date;
  to: Date;
  now?: Date;
};

/**
 * The buckets of the base resolution to read, [start, end) in ms, for a range; null when none.
 * Intervals before the retention's start are not answered (their 1-minute candles are gone); it
 * is a partition bound, a whole number of days, so every interval is wholly before or after it.
 * The interval holding `to` is in range when it starts before `to`: read up to its end.
 */
async function pairCandlesRange(
  db: Queryable,
  options: PairCandlesRange,
): Promise<{ start: number; end: number } | null> {
  const interval = options.intervalSeconds;
  const retained = await pairCandlesRetainedFrom(db, interval);
  const start = Math.max(bucketOf(options.from.getTime(), interval), retained ?? Number.NEGATIVE_INFINITY);
  const size = interval * 1000;
  const end = Math.ceil(options.to.getTime() / size) * size;
  return end <= start ? null : { start, end };
}

/** The range's candles (rolled up to the interval) with empty intervals up to min(to, now) filled. */
function completePairCandles(candles: ChartCandle[], options: PairCandlesRange): ChartCandle[] {
  if (candles.length === 0) return [];
  const fillEnd = Math.min(options.to.getTime(), (options.now ?? new Date()).getTime());
  return fillCandleGaps(candles, options.intervalSeconds, fillEnd);
}

/**
 * The end (ms, exclusive) of a count-back page: `before` capped at `now`, aligned up to the
 * interval, so the page holds the intervals starting before it (the current one included when
 * `before` is now). The answer depends on this end only: it is also the page's cache key.
 */
export function countBackEnd(before: Date, now: Date, intervalSeconds: CandleSeconds): number {
  const size = intervalSeconds * 1000;
  return Math.ceil(Math.min(before.getTime(), now.getTime()) / size) * size;
}

/**
 * Count-back paging: the last `limit` intervals of the pair's candles (as `getPairCandles`, same
 * side and currency) that start before `end` (ms, aligned: `countBackEnd`), ascending. Empty
 * intervals carry the previous close, from before the page too, so consecutive pages (the next
 * one ending at this one's first interval) join without gap or overlap into the one series that
 * `getPairCandles` gives from the first trade on. Intervals before the pair's first trade (its
 * first USD-priced one in USD) are never given; empty once the history is exhausted.
 */
export async function getPairCandlesBefore(
  db: Queryable,
  options: PairSide & { intervalSeconds: CandleSeconds; limit: number; end: number },
): Promise<ChartCandle[]> {
  const interval = options.intervalSeconds;
  const retained = await pairCandlesRetainedFrom(db, interval);
  // The history of the intervals rolled up from 1-minute candles starts where these are kept.
  const start = Math.max(options.end - options.limit * interval * 1000, retained ?? Number.NEGATIVE_INFINITY);
  if (options.end <= start) return [];
  const read = {
    chainId: options.chainId,
    pool: options.pool.toLowerCase(),
    side: options.side,
    currency: options.currency ?? "token",
    resolution: baseResolutionOf(interval),
  };
  const candles = await loadChartCandles(db, {
    ...read,
    from: start,
    to: options.end,
    rollUpTo: rollUpOf(interval),
  });
  if (candles[0]?.time !== start) {
    // The page opens on empty intervals: they carry the close of the last candle before it (a
    // base-resolution candle before `start` lies in an earlier interval, so its close is that
    // interval's close). None before: the history starts inside the page. Before the 1-minute
    // candles' retention start (an hour start), the hourly candles hold that last close.
    const previous =
      (await loadChartCandleBefore(db, { ...read, before: start, from: retained ?? undefined })) ??
      (retained === null
        ? undefined
        : await loadChartCandleBefore(db, { ...read, resolution: 3600, before: retained }));
    if (previous) {
      const close = previous.close;
      candles.unshift({ time: start, open: close, high: close, low: close, close, volume: 0 });
    }
  }
  return fillCandleGaps(candles, interval, options.end);
}

/**
 * Where the pair candles of an interval start being answered: for the intervals rolled up from
 * 1-minute candles (1m, 5m, 15m, 30m), the start of those kept by the retention
 * (storage.retention.candles1mDays); null when nothing was ever dropped, and for 1h, 4h and 1d
 * (hourly and daily candles are kept forever).
 */
export async function pairCandlesRetainedFrom(
  db: Queryable,
  intervalSeconds: CandleSeconds,
): Promise<number | null> {
  if (baseResolutionOf(intervalSeconds) !== 60) return null;
  return (await loadRetainedFrom(db)).get("candles_1m") ?? null;
}

/**
 * The hourly USD line chart of a token: the last `days` × 24 hours up to the current hour, each
 * point the volume-weighted average USD price of the token's trades in qualifying pools in that
 * hour (the stored average, Σp·v / Σv rounded once); hours without a trade carry the previous
 * point (from before the range too); hours before the first known price are left out. Empty when
 * no trade falls in the range.
 */
export async function getTokenLineChart(
  db: Queryable,
  options: { chainId: number; token: string; days: number; now?: Date },
): Promise<LineChart> {
  const lastHour = bucketOf((options.now ?? new Date()).getTime(), 3600);
  const firstHour = lastHour - (options.days * 24 - 1) * HOUR;
  const token = options.token.toLowerCase();
  const rows = await loadHourlyAverages(db, {
    chainId: options.chainId,
    token,
    from: firstHour,
    to: lastHour,
  });
  if (rows.length === 0) return { labels: [], data: [] };
  const before = await loadHourlyAverageBefore(db, { chainId: options.chainId, token, before: firstHour });
  return hourlyLineChart(
    rows.map((r) => ({ bucket: r.bucket, value: r.average })),
    before,
    firstHour,
    lastHour,
  );
}

/** A USD candle of a token (the deprecated candle chart): `date` ISO 8601, `v` in token units. */
export type TokenUsdCandle = {
  date: string;
  time: number;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
};

/**
 * The USD candles of a token over its qualifying pools for the last `days` days (intervals
 * starting at or after now − days, aligned down), ascending; only intervals with trades.
 * 5/15/30 minutes roll up from the 5-minute series, 60 from the hourly one.
 */
export async function getTokenUsdCandles(
  db: Queryable,
  options: { chainId: number; token: string; days: number; intervalMinutes: 5 | 15 | 30 | 60; now?: Date },
): Promise<TokenUsdCandle[]> {
  const interval = options.intervalMinutes * 60;
  const nowMs = (options.now ?? new Date()).getTime();
  // 5, 15 and 30 minutes: from where the 5-minute series are kept (a retention's start is a whole
  // number of days, so no interval straddles it).
  const retained = interval === 3600 ? null : await tokenUsdCandlesRetainedFrom(db);
  const start = Math.max(
    bucketOf(nowMs - options.days * DAY, interval),
    retained ?? Number.NEGATIVE_INFINITY,
  );
  const candles = await loadSeriesChart(db, {
    chainId: options.chainId,
    token: options.token.toLowerCase(),
    resolution: interval === 3600 ? 3600 : 300,
    from: start,
    to: nowMs,
    ...(interval === 3600 || interval === 300 ? {} : { rollUpTo: interval }),
  });
  return candles.map((c) => ({
    date: new Date(c.bucket).toISOString(),
    time: c.bucket,
    o: c.open,
    h: c.high,
    l: c.low,
    c: c.close,
    v: c.volume,
  }));
}

/**
 * Where the 5-minute USD series of tokens start (storage.retention.series5mDays): the 5, 15 and
 * 30 minute intervals of the token USD candles begin there; null when nothing was ever dropped.
 */
export async function tokenUsdCandlesRetainedFrom(db: Queryable): Promise<number | null> {
  return (await loadRetainedFrom(db)).get("token_usd_candles_5m") ?? null;
}
