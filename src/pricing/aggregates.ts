/**
 * Keeps the stored aggregates current: pool candles and token USD series grow trade by trade
 * (read the touched buckets, fold in key order, write back), and are rebuilt from the remaining
 * swaps after a rollback. A bucket is always the left fold of its trades in key order, so both
 * ways give the same bits as a fresh index.
 */

import { type CandleRow, deleteCandlesAbove, loadCandles, saveCandles } from "../store/candles.js";
import type { Queryable } from "../store/db.js";
import { deleteSeriesAbove, loadSeriesCandles, type SeriesRow, saveSeriesCandles } from "../store/series.js";
import { loadPoolTrades, loadSeriesTrades, type StoredTrade } from "../store/swaps.js";
import { aggregateTrades, bucketOf, type CandleTrade, foldTrade, POOL_RESOLUTIONS } from "./candles.js";
import { candleTradeOf, seriesPointsOf } from "./price-blocks.js";
import { aggregateSeries, foldSeriesPoint, SERIES_RESOLUTIONS, type SeriesPoint } from "./series.js";
import { KEY_BLOCK_FACTOR, lastKeyOfBlock, tradeOf } from "./trade.js";

const keyOf = (owner: string, resolution: number, bucket: number) => `${owner}|${resolution}|${bucket}`;

/**
 * The latest trade time (ms) folded into the stored candles and series so far, when known: no
 * stored row can lie in a bucket that starts after it, since every row was folded from trades of
 * then or before, and a later block's trades are never earlier (block timestamps grow along a
 * chain). A fold reads only the touched buckets that start at or before it; the others are new.
 * Unknown (null, a market loaded afresh): every touched bucket is read. The batches of a backfill
 * touch mostly buckets past the last one's, and their reads are skipped.
 */
export type FoldedUpTo = { time: number | null };

/** Whether a stored row may exist in `bucket` (see FoldedUpTo). */
const mayBeStored = (folded: FoldedUpTo | undefined, bucket: number): boolean =>
  !folded || folded.time === null || bucket <= folded.time;

/** Notes the latest time of folded items (after the fold is written). */
function noteFolded(folded: FoldedUpTo | undefined, items: readonly { time: number }[]): void {
  if (!folded) return;
  let latest = folded.time ?? Number.NEGATIVE_INFINITY;
  for (const { time } of items) if (time > latest) latest = time;
  if (latest !== Number.NEGATIVE_INFINITY) folded.time = latest;
}

/**
 * Folds trades (ascending by key) into the stored 1-minute, 1-hour and 1-day candles of their
 * pools. `folded`: the latest time folded before (read and moved; see FoldedUpTo).
 */
export async function foldPoolCandles(
  db: Queryable,
  chainId: number,
  trades: readonly { pool: string; trade: CandleTrade }[],
  folded?: FoldedUpTo,
): Promise<number> {
  if (trades.length === 0) return 0;
  const keys = new Map<string, { pool: string; resolution: number; bucket: number }>();
  for (const { pool, trade } of trades) {
    for (const resolution of POOL_RESOLUTIONS) {
      const bucket = bucketOf(trade.time, resolution);
      if (mayBeStored(folded, bucket))
        keys.set(keyOf(pool, resolution, bucket), { pool, resolution, bucket });
    }
  }
  const rows = new Map<string, CandleRow>();
  for (const row of await loadCandles(db, chainId, [...keys.values()])) {
    rows.set(keyOf(row.pool, row.resolution, row.bucket), row);
  }
  const dirty = new Set<string>();
  for (const { pool, trade } of trades) {
    for (const resolution of POOL_RESOLUTIONS) {
      const bucket = bucketOf(trade.time, resolution);
      const key = keyOf(pool, resolution, bucket);
      const current = rows.get(key);
      // Already folded (a batch seen twice): folding again would count it twice.
      if (current && trade.key <= current.lastKey) continue;
      rows.set(key, { ...foldTrade(current, trade, bucket), pool, resolution });
      dirty.add(key);
    }
  }
  await saveCandles(
    db,
    chainId,
    [...dirty].sort().map((key) => rows.get(key) as CandleRow),
  );
  noteFolded(
    folded,
    trades.map((t) => t.trade),
  );
  return dirty.size;
}

/**
 * Folds series points (ascending by key) into the stored 5-minute and 1-hour USD series of their
 * tokens. `folded`: the latest time folded before (read and moved; see FoldedUpTo).
 */
export async function foldTokenSeries(
  db: Queryable,
  chainId: number,
  points: readonly { token: string; point: SeriesPoint }[],
  folded?: FoldedUpTo,
): Promise<number> {
  if (points.length === 0) return 0;
  const keys = new Map<string, { token: string; resolution: number; bucket: number }>();
  for (const { token, point } of points) {
    for (const resolution of SERIES_RESOLUTIONS) {
      const bucket = bucketOf(point.time, resolution);
      if (mayBeStored(folded, bucket))
        keys.set(keyOf(token, resolution, bucket), { token, resolution, bucket });
    }
  }
  const rows = new Map<string, SeriesRow>();
  for (const row of await loadSeriesCandles(db, chainId, [...keys.values()])) {
    rows.set(keyOf(row.token, row.resolution, row.bucket), row);
  }
  const dirty = new Set<string>();
  for (const { token, point } of points) {
    for (const resolution of SERIES_RESOLUTIONS) {
      const bucket = bucketOf(point.time, resolution);
      const key = keyOf(token, resolution, bucket);
      const current = rows.get(key);
      if (current && point.key <= current.lastKey) continue;
      rows.set(key, { ...foldSeriesPoint(current, point, bucket), token, resolution });
      dirty.add(key);
    }
  }
  await saveSeriesCandles(
    db,
    chainId,
    [...dirty].sort().map((key) => rows.get(key) as SeriesRow),
  );
  noteFolded(
    folded,
    points.map((p) => p.point),
  );
  return dirty.size;
}

