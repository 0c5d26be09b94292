/**
 * Keeps the market windows (5m, 1h, 6h, 24h) of pairs and tokens current, inside the pricing's
 * transactions:
 *
 * - after a batch is priced, its swaps (read back from `swaps`, priced) are folded into the
 *   minute and hour buckets of their pools and tokens and into the makers' latest trades, and the
 *   windows of those pools and tokens are recomputed;
 * - as minutes pass (`slideMarketWindows`, every minute), the pools and tokens whose trades left a
 *   window are recomputed: those that traded in the minutes that fell out, found by the swaps'
 *   time index — nothing else changes by the clock alone;
 * - after a rollback, the buckets and maker rows that held a removed trade are rebuilt from the
 *   remaining swaps, and the windows of the affected pools and tokens recomputed.
 *
 * Every figure is a function of the stored swaps and the window's minute only (exact volume sums,
 * counts, latest trades), so a database grown batch by batch, rolled back, or indexed afresh
 * answers the same. Writers of a chain's statistics are serialised by the stats lock.
 */
import type { WindowTrade } from "../model/index.js";
import { loadCheckpoint } from "../store/chain-state.js";
import type { Queryable } from "../store/db.js";
import {
  deleteMakers,
  makersAbove,
  replaceMakerLasts,
  saveMakerLasts,
  tokenMakerLastsFromPools,
} from "../store/makers.js";
import {
  firstSwapBlockFrom,
  lastMakerSwaps,
  loadPoolWindowTrades,
  loadTokenWindowTrades,
  loadWindowTrades,
  poolsTradedIn,
} from "../store/market-trades.js";
import {
  getMarketSync,
  loadWindowInputs,
  saveWindows,
  setMarketBuilt,
  setMarketMinute,
  windowsToRecompute,
} from "../store/market-windows.js";
import { lockChainStats } from "../store/stats.js";
import { chunkEndBlock } from "../store/swaps.js";
import { addToBuckets, type BucketKind, deleteBucketsAbove } from "../store/trade-buckets.js";
import { KEY_BLOCK_FACTOR, lastKeyOfBlock } from "./trade.js";
import {
  bucketPartials,
  bucketRanges,
  countedFrom,
  emptyWindowFigures,
  expiringRanges,
  makerLasts,
  windowFigures,
  windowMinute,
  windowSpans,
} from "./windows.js";

/** Swaps per chunk when folding stored swaps (a database migrated with history folds it all once). */
const FOLD_SWAPS = 20_000;
const DAY = 86_400_000;

/** What keeping the windows current did: for the logs and the benchmark. */
export type MarketWork = {
  /** Swaps folded. */
  trades: number;
  /** Rows written: buckets, maker rows and windows. */
  rows: number;
  /** Pools and tokens whose windows were recomputed. */
  pools: number;
  tokens: number;
};

/** No work: what a batch that folds nothing reports. */
export const emptyWork = (): MarketWork => ({ trades: 0, rows: 0, pools: 0, tokens: 0 });

/**
 * Folds trades (ascending) into the buckets and maker rows of their pools and tokens; returns the
 * rows written. Trades before `from` (countedFrom) go to their minute buckets only.
 */
async function foldTrades(
  db: Queryable,
  chainId: number,
  trades: readonly WindowTrade[],
  from: number,
): Promise<number> {
  let rows = 0;
  for (const kind of ["pool", "token"] as const) {
    rows += await addToBuckets(db, chainId, kind, bucketPartials(trades, kind, from));
    rows += await saveMakerLasts(db, chainId, kind, makerLasts(trades, kind, from));
  }
  return rows;
}

/**
 * After a batch (or catch-up) has been priced up to `toBlock`: folds the priced swaps not folded
 * yet (from market_sync.built_block on; a chain seen for the first time, or a database migrated
 * with history, folds everything stored) and recomputes the windows of the pools and tokens they
 * touched. `clock` gives now (ms); it is read under the stats lock.
 */
