import { ratioFromSqrtPriceX96 } from "../decode/price.js";
import type { Hex } from "../decode/types.js";
import { uintAt, wordCount } from "../decode/words.js";
import { type Ratio, toUnits } from "../exact/ratio.js";
import type { PoolPriceState, PoolState } from "../model/index.js";
import type { SwapTrade } from "./types.js";

/**
 * Depth of one side from the pool's balances, decimal-adjusted: the smaller of its balance now
 * and just before the first swap of the pool's latest block with swaps, so that no trade (nor
 * block of trades) lifts a thin pool over the liquidity floor by itself. Null when unknown.
 */
export function balanceDepth(state: PoolPriceState, side: 0 | 1, decimals: number): number | null {
  const now = side === 0 ? state.reserve0 : state.reserve1;
  if (now === null) return null;
  const before = side === 0 ? state.preSwapReserve0 : state.preSwapReserve1;
  const swapped = state.swapBlock !== null;
  if (swapped && before === null) return null;
  const depth = swapped && before !== null && before < now ? before : now;
  return toUnits(depth, decimals);
}

/** The i-th word of an eth_call's answer; null when the call failed or answered less. */
export const answerWord = (data: Hex | null | undefined, i: number): bigint | null =>
  data && wordCount(data) > i ? uintAt(data, i) : null;

/** A pool's state at `block` (no event yet: a null logIndex): the given fields, the others unknown. */
export function stateAt(
  block: number,
  known: Partial<Omit<PoolState, "block" | "logIndex">> = {},
): PoolState {
  return {
    reserve0: null,
    reserve1: null,
    sqrtPriceX96: null,
    liquidity: null,
    tick: null,
    ...known,
    block,
    logIndex: null,
  };
}

/** A copy of the state before an event, at the event's position: the family's nextState changes it from there. */
export function stateAfter(before: PoolState, log: { blockNumber: number; logIndex: number }): PoolState {
  return {
    reserve0: before.reserve0,
    reserve1: before.reserve1,
    sqrtPriceX96: before.sqrtPriceX96,
    liquidity: before.liquidity,
    tick: before.tick,
    block: log.blockNumber,
    logIndex: log.logIndex,
  };
}

/** a + b, where an unknown a stays unknown. */
export const addKnown = (a: bigint | null, b: bigint): bigint | null => (a === null ? null : a + b);

/**
 * A concentrated-liquidity swap as a trade, from the pool's signed balance changes (positive:
 * paid into the pool; V3's sign, the negated deltas of V4's swapper).
 */
export function signedTrade(swap: {
  sender: Hex;
  recipient: Hex;
  into0: bigint;
  into1: bigint;
  sqrtPriceX96: bigint;
  liquidity: bigint;
  tick: number;
}): SwapTrade {
  return {
    sender: swap.sender,
    recipient: swap.recipient,
    amount0In: swap.into0 > 0n ? swap.into0 : 0n,
    amount1In: swap.into1 > 0n ? swap.into1 : 0n,
    amount0Out: swap.into0 < 0n ? -swap.into0 : 0n,
    amount1Out: swap.into1 < 0n ? -swap.into1 : 0n,
    sqrtPriceX96: swap.sqrtPriceX96,
    liquidity: swap.liquidity,
    tick: swap.tick,
  };
}

/** The spot price of token0 in token1 from a concentrated-liquidity pool's sqrtPriceX96; null before it has one. */
export function sqrtPriceSpot(state: PoolPriceState, decimals0: number, decimals1: number): Ratio | null {
  if (state.sqrtPriceX96 === null || state.sqrtPriceX96 === 0n) return null;
  return ratioFromSqrtPriceX96(state.sqrtPriceX96, decimals0, decimals1);
}
