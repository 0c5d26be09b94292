/**
 * The exact arithmetic of the synthetic chain: TickMath and SqrtPriceMath are the pipeline's own
 * (src/protocols/tick-math.ts), the swap and range helpers the families' generators share
 * (src/protocols/shape.ts), so that the chain emits what the decoders read back with the very
 * same arithmetic.
 */

export {
  clSwapExactIn as v3SwapExactIn,
  fullRangeTicks,
  isqrt,
  MAX_SQRT_RATIO,
  MIN_SQRT_RATIO,
  tickAtSqrtRatio,
} from "../protocols/shape.js";
export {
  amount0Delta,
  amount1Delta,
  MAX_TICK,
  MIN_TICK,
  Q96,
  sqrtPriceAtTick as sqrtRatioAtTick,
} from "../protocols/tick-math.js";
export { v2AmountOut } from "../protocols/uniswap-v2/shape.js";
