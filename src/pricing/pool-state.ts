import {
  type Ratio,
  ratioFromReserves,
  ratioFromSqrtPriceX96,
  ratioToNumber,
  ratioValue,
} from "../decode/price.js";
import { balanceBeforeSwap, type SwapAmounts } from "./trade.js";
import type { GraphPool } from "./usd-prices.js";

/**
 * What the pricing keeps of a pool's state: the balances and price after its latest event, and
 * the balances just before the first swap of its latest block with swaps (for the depth).
 */
export type PoolState = {
  reserve0: bigint | null;
  reserve1: bigint | null;
  /** V3: after the latest event; null for V2 or while unknown. */
  sqrtPriceX96: bigint | null;
  /** The pool's latest block with a swap. */
  swapBlock: number | null;
  preSwapReserve0: bigint | null;
  preSwapReserve1: bigint | null;
  stateBlock: number | null;
  stateLogIndex: number | null;
  /** ms */
  stateTime: number | null;
};

/** An event's position and the pool's state after it (as stored on swaps and pool_events). */
export type StateEvent = {
  blockNumber: number;
  logIndex: number;
  /** ms */
  time: number;
  reserve0: bigint | null;
  reserve1: bigint | null;
  sqrtPriceX96: bigint | null;
};

/** A state after a swap or a pool event; a swap also moves the depth's "before" balances. */
export function applyEvent(state: PoolState, event: StateEvent, swap?: SwapAmounts): void {
  if (swap && state.swapBlock !== event.blockNumber) {
    state.swapBlock = event.blockNumber;
    state.preSwapReserve0 = balanceBeforeSwap(event.reserve0, swap.amount0In, swap.amount0Out);
    state.preSwapReserve1 = balanceBeforeSwap(event.reserve1, swap.amount1In, swap.amount1Out);
  }
  state.reserve0 = event.reserve0;
  state.reserve1 = event.reserve1;
  // Every stored event carries the full state after it (V3 price included): take it as it is, so
  // that the state rebuilt from a pool's latest remaining event is this one by construction.
  state.sqrtPriceX96 = event.sqrtPriceX96;
  state.stateBlock = event.blockNumber;
  state.stateLogIndex = event.logIndex;
  state.stateTime = event.time;
}

/** Exact spot price of token0 in token1: V2 from the reserves, V3 from sqrtPriceX96. Null when unknown. */
export function spotRatio0(
  protocol: "v2" | "v3",
  state: PoolState,
  decimals0: number | null,
  decimals1: number | null,
): Ratio | null {
  if (decimals0 === null || decimals1 === null) return null;
  if (protocol === "v3") {
    if (state.sqrtPriceX96 === null || state.sqrtPriceX96 === 0n) return null;
    return ratioFromSqrtPriceX96(state.sqrtPriceX96, decimals0, decimals1);
  }
  if (state.reserve0 === null || state.reserve1 === null || state.reserve1 === 0n) return null;
  return ratioFromReserves(state.reserve0, state.reserve1, decimals0, decimals1);
}

/** Spot price of token0 in token1, correctly rounded; null when unknown. */
export function spotPrice0(
  protocol: "v2" | "v3",
  state: PoolState,
  decimals0: number | null,
  decimals1: number | null,
): number | null {
  const r = spotRatio0(protocol, state, decimals0, decimals1);
  return r === null ? null : ratioValue(r);
}

/**
 * Depth of one side, decimal-adjusted: the smaller of its balance now and just before the first
 * swap of the pool's latest block with swaps, so that no trade (nor block of trades) lifts a
 * thin pool over the liquidity floor by itself. Null when unknown.
 */
export function depthOf(state: PoolState, side: 0 | 1, decimals: number | null): number | null {
  if (decimals === null) return null;
  const now = side === 0 ? state.reserve0 : state.reserve1;
  if (now === null) return null;
  const before = side === 0 ? state.preSwapReserve0 : state.preSwapReserve1;
  const swapped = state.swapBlock !== null;
  if (swapped && before === null) return null;
  const depth = swapped && before !== null && before < now ? before : now;
  return ratioToNumber(depth, 10n ** BigInt(decimals));
}

/** Refreshes a routing pool from its state. */
export function updateGraphPool(
  pool: GraphPool,
  protocol: "v2" | "v3",
  state: PoolState,
  decimals0: number | null,
  decimals1: number | null,
): void {
  pool.ratio0 = spotRatio0(protocol, state, decimals0, decimals1);
  pool.price0 = pool.ratio0 === null ? null : ratioValue(pool.ratio0);
  pool.depth0 = depthOf(state, 0, decimals0);
  pool.depth1 = depthOf(state, 1, decimals1);
  pool.stateBlock = state.stateBlock;
  pool.stateTime = state.stateTime;
}

/** Balances of a state, decimal-adjusted (for the pair's USD liquidity). */
export function balancesOf(
  state: PoolState,
  decimals0: number | null,
  decimals1: number | null,
): [number | null, number | null] {
  const units = (raw: bigint | null, decimals: number | null) =>
    raw === null || decimals === null ? null : ratioToNumber(raw, 10n ** BigInt(decimals));
  return [units(state.reserve0, decimals0), units(state.reserve1, decimals1)];
}
