/**
 * The market as the pricing reads it, kept in memory between batches: every pool with its
 * pricing state, the tokens' decimals and the routing graph over them. Loading it from the
 * database costs a read of every pool of the chain, so it is built once (at start, after a
 * rollback) and then moved by each batch's events; per batch only the pools it touches cost.
 *
 * The routing graph lists each token's pools in address order, the order a fresh load gives,
 * so that the prices computed from it are those a fresh load computes, bit for bit (sums and
 * medians are taken in that order).
 */
import type { MarketPool } from "../model/index.js";
import { updateGraphPool } from "./pool-state.js";
import { createPriceMemo, type GraphPool, noteNewest, type PriceMemo } from "./usd-prices.js";

export type MarketState = {
  pools: Map<string, MarketPool>;
  /** Decimals of every token of a pool (null: unknown). */
  decimals: Map<string, number | null>;
  graphPools: Map<string, GraphPool>;
  /** The routing graph (a RoutingGraph) over the pools, built once and moved in place. */
  graph: {
    decimals: Map<string, number | null>;
    poolsOf: Map<string, GraphPool[]>;
    /** Kept by `addPools` and every move of a pool (`noteNewest`). */
    newestOf: Map<string, [number, number | null]>;
  };
  /** Token evaluations of the previous price computation (usd-prices.ts `computeUsdPrices`). */
  memo: PriceMemo;
};

/** The market state of loaded pools (address order) and decimals. */
export function createMarketState(
  pools: Map<string, MarketPool>,
  decimals: Map<string, number | null>,
): MarketState {
  const state: MarketState = {
    pools: new Map(),
    decimals,
    graphPools: new Map(),
    graph: { decimals, poolsOf: new Map(), newestOf: new Map() },
    memo: createPriceMemo(),
  };
  addPools(state, pools, decimals);
  return state;
}

/**
 * Adds pools the state does not hold yet (pools stored after it was loaded), with their tokens'
 * decimals as stored now; a token whose decimals became known refreshes its pools.
 */
export function addPools(
  state: MarketState,
  pools: ReadonlyMap<string, MarketPool>,
  decimals: ReadonlyMap<string, number | null>,
): void {
  for (const [token, value] of decimals) setDecimals(state, token, value);
  for (const pool of pools.values()) {
    if (state.pools.has(pool.address)) continue;
    // One string per token for all its pools (each loaded row brings its own copy: 64 bytes).
    pool.token0 = sharedToken(state, pool.token0);
    pool.token1 = sharedToken(state, pool.token1);
    state.pools.set(pool.address, pool);
    const graphPool = graphPoolOf(pool, state.decimals);
    state.graphPools.set(pool.address, graphPool);
    // Both sides, as a fresh graph lists them (a pool of one token twice in its list).
    for (const token of [pool.token0, pool.token1]) {
      let list = state.graph.poolsOf.get(token);
      if (!list) {
        list = [];
        state.graph.poolsOf.set(token, list);
      }
      insertSorted(list, graphPool);
    }
    noteNewest(state.graph, graphPool);
  }
}

/** The string object the market already holds for a token (from its first pool), else `token`. */
function sharedToken<T extends string>(state: MarketState, token: T): T {
  const first = state.graph.poolsOf.get(token)?.[0];
  if (!first) return token;
  return (first.token0 === token ? first.token0 : first.token1) as T;
}

/** Records a token's decimals; when they change, its pools' routing figures follow. */
export function setDecimals(state: MarketState, token: string, value: number | null): void {
  const known = state.decimals.has(token);
  if (known && state.decimals.get(token) === value) return;
  state.decimals.set(token, value);
  if (!known) return;
  for (const graphPool of state.graph.poolsOf.get(token) ?? []) {
    refreshGraphPool(state, state.pools.get(graphPool.address) as MarketPool, graphPool);
  }
}

/** Refreshes a pool's routing figures from its state and its tokens' decimals. */
export function refreshGraphPool(state: MarketState, pool: MarketPool, graphPool: GraphPool): void {
  updateGraphPool(
    graphPool,
    pool,
    pool.state,
    state.decimals.get(pool.token0) ?? null,
    state.decimals.get(pool.token1) ?? null,
  );
  noteNewest(state.graph, graphPool);
}

/** A pool as the routing graph sees it, from its current state. */
export function graphPoolOf(pool: MarketPool, decimals: ReadonlyMap<string, number | null>): GraphPool {
  const graphPool: GraphPool = {
    address: pool.address,
    dex: pool.dex,
    token0: pool.token0,
    token1: pool.token1,
    price0: null,
    // Every field from the start (none added later: no out-of-object property store per pool).
    ratio0: null,
    depth0: null,
    depth1: null,
    stateBlock: null,
    stateTime: null,
    version: 0,
  };
  updateGraphPool(
    graphPool,
    pool,
    pool.state,
    decimals.get(pool.token0) ?? null,
    decimals.get(pool.token1) ?? null,
  );
  return graphPool;
}

/** Inserts a pool into a token's list, keeping address order (after equal addresses). */
function insertSorted(list: GraphPool[], pool: GraphPool): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as GraphPool).address > pool.address) hi = mid;
    else lo = mid + 1;
  }
  list.splice(lo, 0, pool);
}