/** The trade of a stored swap as the candles see it (null: no price). */
export function candleTradeOfStored(s: StoredTrade): CandleTrade | null {
  if (s.decimals0 === null || s.decimals1 === null) return null;
  return candleTradeOf({
    key: s.blockNumber * KEY_BLOCK_FACTOR + s.logIndex,
    time: s.time,
    trade: tradeOf(s, s.decimals0, s.decimals1),
    volumeUsd: s.volumeUsd,
    token0Usd: s.token0Usd,
    token1Usd: s.token1Usd,
  });
}

/** The series points of a stored swap. */
export function seriesPointsOfStored(s: StoredTrade): { token: string; point: SeriesPoint }[] {
  if (s.decimals0 === null || s.decimals1 === null) return [];
  return seriesPointsOf(
    {
      key: s.blockNumber * KEY_BLOCK_FACTOR + s.logIndex,
      time: s.time,
      trade: tradeOf(s, s.decimals0, s.decimals1),
      series0Usd: s.series0Usd,
      series1Usd: s.series1Usd,
    },
    s.token0,
    s.token1,
  );
}

/**
 * Rebuilds, from the swaps at or below `ancestorBlock`, the candles of `pools` that held a trade
 * above it (the rest did not change). Returns the number of candles written.
 */
export async function rebuildPoolCandles(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
  ancestorBlock: number,
): Promise<number> {
  const deleted = await deleteCandlesAbove(db, chainId, pools, lastKeyOfBlock(ancestorBlock));
  if (deleted.length === 0) return 0;
  // Per pool: the first block and the earliest bucket start of its deleted candles. A bucket is the
  // fold of its own trades only, so trades older than every wanted bucket are not needed.
  const from = new Map<string, { pool: string; fromBlock: number; fromTime: number }>();
  const wanted = new Set<string>();
  for (const d of deleted) {
    const block = Math.floor(d.firstKey / KEY_BLOCK_FACTOR);
    const f = from.get(d.pool);
    from.set(d.pool, {
      pool: d.pool,
      fromBlock: Math.min(f?.fromBlock ?? block, block),
      fromTime: Math.min(f?.fromTime ?? d.bucket, d.bucket),
    });
    wanted.add(keyOf(d.pool, d.resolution, d.bucket));
  }
  const stored = await loadPoolTrades(db, chainId, [...from.values()], ancestorBlock);
  const byPool = new Map<string, CandleTrade[]>();
  for (const s of stored) {
    const trade = candleTradeOfStored(s);
    if (!trade) continue;
    let list = byPool.get(s.pool);
    if (!list) {
      list = [];
      byPool.set(s.pool, list);
    }
    list.push(trade);
  }
  const rows: CandleRow[] = [];
  for (const [pool, trades] of byPool) {
    for (const resolution of POOL_RESOLUTIONS) {
      for (const candle of aggregateTrades(trades, resolution)) {
        if (wanted.has(keyOf(pool, resolution, candle.bucket))) rows.push({ ...candle, pool, resolution });
      }
    }
  }
  await saveCandles(db, chainId, rows);
  return rows.length;
}

/** Rebuilds the USD series buckets of `tokens` that held a trade above `ancestorBlock`. */
export async function rebuildTokenSeries(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  ancestorBlock: number,
): Promise<number> {
  const deleted = await deleteSeriesAbove(db, chainId, tokens, lastKeyOfBlock(ancestorBlock));
  if (deleted.length === 0) return 0;
  const wanted = new Set<string>();
  let fromBlock = Number.POSITIVE_INFINITY;
  let fromTime = Number.POSITIVE_INFINITY;
  const affectedTokens = new Set<string>();
  for (const d of deleted) {
    fromBlock = Math.min(fromBlock, Math.floor(d.firstKey / KEY_BLOCK_FACTOR));
    fromTime = Math.min(fromTime, d.bucket);
    wanted.add(keyOf(d.token, d.resolution, d.bucket));
    affectedTokens.add(d.token);
  }
  const stored = await loadSeriesTrades(
    db,
    chainId,
    [...affectedTokens],
    { block: fromBlock, time: fromTime },
    ancestorBlock,
  );
  const byToken = new Map<string, SeriesPoint[]>();
  for (const s of stored) {
    for (const { token, point } of seriesPointsOfStored(s)) {
      if (!affectedTokens.has(token)) continue;
      let list = byToken.get(token);
      if (!list) {
        list = [];
        byToken.set(token, list);
      }
      list.push(point);
    }
  }
  const rows: SeriesRow[] = [];
  for (const [token, points] of byToken) {
    for (const resolution of SERIES_RESOLUTIONS) {
      for (const candle of aggregateSeries(points, resolution)) {
        if (wanted.has(keyOf(token, resolution, candle.bucket))) rows.push({ ...candle, token, resolution });
      }
    }
  }
  await saveSeriesCandles(db, chainId, rows);
  return rows.length;
}
