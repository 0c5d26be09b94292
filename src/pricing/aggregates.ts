/**
 * Keeps the stored aggregates current: pool candles and token USD series grow trade by trade
 * (read the touched buckets, fold in key order, write back), and are rebuilt from the remaining
 * swaps after a rollback. A bucket is always the left fold of its trades in key order, so both
 * ways give the same bits as a fresh index.
 */

import type { Place } from "../store/bucket-rows.js";
import { deleteCandlesAbove, loadCandles, saveCandles } from "../store/candles.js";
import type { Queryable } from "../store/db.js";
import { deleteSeriesAbove, loadSeriesCandles, saveSeriesCandles } from "../store/series.js";
import { loadPoolTrades, loadSeriesTrades, type StoredTrade } from "../store/swaps.js";
import {
  aggregateTrades,
  bucketOf,
  type CandleTrade,
  foldTradeSums,
  POOL_RESOLUTIONS,
  withVolumes,
} from "./candles.js";
import { candleTradeOf, seriesPointsOf } from "./price-blocks.js";
import {
  aggregateSeries,
  foldSeriesSums,
  SERIES_RESOLUTIONS,
  type SeriesPoint,
  withRoundedSeries,
} from "./series.js";
import { eventKey, KEY_BLOCK_FACTOR, lastKeyOfBlock, type Trade, tradeOf } from "./trade.js";

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

/** A stored bucket: its candle with the owner and resolution. */
type Stored<F extends string, C> = C & Record<F, string> & { resolution: number };

/**
 * One family of stored buckets (pool candles, token USD series): the owner's field in its rows
 * and keys, the item's field in the entries folded (`{ pool, trade }`, `{ token, point }`), its
 * resolutions, and how its buckets are read, folded and written.
 */
type BucketFamily<F extends string, T extends string, I, C> = {
  owner: F;
  item: T;
  resolutions: readonly number[];
  load(db: Queryable, chainId: number, keys: Place<F>[]): Promise<Stored<F, C>[]>;
  /** Adds an item to its bucket, its rounded figures left for `finish`. */
  fold(current: C | undefined, item: I, bucket: number): C;
  /** A folded bucket with its rounded figures made from its exact sums (once, before it is written). */
  finish<S extends C>(bucket: S): S;
  /** The buckets of `seconds` of one owner's items (ascending by key), aggregated at once. */
  aggregate(items: readonly I[], seconds: number): C[];
  save(db: Queryable, chainId: number, rows: Stored<F, C>[]): Promise<unknown>;
  /** Deletes the owners' buckets that hold a trade with a key above `lastKey`. */
  deleteAbove(
    db: Queryable,
    chainId: number,
    owners: readonly string[],
    lastKey: number,
  ): Promise<Deleted<F>>;
};

/**
 * Folds entries (ascending by key) into the stored buckets of their owners: reads the touched
 * buckets that may be stored, folds each item in, writes the changed buckets back (in key order).
 * `folded`: the latest time folded before (read and moved; see FoldedUpTo). Returns the number
 * of buckets written.
 */
export async function foldStored<
  F extends string,
  T extends string,
  I extends { key: number; time: number },
  C extends { lastKey: number; bucket: number },
>(
  family: BucketFamily<F, T, I, C>,
  db: Queryable,
  chainId: number,
  entries: readonly (Record<F, string> & Record<T, I>)[],
  folded: FoldedUpTo | undefined,
): Promise<number> {
  if (entries.length === 0) return 0;
  const { owner: field, resolutions } = family;
  // Each entry's bucket at each resolution, in order, with its key (made once).
  const places: { key: string; owner: string; resolution: number; bucket: number; item: I }[] = [];
  const keys = new Map<string, Place<F>>();
  for (const entry of entries) {
    const owner = entry[field];
    const item = entry[family.item];
    for (const resolution of resolutions) {
      const bucket = bucketOf(item.time, resolution);
      const key = keyOf(owner, resolution, bucket);
      places.push({ key, owner, resolution, bucket, item });
      if (mayBeStored(folded, bucket)) keys.set(key, { [field]: owner, resolution, bucket } as Place<F>);
    }
  }
  const rows = new Map<string, Stored<F, C>>();
  for (const row of await family.load(db, chainId, [...keys.values()])) {
    rows.set(keyOf(row[field], row.resolution, row.bucket), row);
  }
  const dirty = new Set<string>();
  for (const { key, owner, resolution, bucket, item } of places) {
    const current = rows.get(key);
    // Already folded (a batch seen twice): folding again would count it twice.
    if (current && item.key <= current.lastKey) continue;
    // The fold makes a new bucket; its place is set on it (not spread into a copy of it).
    const next = family.fold(current, item, bucket) as Stored<F, C>;
    (next as Record<F, string>)[field] = owner;
    next.resolution = resolution;
    rows.set(key, next);
    dirty.add(key);
  }
  await family.save(
    db,
    chainId,
    [...dirty].sort().map((key) => family.finish(rows.get(key) as Stored<F, C>)),
  );
  noteFolded(
    folded,
    entries.map((e) => e[family.item]),
  );
  return dirty.size;
}

/** The stored 1-minute, 1-hour and 1-day candles of pools, folded from trades. */
export const poolCandles = {
  owner: "pool",
  item: "trade",
  resolutions: POOL_RESOLUTIONS,
  load: loadCandles,
  fold: foldTradeSums,
  finish: withVolumes,
  aggregate: aggregateTrades,
  save: saveCandles,
  deleteAbove: deleteCandlesAbove,
} as const;
/** The stored 5-minute and 1-hour USD series of tokens, folded from series points. */
export const tokenSeries = {
  owner: "token",
  item: "point",
  resolutions: SERIES_RESOLUTIONS,
  load: loadSeriesCandles,
  fold: foldSeriesSums,
  finish: withRoundedSeries,
  aggregate: aggregateSeries,
  save: saveSeriesCandles,
  deleteAbove: deleteSeriesAbove,
} as const;

