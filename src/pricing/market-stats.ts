/**
 * 24-hour statistics of pairs and tokens, recomputed for the pools and tokens a batch touched
 * and, as the window slides, for those with trades in it. Never per request.
 */
import type { Db, DbClient, Queryable } from "../store/db.js";
import { withTransaction } from "../store/db.js";
import { poolsOfTokens, tokensOfPools } from "../store/pools.js";
import {
  loadPairStatsInputs,
  loadTokenStatsInputs,
  lockChainStats,
  type PairStatsRow,
  poolsWithTradesInWindow,
  savePairStats,
  saveTokenStats,
} from "../store/stats.js";
import { balancesOf, spotPrice0 } from "./pool-state.js";
import { pairLiquidityUsd, percentChange, statsWindow } from "./stats.js";

/**
 * Recomputes pair statistics at `now` (ms). `withWindow`: the 24-hour figures too (volume,
 * change, buys, sells); otherwise only the USD liquidity (prices moved, trades did not).
 */
export async function refreshPairStats(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
  now: number,
  withWindow: boolean,
): Promise<void> {
  if (pools.length === 0) return;
  const window = statsWindow(now);
  const inputs = await loadPairStatsInputs(db, chainId, [...pools].sort(), window, withWindow);
  // A pool without any event has no liquidity to update (and gets its row with its first event).
  const rows: PairStatsRow[] = inputs
    .filter((r) => withWindow || r.state !== null)
    .map((r) => {
      const [reserve0, reserve1] = r.state ? balancesOf(r.state, r.decimals0, r.decimals1) : [null, null];
      const price0 = r.state ? spotPrice0(r.protocol, r.state, r.decimals0, r.decimals1) : null;
      return {
        pool: r.pool,
        liquidityUsd: pairLiquidityUsd({ reserve0, reserve1, price0, usd0: r.usd0, usd1: r.usd1 }),
        window: r.window
          ? {
              volumeUsd: r.window.volumeUsd,
              buys: r.window.buys,
              sells: r.window.sells,
              // Token0 in token1: the last trade's price against the last one before the window.
              priceChange: percentChange(r.closeBefore ?? r.openIn, r.closeLast),
            }
          : null,
      };
    });
  await savePairStats(db, chainId, rows, now);
}

/** Recomputes token statistics at `now` (ms) from their pools' pair statistics, prices and series. */
export async function refreshTokenStats(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  now: number,
  liquidityFloorUsd: number,
): Promise<void> {
  if (tokens.length === 0) return;
  const window = statsWindow(now);
  const inputs = await loadTokenStatsInputs(db, chainId, [...tokens].sort(), window.start, liquidityFloorUsd);
  await saveTokenStats(
    db,
    chainId,
    inputs.map((r) => ({
      token: r.token,
      // The USD price now against the token's USD series when the window starts.
      priceChange: percentChange(r.closeBefore ?? r.openIn, r.usdPrice),
      volumeUsd: r.volumeUsd,
      liquidityUsd: r.liquidityUsd,
    })),
    now,
  );
}

/** What a batch or a rollback changed, for the statistics. */
export type StatsChanges = {
  /** Pools with trades added or removed: their 24-hour figures. */
  tradedPools: Set<string>;
  /** Pools whose state moved without trades (liquidity events): their liquidity. */
  movedPools: Set<string>;
  /** Tokens whose USD price row changed: the liquidity of their pools, their own figures. */
  repricedTokens: Set<string>;
};

export function emptyStatsChanges(): StatsChanges {
  return { tradedPools: new Set(), movedPools: new Set(), repricedTokens: new Set() };
}

/** Brings the statistics touched by `changes` up to date at `now` (ms). */
export async function refreshChangedStats(
  client: DbClient,
  chainId: number,
  changes: StatsChanges,
  now: number,
  liquidityFloorUsd: number,
): Promise<void> {
  const repricedPools = await poolsOfTokens(client, chainId, [...changes.repricedTokens]);
  const liquidityPools = new Set([...changes.movedPools, ...repricedPools.map((p) => p.pool)]);
  for (const pool of changes.tradedPools) liquidityPools.delete(pool);
  const touchedPools = [...changes.tradedPools, ...liquidityPools];
  if (touchedPools.length === 0 && changes.repricedTokens.size === 0) return;
  await lockChainStats(client, chainId);
  await refreshPairStats(client, chainId, [...changes.tradedPools], now, true);
  await refreshPairStats(client, chainId, [...liquidityPools], now, false);
  const tokens = new Set(changes.repricedTokens);
  for (const p of await tokensOfPools(client, chainId, touchedPools)) {
    tokens.add(p.token0);
    tokens.add(p.token1);
  }
  await refreshTokenStats(client, chainId, [...tokens], now, liquidityFloorUsd);
}

/**
 * Slides the 24-hour window to `now`: recomputes the statistics of every pool with trades in
 * the window and of their tokens. The runtime calls it about every minute.
 */
export async function refreshStats(
  db: Db | DbClient,
  chainId: number,
  now: Date,
  options: { liquidityFloorUsd: number },
): Promise<{ pools: number; tokens: number }> {
  const slide = async (client: Queryable) => {
    await lockChainStats(client, chainId);
    const pools = await poolsWithTradesInWindow(client, chainId);
    await refreshPairStats(client, chainId, pools, now.getTime(), true);
    const tokens = new Set<string>();
    for (const p of await tokensOfPools(client, chainId, pools)) {
      tokens.add(p.token0);
      tokens.add(p.token1);
    }
    await refreshTokenStats(client, chainId, [...tokens], now.getTime(), options.liquidityFloorUsd);
    return { pools: pools.length, tokens: tokens.size };
  };
  // A pool runs it in its own transaction; a client is already in the caller's.
  return "release" in db ? slide(db) : withTransaction(db, slide);
}