export async function updateMarketWindows(
  db: Queryable,
  chainId: number,
  toBlock: number,
  clock: () => number,
): Promise<MarketWork> {
  const work = emptyWork();
  const sync = await getMarketSync(db, chainId);
  let cursor = sync?.builtBlock ?? -1;
  if (cursor >= toBlock) return work;
  // What the windows can still count (never before the minute they were slid to): a backfill's
  // trades older than a day fill their minute buckets only.
  const from = countedFrom(Math.max(clock(), sync?.minute ?? Number.NEGATIVE_INFINITY));
  const pools = new Set<string>();
  const tokens = new Set<string>();
  while (cursor < toBlock) {
    const end = await chunkEndBlock(db, chainId, cursor, toBlock, FOLD_SWAPS);
    const trades = await loadWindowTrades(db, chainId, cursor, end);
    work.rows += await foldTrades(db, chainId, trades, from);
    for (const t of trades) {
      pools.add(t.pool);
      tokens.add(t.token0);
      tokens.add(t.token1);
    }
    work.trades += trades.length;
    cursor = end;
  }
  await setMarketBuilt(db, chainId, toBlock);
  const refreshed = await refreshMarketWindows(
    db,
    chainId,
    { pools: [...pools], tokens: [...tokens] },
    clock,
  );
  return { ...work, rows: work.rows + refreshed.rows, pools: refreshed.pools, tokens: refreshed.tokens };
}

/**
 * Recomputes the windows of `pools` and `tokens` at now and stores them (a pool or token left
 * without any trade keeps its row, its figures those of no trade). Now is the clock's, read under the stats lock, and never
 * before the minute the windows were last slid to: a row is never older than the slide.
 */
export async function refreshMarketWindows(
  db: Queryable,
  chainId: number,
  owners: { pools: readonly string[]; tokens: readonly string[] },
  clock: () => number,
): Promise<MarketWork> {
  const work = emptyWork();
  if (owners.pools.length === 0 && owners.tokens.length === 0) return work;
  await lockChainStats(db, chainId);
  const slid = (await getMarketSync(db, chainId))?.minute ?? null;
  const now = Math.max(clock(), slid ?? Number.NEGATIVE_INFINITY);
  work.rows += await recompute(db, chainId, "pool", owners.pools, now);
  work.rows += await recompute(db, chainId, "token", owners.tokens, now);
  return { ...work, pools: owners.pools.length, tokens: owners.tokens.length };
}

async function recompute(
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  owners: readonly string[],
  now: number,
): Promise<number> {
  if (owners.length === 0) return 0;
  const spans = windowSpans(now);
  const minute = windowMinute(now);
  const inputs = await loadWindowInputs(db, chainId, kind, owners, spans, bucketRanges(spans));
  // An owner left without any trade (a rollback): its figures are those of no trade.
  const rows = inputs.map((i) => ({
    owner: i.owner,
    minute,
    windows: i.firstTradeAt === null ? emptyWindowFigures() : windowFigures(i),
    last: i.last,
    firstTradeAt: i.firstTradeAt,
  }));
  return saveWindows(db, chainId, kind, rows);
}

/**
 * What sliding the windows to now's minute recomputes: the pools and tokens with a trade in the
 * minutes that left a window since the last slide (found through the swaps' time index). A first
 * slide, a gap of more than a day or a clock that went back: every row that may have changed
 * (market-windows store: windowsToRecompute). Null: slid to this minute already.
 */
export async function planMarketSlide(
  db: Queryable,
  chainId: number,
  now: number,
): Promise<{ minute: number; pools: string[]; tokens: string[] } | null> {
  const minute = windowMinute(now);
  const previous = (await getMarketSync(db, chainId))?.minute ?? null;
  if (previous === minute) return null;
  if (previous !== null && previous < minute && minute - previous <= DAY) {
    const traded = await poolsTradedIn(db, chainId, expiringRanges(previous, minute));
    return {
      minute,
      pools: traded.map((p) => p.pool),
      tokens: [...new Set(traded.flatMap((p) => [p.token0, p.token1]))],
    };
  }
  return {
    minute,
    pools: await windowsToRecompute(db, chainId, "pool", minute),
    tokens: await windowsToRecompute(db, chainId, "token", minute),
  };
}

/**
 * Slides the windows to now's minute in the caller's transaction, under the stats lock (the
 * runtime's slide does the same in short transactions: pricing/slide.ts).
 */
export async function slideMarketWindows(db: Queryable, chainId: number, now: number): Promise<MarketWork> {
  await lockChainStats(db, chainId);
  const plan = await planMarketSlide(db, chainId, now);
  if (!plan) return emptyWork();
  await setMarketMinute(db, chainId, plan.minute);
  return refreshMarketWindows(db, chainId, plan, () => now);
}