/** A stored swap's ordering key, time (ms) and trade; null while a token's decimals are unknown. */
function keyedTradeOf(s: StoredTrade): { key: number; time: number; trade: Trade | null } | null {
  if (s.decimals0 === null || s.decimals1 === null) return null;
  return {
    key: eventKey(s.blockNumber, s.logIndex),
    time: s.time,
    trade: tradeOf(s, s.decimals0, s.decimals1),
  };
}

/** The trade of a stored swap as the candles see it (null: no price). */
export function candleTradeOfStored(s: StoredTrade): CandleTrade | null {
  const keyed = keyedTradeOf(s);
  return (
    keyed &&
    candleTradeOf({ ...keyed, volumeUsd: s.volumeUsd, token0Usd: s.token0Usd, token1Usd: s.token1Usd })
  );
}

/** The series points of a stored swap. */
export function seriesPointsOfStored(s: StoredTrade): { token: string; point: SeriesPoint }[] {
  const keyed = keyedTradeOf(s);
  if (!keyed) return [];
  return seriesPointsOf({ ...keyed, series0Usd: s.series0Usd, series1Usd: s.series1Usd }, s.token0, s.token1);
}

/** Appends `value` to the list of `key`. */
function pushTo<T>(lists: Map<string, T[]>, key: string, value: T): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}

/** The deleted buckets of a family, each with the key of its first trade. */
type Deleted<F extends string> = (Place<F> & { firstKey: number })[];
/** The remaining items (ascending by key) at or below `ancestorBlock` of the owners of `deleted`, by owner. */
type Remaining<F extends string, I> = (
  db: Queryable,
  chainId: number,
  deleted: Deleted<F>,
  ancestorBlock: number,
) => Promise<Map<string, I[]>>;

/**
 * Deletes the buckets of a family's `owners` that hold a trade above `ancestorBlock` (a rollback
 * removed it) and writes them afresh, aggregated at each resolution from the owners' remaining
 * items (`remaining`: by owner, ascending by key). An owner's other buckets are left as they are.
 */
async function rebuildStored<F extends string, T extends string, I, C extends { bucket: number }>(
  family: BucketFamily<F, T, I, C>,
  db: Queryable,
  chainId: number,
  owners: readonly string[],
  ancestorBlock: number,
  remaining: Remaining<F, I>,
): Promise<void> {
  const deleted = await family.deleteAbove(db, chainId, owners, lastKeyOfBlock(ancestorBlock));
  if (deleted.length === 0) return;
  const byOwner = await remaining(db, chainId, deleted, ancestorBlock);
  const wanted = new Set(deleted.map((d) => keyOf(d[family.owner], d.resolution, d.bucket)));
  const rows: Stored<F, C>[] = [];
  for (const [owner, items] of byOwner) {
    for (const resolution of family.resolutions) {
      for (const candle of family.aggregate(items, resolution)) {
        if (wanted.has(keyOf(owner, resolution, candle.bucket)))
          rows.push({ ...candle, [family.owner]: owner, resolution } as Stored<F, C>);
      }
    }
  }
  await family.save(db, chainId, rows);
}

/**
 * Rebuilds, from the swaps at or below `ancestorBlock`, the candles of `pools` and the USD series
 * buckets of `tokens` that held a trade above it (the rest did not change).
 */
export async function rebuildAggregates(
  db: Queryable,
  chainId: number,
  owners: { pools: readonly string[]; tokens: readonly string[] },
  ancestorBlock: number,
): Promise<void> {
  await rebuildStored(poolCandles, db, chainId, owners.pools, ancestorBlock, tradesOfPools);
  await rebuildStored(tokenSeries, db, chainId, owners.tokens, ancestorBlock, pointsOfTokens);
}

/** The remaining trades at or below `ancestorBlock` of the pools of the `deleted` candles, by pool. */
const tradesOfPools: Remaining<"pool", CandleTrade> = async (db, chainId, deleted, ancestorBlock) => {
  // Per pool: the first block and the earliest bucket start of its deleted candles. A bucket is the
  // fold of its own trades only, so trades older than every wanted bucket are not needed.
  const from = new Map<string, { pool: string; fromBlock: number; fromTime: number }>();
  for (const d of deleted) {
    const block = Math.floor(d.firstKey / KEY_BLOCK_FACTOR);
    const f = from.get(d.pool);
    from.set(d.pool, {
      pool: d.pool,
      fromBlock: Math.min(f?.fromBlock ?? block, block),
      fromTime: Math.min(f?.fromTime ?? d.bucket, d.bucket),
    });
  }
  const byPool = new Map<string, CandleTrade[]>();
  for (const s of await loadPoolTrades(db, chainId, [...from.values()], ancestorBlock)) {
    const trade = candleTradeOfStored(s);
    if (trade) pushTo(byPool, s.pool, trade);
  }
  return byPool;
};

/** The remaining series points at or below `ancestorBlock` of the tokens of the `deleted` buckets, by token. */
const pointsOfTokens: Remaining<"token", SeriesPoint> = async (db, chainId, deleted, ancestorBlock) => {
  let fromBlock = Number.POSITIVE_INFINITY;
  let fromTime = Number.POSITIVE_INFINITY;
  const affectedTokens = new Set<string>();
  for (const d of deleted) {
    fromBlock = Math.min(fromBlock, Math.floor(d.firstKey / KEY_BLOCK_FACTOR));
    fromTime = Math.min(fromTime, d.bucket);
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
      if (affectedTokens.has(token)) pushTo(byToken, token, point);
    }
  }
  return byToken;
};
