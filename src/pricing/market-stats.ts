/**
 * 24-hour statistics of pairs and tokens, recomputed for the pools and tokens a batch touched
 * and, as the window slides, for those with trades in it. Never per request.
 */

import type { MarketPool } from "../model/index.js";
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
import type { GraphPool } from "./usd-prices.js";

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

/**
 * The market in memory as the statistics read it (pricing.ts keeps it equal to the database):
 * the pools with their states, the tokens' decimals, the routing graph (each token's pools, each
 * pool's spot price) and `token_prices.usd_price` as stored (absent: no row). With it, the pools
 * of repriced tokens and their USD liquidity are found and computed without reading the
 * database — the liquidity-only refresh otherwise reads every such pool with six joins.
 */
export type StatsMarket = {
  pools: ReadonlyMap<string, MarketPool>;
  decimals: ReadonlyMap<string, number | null>;
  graphPools: ReadonlyMap<string, GraphPool>;
  poolsOf: ReadonlyMap<string, readonly GraphPool[]>;
  usd: ReadonlyMap<string, number | null>;
  /** Decimal-adjusted balances per pool, kept while its raw reserves and decimals stay the same. */
  balances: Map<string, BalancesMemo>;
};

type BalancesMemo = {
  reserve0: bigint | null;
  reserve1: bigint | null;
  decimals0: number | null;
  decimals1: number | null;
  balances: [number | null, number | null];
};

/**
 * A pool's USD liquidity from the market in memory: the very inputs `loadPairStatsInputs` reads
 * (state, decimals, stored USD prices), through the same functions. Undefined: the pool has no
 * stored state (no row to update), as the liquidity-only refresh skips it.
 */
export function memoryPairLiquidity(market: StatsMarket, address: string): number | null | undefined {
  const pool = market.pools.get(address);
  if (!pool || pool.state.stateBlock === null) return undefined;
  const decimals0 = market.decimals.get(pool.token0) ?? null;
  const decimals1 = market.decimals.get(pool.token1) ?? null;
  const { reserve0, reserve1 } = pool.state;
  let memo = market.balances.get(address);
  if (
    !memo ||
    memo.reserve0 !== reserve0 ||
    memo.reserve1 !== reserve1 ||
    memo.decimals0 !== decimals0 ||
    memo.decimals1 !== decimals1
  ) {
    memo = {
      reserve0,
      reserve1,
      decimals0,
      decimals1,
      balances: balancesOf(pool.state, decimals0, decimals1),
    };
    market.balances.set(address, memo);
  }
  const graphPool = market.graphPools.get(address);
  const price0 = graphPool ? graphPool.price0 : spotPrice0(pool.protocol, pool.state, decimals0, decimals1);
  return pairLiquidityUsd({
    reserve0: memo.balances[0],
    reserve1: memo.balances[1],
    price0,
    usd0: market.usd.get(pool.token0) ?? null,
    usd1: market.usd.get(pool.token1) ?? null,
  });
}

/** Brings the statistics touched by `changes` up to date at `now` (ms). */
export async function refreshChangedStats(
  client: DbClient,
  chainId: number,
  changes: StatsChanges,
  now: number,
  liquidityFloorUsd: number,
  step: <T>(name: string, run: () => Promise<T>) => Promise<T> = (_name, run) => run(),
  market?: StatsMarket,
): Promise<void> {
  const liquidityPools = new Set(changes.movedPools);
  if (market) {
    for (const token of changes.repricedTokens) {
      for (const pool of market.poolsOf.get(token) ?? []) liquidityPools.add(pool.address);
    }
  } else {
    const repricedPools = await step("stats_pools_of", () =>
      poolsOfTokens(client, chainId, [...changes.repricedTokens]),
    );
    for (const p of repricedPools) liquidityPools.add(p.pool);
  }
  for (const pool of changes.tradedPools) liquidityPools.delete(pool);
  const touchedPools = [...changes.tradedPools, ...liquidityPools];
  if (touchedPools.length === 0 && changes.repricedTokens.size === 0) return;
  await lockChainStats(client, chainId);
  await step("stats_traded", () => refreshPairStats(client, chainId, [...changes.tradedPools], now, true));
  const tokens = new Set(changes.repricedTokens);
  if (market) {
    await step("stats_liquidity", async () => {
      const rows: PairStatsRow[] = [];
      for (const pool of [...liquidityPools].sort()) {
        const liquidityUsd = memoryPairLiquidity(market, pool);
        if (liquidityUsd !== undefined) rows.push({ pool, liquidityUsd, window: null });
      }
      await savePairStats(client, chainId, rows, now);
    });
    for (const address of touchedPools) {
      const pool = market.pools.get(address);
      if (!pool) continue;
      tokens.add(pool.token0);
      tokens.add(pool.token1);
    }
  } else {
    await step("stats_liquidity", () => refreshPairStats(client, chainId, [...liquidityPools], now, false));
    for (const p of await step("stats_tokens_of", () => tokensOfPools(client, chainId, touchedPools))) {
      tokens.add(p.token0);
      tokens.add(p.token1);
    }
  }
  await step("stats_tokens", () => refreshTokenStats(client, chainId, [...tokens], now, liquidityFloorUsd));
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
