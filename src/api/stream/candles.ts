/**
 * The stream's candles of a pair: the candle of the interval holding the pair's latest trade (and
 * those a commit completed before it), computed by the very function /api/v1/candles uses, so each
 * record is the one that endpoint gives for that interval.
 */

import { CANDLE_INTERVALS, type CandleInterval } from "../../model/index.js";
import type { Queryable } from "../../store/db.js";
import { findLatestSwaps, type TradePosition } from "../../store/swaps.js";
import { type CandleRecord, candleRecords } from "../candle-records.js";
import { getPairCandles, type PairSide } from "../charts.js";

/** The pair's latest trade: its position (to tell whether anything changed) and its time. */
export type LatestTrade = { position: TradePosition; time: Date };

/** The newest trade of a pool, or null when it has none. */
export async function latestTrade(db: Queryable, chainId: number, pool: string): Promise<LatestTrade | null> {
  return (await findLatestSwaps(db, chainId, [pool])).get(pool) ?? null;
}

/** Most intervals one push may carry (a pair's trades resumed after a long pause: only the latest). */
const MAX_INTERVALS = 1000;

/**
 * The candles of `side` (0: token0 priced in token1) at `interval` from the interval holding
 * `from` to the one holding `to`, ascending, as /api/v1/candles gives them for a range covering
 * them (empty intervals in between carry the previous close at volume 0; candles whose prices are
 * not finite are left out, as the route does). When more than 1000 intervals lie between, only
 * the one holding `to`.
 */
export async function candlesBetween(
  db: Queryable,
  options: PairSide & { interval: CandleInterval; from: Date; to: Date; now: Date },
): Promise<CandleRecord[]> {
  const seconds = CANDLE_INTERVALS[options.interval];
  const size = seconds * 1000;
  const last = Math.floor(options.to.getTime() / size) * size;
  let first = Math.floor(options.from.getTime() / size) * size;
  if (first > last || (last - first) / size >= MAX_INTERVALS) first = last;
  const candles = await getPairCandles(db, {
    chainId: options.chainId,
    pool: options.pool,
    side: options.side,
    currency: options.currency ?? "token",
    intervalSeconds: seconds,
    from: new Date(first),
    to: new Date(last + size),
    now: options.now,
  });
  return candleRecords(candles.filter((c) => c.time >= first && c.time <= last));
}
