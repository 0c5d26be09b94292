/**
 * Exact Uniswap arithmetic in bigint: TickMath (as in v3-core's TickMath.sol), the SqrtPriceMath
 * steps of a swap inside one liquidity range, the amounts of a liquidity change, and V2's
 * getAmountOut. The synthetic chain uses these so that its logs are what the contracts would emit.
 */

export const Q96 = 1n << 96n;
export const MIN_TICK = -887272;
export const MAX_TICK = 887272;
export const MIN_SQRT_RATIO = 4295128739n;
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;
const MAX_UINT256 = (1n << 256n) - 1n;

const TICK_FACTORS: readonly [number, bigint][] = [
  [0x2, 0xfff97272373d413259a46990580e213an],
  [0x4, 0xfff2e50f5f656932ef12357cf3c7fdccn],
  [0x8, 0xffe5caca7e10e4e61c3624eaa0941cd0n],
  [0x10, 0xffcb9843d60f6159c9db58835c926644n],
  [0x20, 0xff973b41fa98c081472e6896dfb254c0n],
  [0x40, 0xff2ea16466c96a3843ec78b326b52861n],
  [0x80, 0xfe5dee046a99a2a811c461f1969c3053n],
  [0x100, 0xfcbe86c7900a88aedcffc83b479aa3a4n],
  [0x200, 0xf987a7253ac413176f2b074cf7815e54n],
  [0x400, 0xf3392b0822b70005940c7a398e4b70f3n],
  [0x800, 0xe7159475a2c29b7443b29c7fa6e889d9n],
  [0x1000, 0xd097f3bdfd2022b8845ad8f792aa5825n],
  [0x2000, 0xa9f746462d870fdf8a65dc1f90e061e5n],
  [0x4000, 0x70d869a156d2a1b890bb3df62baf32f7n],
  [0x8000, 0x31be135f97d08fd981231505542fcfa6n],
  [0x10000, 0x9aa508b5b7a84e1c677de54f3e99bc9n],
  [0x20000, 0x5d6af8dedb81196699c329225ee604n],
  [0x40000, 0x2216e584f5fa1ea926041bedfe98n],
  [0x80000, 0x48a170391f7dc42444e8fa2n],
];

/** TickMath.getSqrtRatioAtTick: sqrt(1.0001^tick) · 2^96, rounded up as the contract does. */
export function sqrtRatioAtTick(tick: number): bigint {
  const abs = Math.abs(tick);
  if (!Number.isInteger(tick) || abs > MAX_TICK) throw new RangeError(`tick ${tick} out of range`);
  let ratio = abs & 0x1 ? 0xfffcb933bd6fad37aa2d162d1a594001n : 0x100000000000000000000000000000000n;
  for (const [bit, factor] of TICK_FACTORS) if (abs & bit) ratio = (ratio * factor) >> 128n;
  if (tick > 0) ratio = MAX_UINT256 / ratio;
  return (ratio >> 32n) + (ratio % (1n << 32n) === 0n ? 0n : 1n);
}

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

const divUp = (a: bigint, b: bigint): bigint => (a % b === 0n ? a / b : a / b + 1n);

/** SqrtPriceMath.getAmount0Delta for sqrtA < sqrtB. */
export function amount0Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const numerator1 = liquidity << 96n;
  const numerator2 = sqrtB - sqrtA;
  return roundUp
    ? divUp(divUp(numerator1 * numerator2, sqrtB), sqrtA)
    : (numerator1 * numerator2) / sqrtB / sqrtA;
}

/** SqrtPriceMath.getAmount1Delta for sqrtA < sqrtB. */
export function amount1Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const product = liquidity * (sqrtB - sqrtA);
  return roundUp ? divUp(product, Q96) : product / Q96;
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
