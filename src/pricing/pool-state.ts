import { type Ratio, ratioValue } from "../exact/ratio.js";
import type { ExactDecimal } from "../internal/exact-decimal.js";
import type { MarketPool, PoolPriceState, ProtocolName, StateEvent, SwapAmounts } from "../model/index.js";
import { familyOf } from "../protocols/index.js";
import { balanceDepth } from "../protocols/shared.js";
import { balanceBeforeSwap } from "./trade.js";
import type { GraphPool } from "./usd-prices.js";

/** A state after a swap or a pool event; a swap also moves the depth's "before" balances. */
export function applyEvent(state: PoolPriceState, event: StateEvent, swap?: SwapAmounts): void {
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

/**
 * Exact spot price of token0 in token1, as the pool's family reads it from the state (V2 from the
 * reserves, V3 from sqrtPriceX96). Null when unknown.
 */
export function spotRatio0(
  protocol: ProtocolName,
  state: PoolPriceState,
  decimals0: number | null,
  decimals1: number | null,
): Ratio | null {
  if (decimals0 === null || decimals1 === null) return null;
  // Without the pool's traits: a pool whose price needs them (a PancakeSwap Infinity bin pool's
  // bin step) answers null here; the routing graph asks with them (updateGraphPool).
  return familyOf(protocol).spotRatio0(state, decimals0, decimals1, {});
}

/** Spot price of token0 in token1, correctly rounded; null when unknown. */
export function spotPrice0(
  protocol: ProtocolName,
  state: PoolPriceState,
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
export function depthOf(state: PoolPriceState, side: 0 | 1, decimals: number | null): number | null {
  return decimals === null ? null : balanceDepth(state, side, decimals);
}

/**
 * Refreshes a routing pool from its state; its version moves when a figure changed (a new exact
 * ratio counts as a change, as the price memo compared it by identity).
 */
export function updateGraphPool(
  pool: GraphPool,
  market: Pick<MarketPool, "protocol" | "hooks" | "parameters">,
  state: PoolPriceState,
  decimals0: number | null,
  decimals1: number | null,
): void {
  const family = familyOf(market.protocol);
  // A pool whose amounts may not be what was paid (a V4 hook returning deltas) never prices nor
  // routes: its price and depth stay unknown to the graph.
  const trusted = !family.rewritesAmounts(market);
  const ratio0 =
    !trusted || decimals0 === null || decimals1 === null
      ? null
      : family.spotRatio0(state, decimals0, decimals1, market);
  const price0 = ratio0 === null ? null : ratioValue(ratio0);
  // What the pool's liquidity is worth for the floor, as its family tells it.
  const depth0 = !trusted || decimals0 === null ? null : family.depth(state, 0, decimals0);
  const depth1 = !trusted || decimals1 === null ? null : family.depth(state, 1, decimals1);
  if (
    pool.ratio0 !== ratio0 ||
    pool.price0 !== price0 ||
    pool.depth0 !== depth0 ||
    pool.depth1 !== depth1 ||
    pool.stateBlock !== state.stateBlock ||
    pool.stateTime !== state.stateTime
  ) {
    pool.version = (pool.version ?? 0) + 1;
  }
  pool.ratio0 = ratio0;
  pool.price0 = price0;
  pool.depth0 = depth0;
  pool.depth1 = depth1;
  pool.stateBlock = state.stateBlock;
  pool.stateTime = state.stateTime;
}

/** Balances of a state exactly, raw / 10^decimals (for the pair's USD liquidity); null where unknown. */
export function exactBalancesOf(
  state: PoolPriceState,
  decimals0: number | null,
  decimals1: number | null,
): [ExactDecimal | null, ExactDecimal | null] {
  const units = (raw: bigint | null, decimals: number | null) =>
    raw === null || decimals === null ? null : { digits: raw, scale: decimals };
  return [units(state.reserve0, decimals0), units(state.reserve1, decimals1)];
}
