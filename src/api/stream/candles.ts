/**
 * The stream's current candle of a pair: the candle of the interval holding the pair's latest
 * trade, computed by the very function /api/v1/candles uses, so the record is the one that
 * endpoint gives for that interval.
 */
import { getPairCandles } from "../../pricing/charts.js";
import type { Queryable } from "../../store/db.js";
import { findSwaps, type TradePosition } from "../../store/swaps.js";
import { finite } from "../numbers.js";
import { CANDLE_INTERVALS, type CandleInterval, toIso } from "../times.js";

/** A candle record as /api/v1/candles answers it (spec 2.4). */
export type CandleRecord = {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  date: string;
  time: number;
};

/** The pair's latest trade: its position (to tell whether anything changed) and its time. */
export type LatestTrade = { position: TradePosition; time: Date };

/** The newest trade of a pool, or null when it has none. */
export async function latestTrade(db: Queryable, chainId: number, pool: string): Promise<LatestTrade | null> {
  const [row] = await findSwaps(db, { chainId, pool, before: null, limit: 1 });
  if (!row) return null;
  return { position: { block: Number(row.block_number), logIndex: row.log_index }, time: row.block_time };
}

/**
 * The candle of `side` (0: token0 priced in token1) at `interval` holding `time`, as
 * /api/v1/candles gives it for a range covering that interval; null when its prices are not
 * finite (the route leaves such a candle out too).
 */
export async function candleAt(
  db: Queryable,
  options: {
    chainId: number;
    pool: string;
    side: 0 | 1;
    interval: CandleInterval;
    time: Date;
    now: Date;
  },
): Promise<CandleRecord | null> {
  const seconds = CANDLE_INTERVALS[options.interval];
  const size = seconds * 1000;
  const start = Math.floor(options.time.getTime() / size) * size;
  const candles = await getPairCandles(db, {
    chainId: options.chainId,
    pool: options.pool,
    side: options.side,
    intervalSeconds: seconds,
    from: new Date(start),
    to: new Date(start + size),
    now: options.now,
  });
  const c = candles.find((candle) => candle.time === start);
  if (!c || ![c.open, c.high, c.low, c.close].every(Number.isFinite)) return null;
  return {
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume: finite(c.volume) ?? 0,
    date: toIso(new Date(c.time)),
    time: c.time,
  };
}
