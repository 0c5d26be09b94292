/**
 * Exact Uniswap arithmetic in bigint: TickMath (as in v3-core's TickMath.sol), the SqrtPriceMath
 * steps of a swap inside one liquidity range, the amounts of a liquidity change, and V2's
 * getAmountOut. The synthetic chain uses these so that its logs are what the contracts would emit.
 */

import {
  amount0Delta,
  amount1Delta,
  divUp,
  MAX_TICK,
  MIN_TICK,
  Q96,
  sqrtPriceAtTick as sqrtRatioAtTick,
} from "../protocols/tick-math.js";

// TickMath and SqrtPriceMath are the pipeline's own (src/protocols/tick-math.ts): the synthetic
// chain emits what the decoders read back with the very same arithmetic.
export { amount0Delta, amount1Delta, MAX_TICK, MIN_TICK, Q96, sqrtRatioAtTick };
export const MIN_SQRT_RATIO = 4295128739n;
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;

/**
 * TickMath.getTickAtSqrtRatio: the greatest tick whose sqrt ratio is ≤ sqrtPriceX96, that is
 * floor(log_1.0001(price)). A float estimate, then corrected exactly against sqrtRatioAtTick.
 */
export function tickAtSqrtRatio(sqrtPriceX96: bigint): number {
  if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 >= MAX_SQRT_RATIO)
    throw new RangeError(`sqrtPriceX96 ${sqrtPriceX96} out of range`);
  const price = (Number(sqrtPriceX96) / 2 ** 96) ** 2;
  let tick = Math.max(MIN_TICK, Math.min(MAX_TICK - 1, Math.floor(Math.log(price) / Math.log(1.0001))));
  while (tick > MIN_TICK && sqrtRatioAtTick(tick) > sqrtPriceX96) tick--;
  while (tick < MAX_TICK - 1 && sqrtRatioAtTick(tick + 1) <= sqrtPriceX96) tick++;
  return tick;
}

/** The widest ticks a position may use at this spacing (what a "full range" position uses). */
export function fullRangeTicks(tickSpacing: number): { tickLower: number; tickUpper: number } {
  return {
    tickLower: Math.ceil(MIN_TICK / tickSpacing) * tickSpacing,
    tickUpper: Math.floor(MAX_TICK / tickSpacing) * tickSpacing,
  };
}

/**
 * An exact-input V3 swap that stays inside one liquidity range (the synthetic pools hold one
 * full-range position, so liquidity is constant between Mint and Burn). `amountIn` includes the
 * fee (`fee` in hundredths of a bip). Returns the signed pool amounts and the new price and tick,
 * as Swap logs them.
 */
export function v3SwapExactIn(args: {
  sqrtPriceX96: bigint;
  liquidity: bigint;
  fee: number;
  zeroForOne: boolean;
  amountIn: bigint;
}): { amount0: bigint; amount1: bigint; sqrtPriceX96: bigint; tick: number } {
  const { sqrtPriceX96: price, liquidity, amountIn } = args;
  const lessFee = (amountIn * BigInt(1_000_000 - args.fee)) / 1_000_000n;
  if (args.zeroForOne) {
    // getNextSqrtPriceFromAmount0RoundingUp (add): L·Q96·√P / (L·Q96 + amount·√P), rounded up.
    const numerator1 = liquidity << 96n;
    const next = divUp(numerator1 * price, numerator1 + lessFee * price);
    const out = amount1Delta(next, price, liquidity, false);
    return { amount0: amountIn, amount1: -out, sqrtPriceX96: next, tick: tickAtSqrtRatio(next) };
  }
  // getNextSqrtPriceFromAmount1RoundingDown (add): √P + amount·Q96 / L.
  const next = price + (lessFee << 96n) / liquidity;
  const out = amount0Delta(price, next, liquidity, false);
  return { amount0: -out, amount1: amountIn, sqrtPriceX96: next, tick: tickAtSqrtRatio(next) };
}

/** UniswapV2Library.getAmountOut with the pool's fee in hundredths of a bip (3000 = 0.3 %). */
export function v2AmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint, fee: number): bigint {
  const withFee = amountIn * BigInt(1_000_000 - fee);
  return (withFee * reserveOut) / (reserveIn * 1_000_000n + withFee);
}

/** floor(√n) by Newton's method. */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError("square root of a negative number");
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  if (x === 0n) x = 1n;
  for (;;) {
    const y = (x + n / x) >> 1n;
    if ((y > x ? y - x : x - y) <= 1n) {
      // Settle on the floor: Newton may stop one above or below it.
      while (x * x > n) x--;
      while ((x + 1n) * (x + 1n) <= n) x++;
      return x;
    }
    x = y;
  }
}
