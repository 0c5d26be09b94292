import type { Hex } from "../decode/types.js";
import { uintAt, wordCount } from "../decode/words.js";
import { ratioToNumber } from "../exact/ratio.js";
import type { PoolPriceState } from "../model/index.js";

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
  return ratioToNumber(depth, 10n ** BigInt(decimals));
}

/** The i-th word of an eth_call's answer; null when the call failed or answered less. */
export const answerWord = (data: Hex | null | undefined, i: number): bigint | null =>
  data && wordCount(data) > i ? uintAt(data, i) : null;
