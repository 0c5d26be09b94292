/**
 * Market data queries for the API: candles of a pair, the hourly line chart and the USD candles
 * of a token. They read only the stored aggregates (never raw swaps) and roll them up with the
 * pure functions of src/pricing.
 */
import {
  baseResolutionOf,
  bucketOf,
  type CandleInterval,
  type ChartCandle,
  fillCandleGaps,
  rollUpChartCandles,
} from "../pricing/candles.js";
import { averagePriceOf, hourlyLineChart, type LineChart, rollUpSeries } from "../pricing/series.js";
import type { Queryable } from "./db.js";
import { type SeriesCandleDbRow, toSeriesCandle } from "./market-writes.js";

const HOUR = 3_600_000;
const DAY = 86_400_000;

export type { ChartCandle, LineChart };

/**
 * Candles of a pair from one token's side, ascending: side 0 prices token0 in token1 with
 * token0's volume; side 1 prices token1 in token0 (stored apart, each trade's exact reciprocal
 * rounded once) with token1's volume. Intervals whose start lies in
 * [from aligned down to the interval, to) appear, each with all its trades; empty intervals
 * between the first trade in range and min(to, now) carry the previous close with volume 0.
 * 5m/15m/30m roll up from the 1-minute candles, 4h from the hourly ones, 1d is stored.
 * Empty when no trade falls in the range.
 */
export async function getPairCandles(
  db: Queryable,
  options: {
    chainId: number;
    pool: string;
    side: 0 | 1;
    intervalSeconds: CandleInterval;
    from: Date;
    to: Date;
    now?: Date;
  },
): Promise<ChartCandle[]> {
  const interval = options.intervalSeconds;
  const size = interval * 1000;
  const start = bucketOf(options.from.getTime(), interval);
  const toMs = options.to.getTime();
  // The interval holding `to` is in range when it starts before `to`: read up to its end.
  const end = Math.ceil(toMs / size) * size;
  if (end <= start) return [];
  // Side 1 has its own stored OHLC (migration 004): the reciprocal of a rounded side-0 double is
  // not the correctly rounded side-1 price. Max, min, first and last roll up either side alike.
  const { rows } = await db.query<ChartCandle>(
    `SELECT extract(epoch FROM bucket)::float8 * 1000 AS time,
       ${options.side === 0 ? "open, high, low, close, volume0" : "open1 AS open, high1 AS high, low1 AS low, close1 AS close, volume1"} AS volume
     FROM candles
     WHERE chain_id = $1 AND pool = $2 AND resolution = $3 AND bucket >= $4 AND bucket < $5
     ORDER BY bucket`,
    [
      options.chainId,
      options.pool.toLowerCase(),
      baseResolutionOf(interval),
      new Date(start).toISOString(),
      new Date(end).toISOString(),
    ],
  );
  if (rows.length === 0) return [];
  const candles = baseResolutionOf(interval) === interval ? rows : rollUpChartCandles(rows, interval);
  const fillEnd = Math.min(toMs, (options.now ?? new Date()).getTime());
  return fillCandleGaps(candles, interval, fillEnd);
}

/**
 * The hourly USD line chart of a token: the last `days` × 24 hours up to the current hour, each
 * point the volume-weighted average USD price of the token's trades in qualifying pools in that
 * hour (sum_pv / sum_v); hours without a trade carry the previous point (from before the range
 * too); hours before the first known price are left out. Empty when no trade falls in the range.
 */
