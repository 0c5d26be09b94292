/**
 * Exact concentrated-liquidity arithmetic in bigint, as Uniswap's TickMath and SqrtPriceMath
 * compute it (v3-core and v4-core share it): the sqrt price of a tick and the token amounts a
 * liquidity change moves at the pool's current price.
 */

export const MIN_TICK = -887272;
export const MAX_TICK = 887272;
export const Q96 = 1n << 96n;
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

/** TickMath.getSqrtPriceAtTick: sqrt(1.0001^tick) · 2^96, rounded up as the contracts do. */
export function sqrtPriceAtTick(tick: number): bigint {
  const abs = Math.abs(tick);
  if (!Number.isInteger(tick) || abs > MAX_TICK) throw new RangeError(`tick ${tick} out of range`);
  let ratio = abs & 0x1 ? 0xfffcb933bd6fad37aa2d162d1a594001n : 0x100000000000000000000000000000000n;
  for (const [bit, factor] of TICK_FACTORS) if (abs & bit) ratio = (ratio * factor) >> 128n;
  if (tick > 0) ratio = MAX_UINT256 / ratio;
  return (ratio >> 32n) + (ratio % (1n << 32n) === 0n ? 0n : 1n);
}

/** ⌈a / b⌉ for a ≥ 0, b > 0. */
export const divUp = (a: bigint, b: bigint): bigint => (a % b === 0n ? a / b : a / b + 1n);

/** SqrtPriceMath.getAmount0Delta(sqrtA, sqrtB, liquidity, roundUp) for sqrtA ≤ sqrtB, liquidity ≥ 0. */
export function amount0Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const numerator1 = liquidity << 96n;
  const numerator2 = sqrtB - sqrtA;
  return roundUp
    ? divUp(divUp(numerator1 * numerator2, sqrtB), sqrtA)
    : (numerator1 * numerator2) / sqrtB / sqrtA;
}

/** SqrtPriceMath.getAmount1Delta(sqrtA, sqrtB, liquidity, roundUp) for sqrtA ≤ sqrtB, liquidity ≥ 0. */
export function amount1Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  const product = liquidity * (sqrtB - sqrtA);
  return roundUp ? divUp(product, Q96) : product / Q96;
}

/**
 * The token amounts a liquidity change of `liquidityDelta` over [tickLower, tickUpper) moves into
 * the pool (negative: out of it) at the current price and tick, as v4-core's Pool.modifyLiquidity
 * computes its principal: rounded up when liquidity is added, down when it is removed. Below the
 * range only token0 moves, above it only token1, inside it both.
 */
export function liquidityAmounts(
  sqrtPriceX96: bigint,
  tick: number,
  tickLower: number,
  tickUpper: number,
  liquidityDelta: bigint,
): { amount0: bigint; amount1: bigint } {
  if (liquidityDelta === 0n) return { amount0: 0n, amount1: 0n };
  const adding = liquidityDelta > 0n;
  const l = adding ? liquidityDelta : -liquidityDelta;
  const sign = adding ? 1n : -1n;
  const lower = sqrtPriceAtTick(tickLower);
  const upper = sqrtPriceAtTick(tickUpper);
  if (tick < tickLower) return { amount0: sign * amount0Delta(lower, upper, l, adding), amount1: 0n };
  if (tick < tickUpper) {
    return {
      amount0: sign * amount0Delta(sqrtPriceX96, upper, l, adding),
      amount1: sign * amount1Delta(lower, sqrtPriceX96, l, adding),
    };
  }
  return { amount0: 0n, amount1: sign * amount1Delta(lower, upper, l, adding) };
}