/**
 * After a rollback to `ancestorBlock` (the swaps above it are deleted): rebuilds the buckets of
 * `pools` and their tokens that held a removed trade, from the remaining swaps; recomputes the
 * maker rows whose latest trade was removed (from the remaining swaps of the last day: older
 * trades count in no window); lowers market_sync.built_block; recomputes the windows.
 */
export async function rollbackMarketWindows(
  db: Queryable,
  chainId: number,
  ancestorBlock: number,
  affected: readonly { pool: string; token0: string; token1: string }[],
  clock: () => number,
): Promise<void> {
  const sync = await getMarketSync(db, chainId);
  if (sync === null || sync.builtBlock <= ancestorBlock) return;
  const pools = affected.map((a) => a.pool);
  const tokens = [...new Set(affected.flatMap((a) => [a.token0, a.token1]))];
  const lastKey = lastKeyOfBlock(ancestorBlock);

  // Buckets: those that held a removed trade, rebuilt whole from the remaining swaps.
  const deletedPools = await deleteBucketsAbove(db, chainId, "pool", pools, lastKey);
  const poolFrom = new Map<string, number>();
  for (const d of deletedPools) {
    const block = Math.floor(d.firstKey / KEY_BLOCK_FACTOR);
    poolFrom.set(d.owner, Math.min(poolFrom.get(d.owner) ?? block, block));
  }
  const poolTrades = await loadPoolWindowTrades(
    db,
    chainId,
    [...poolFrom].map(([pool, fromBlock]) => ({ pool, fromBlock })),
    ancestorBlock,
  );
  await rebuildBuckets(db, chainId, "pool", poolTrades, deletedPools);
  const deletedTokens = await deleteBucketsAbove(db, chainId, "token", tokens, lastKey);
  if (deletedTokens.length > 0) {
    const fromBlock = Math.min(...deletedTokens.map((d) => Math.floor(d.firstKey / KEY_BLOCK_FACTOR)));
    const affectedTokens = [...new Set(deletedTokens.map((d) => d.owner))];
    const tokenTrades = await loadTokenWindowTrades(db, chainId, affectedTokens, fromBlock, ancestorBlock);
    await rebuildBuckets(db, chainId, "token", tokenTrades, deletedTokens);
  }

  // Makers whose latest trade was removed: their latest remaining one within the last day.
  const checkpoint = await loadCheckpoint(db, chainId);
  const ancestorTime = checkpoint?.block === ancestorBlock && checkpoint.time ? checkpoint.time.getTime() : 0;
  const horizon = windowMinute(clock()) - DAY;
  const poolRows = await makersAbove(db, chainId, "pool", pools, ancestorBlock, ancestorTime);
  const horizonBlock = await firstSwapBlockFrom(db, chainId, horizon);
  const remaining =
    horizonBlock === null || horizonBlock > ancestorBlock
      ? []
      : await lastMakerSwaps(
          db,
          chainId,
          poolRows.map((r) => ({ pool: r.owner, maker: r.maker })),
          horizonBlock,
          ancestorBlock,
        );
  await deleteMakers(db, chainId, "pool", poolRows);
  await replaceMakerLasts(
    db,
    chainId,
    "pool",
    remaining.map((r) => ({ owner: r.pool, maker: r.maker, time: r.time, block: r.block })),
  );
  const tokenRows = await makersAbove(db, chainId, "token", tokens, ancestorBlock, ancestorTime);
  const tokenLasts = await tokenMakerLastsFromPools(db, chainId, tokenRows);
  await deleteMakers(db, chainId, "token", tokenRows);
  await replaceMakerLasts(db, chainId, "token", tokenLasts);

  await setMarketBuilt(db, chainId, ancestorBlock);
  await refreshMarketWindows(db, chainId, { pools, tokens }, clock);
}

/** Writes the deleted buckets again from `trades` (all remaining trades of each, ascending). */
async function rebuildBuckets(
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  trades: readonly WindowTrade[],
  deleted: readonly { owner: string; resolution: number; bucket: number }[],
): Promise<void> {
  const wanted = new Set(deleted.map((d) => `${d.owner}|${d.resolution}|${d.bucket}`));
  const partials = bucketPartials(trades, kind).filter((p) =>
    wanted.has(`${p.owner}|${p.resolution}|${p.bucket}`),
  );
  await addToBuckets(db, chainId, kind, partials);
}