export async function getTokenLineChart(
  db: Queryable,
  options: { chainId: number; token: string; days: number; now?: Date },
): Promise<LineChart> {
  const lastHour = bucketOf((options.now ?? new Date()).getTime(), 3600);
  const firstHour = lastHour - (options.days * 24 - 1) * HOUR;
  const token = options.token.toLowerCase();
  const { rows } = await db.query<{ bucket: Date; sum_pv: number; sum_v: number; close: number }>(
    `SELECT bucket, sum_pv, sum_v, close FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket >= $3 AND bucket <= $4
     ORDER BY bucket`,
    [options.chainId, token, new Date(firstHour).toISOString(), new Date(lastHour).toISOString()],
  );
  if (rows.length === 0) return { labels: [], data: [] };
  const prior = await db.query<{ sum_pv: number; sum_v: number; close: number }>(
    `SELECT sum_pv, sum_v, close FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket < $3
     ORDER BY bucket DESC LIMIT 1`,
    [options.chainId, token, new Date(firstHour).toISOString()],
  );
  const before = prior.rows[0];
  return hourlyLineChart(
    rows.map((r) => ({
      bucket: r.bucket.getTime(),
      value: averagePriceOf({ sumPv: r.sum_pv, sumV: r.sum_v, close: r.close }),
    })),
    before ? averagePriceOf({ sumPv: before.sum_pv, sumV: before.sum_v, close: before.close }) : null,
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
  const start = bucketOf(nowMs - options.days * DAY, interval);
  const { rows } = await db.query<SeriesCandleDbRow>(
    `SELECT bucket, open, high, low, close, volume, sum_pv, sum_v, first_key, last_key FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = $3 AND bucket >= $4 AND bucket <= $5
     ORDER BY bucket`,
    [
      options.chainId,
      options.token.toLowerCase(),
      interval === 3600 ? 3600 : 300,
      new Date(start).toISOString(),
      new Date(nowMs).toISOString(),
    ],
  );
  const base = rows.map(toSeriesCandle);
  const candles = interval === 3600 || interval === 300 ? base : rollUpSeries(base, interval);
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

/** A token's stored market figures: price (with provenance) and 24-hour statistics. */
export type TokenMarket = {
  token: string;
  usdPrice: number | null;
  /** The block (and its time) of the latest pool state the price reflects. */
  priceBlock: number | null;
  priceTime: Date | null;
  provenance: unknown;
  priceChange24h: number | null;
  volumeUsd24h: number;
  liquidityUsd: number;
};

/** Stored prices and statistics of tokens of a chain; tokens without a row are left out. */
export async function getTokenMarkets(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
): Promise<Map<string, TokenMarket>> {
  if (tokens.length === 0) return new Map();
  const { rows } = await db.query<{
    token: string;
    usd_price: number | null;
    block_number: number | null;
    block_time: Date | null;
    provenance: unknown;
    price_change_24h: number | null;
    volume_usd_24h: number | null;
    liquidity_usd: number | null;
  }>(
    `SELECT q.token, p.usd_price, p.block_number, p.block_time, p.provenance, s.price_change_24h,
       s.volume_usd_24h, s.liquidity_usd
     FROM unnest($2::text[]) AS q(token)
     LEFT JOIN token_prices p ON p.chain_id = $1 AND p.token = q.token
     LEFT JOIN token_stats s ON s.chain_id = $1 AND s.token = q.token
     WHERE p.token IS NOT NULL OR s.token IS NOT NULL`,
    [chainId, tokens.map((t) => t.toLowerCase())],
  );
  return new Map(
    rows.map((r) => [
      r.token,
      {
        token: r.token,
        usdPrice: r.usd_price,
        priceBlock: r.block_number,
        priceTime: r.block_time,
        provenance: r.provenance,
        priceChange24h: r.price_change_24h,
        volumeUsd24h: r.volume_usd_24h ?? 0,
        liquidityUsd: r.liquidity_usd ?? 0,
      },
    ]),
  );
}

/** A pair's stored 24-hour statistics. */
export type PairMarket = {
  pool: string;
  volumeUsd24h: number;
  liquidityUsd: number | null;
  /** Percent change of token0's price in token1 over 24 hours. */
  priceChange24h: number | null;
  buys24h: number;
  sells24h: number;
  updatedAt: Date;
};

export async function getPairMarkets(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<Map<string, PairMarket>> {
  if (pools.length === 0) return new Map();
  const { rows } = await db.query<{
    pool: string;
    volume_usd_24h: number;
    liquidity_usd: number | null;
    price_change_24h: number | null;
    buys_24h: number;
    sells_24h: number;
    updated_at: Date;
  }>(
    `SELECT pool, volume_usd_24h, liquidity_usd, price_change_24h, buys_24h, sells_24h, updated_at
     FROM pair_stats WHERE chain_id = $1 AND pool = ANY($2::text[])`,
    [chainId, pools.map((p) => p.toLowerCase())],
  );
  return new Map(
    rows.map((r) => [
      r.pool,
      {
        pool: r.pool,
        volumeUsd24h: r.volume_usd_24h,
        liquidityUsd: r.liquidity_usd,
        priceChange24h: r.price_change_24h,
        buys24h: r.buys_24h,
        sells24h: r.sells_24h,
        updatedAt: r.updated_at,
      },
    ]),
  );
}
