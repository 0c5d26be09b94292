import { type Ratio, ratioValue } from "../exact/ratio.js";

const Q192 = 1n << 192n;

/**
 * Price of token0 in token1 from a V3 sqrtPriceX96, decimal-adjusted, exactly:
 * (sqrtPriceX96 / 2^96)^2 · 10^(decimals0 − decimals1).
 */
export function ratioFromSqrtPriceX96(sqrtPriceX96: bigint, decimals0: number, decimals1: number): Ratio {
  return {
    num: sqrtPriceX96 * sqrtPriceX96 * 10n ** BigInt(decimals0),
    den: Q192 * 10n ** BigInt(decimals1),
  };
}

/** The price of `ratioFromSqrtPriceX96` as a correctly rounded double. */
export function priceFromSqrtPriceX96(sqrtPriceX96: bigint, decimals0: number, decimals1: number): number {
  return ratioValue(ratioFromSqrtPriceX96(sqrtPriceX96, decimals0, decimals1));
}

/** Price of token0 in token1 from V2 reserves, decimal-adjusted, exactly; null for an empty reserve0. */
export function ratioFromReserves(
  reserve0: bigint,
  reserve1: bigint,
  decimals0: number,
  decimals1: number,
): Ratio | null {
  if (reserve0 === 0n) return null;
  return { num: reserve1 * 10n ** BigInt(decimals0), den: reserve0 * 10n ** BigInt(decimals1) };
}

/** The price of `ratioFromReserves` as a correctly rounded double; null for an empty reserve0. */
export function priceFromReserves(
  reserve0: bigint,
  reserve1: bigint,
  decimals0: number,
  decimals1: number,
): number | null {
  const r = ratioFromReserves(reserve0, reserve1, decimals0, decimals1);
  return r === null ? null : ratioValue(r);
}
