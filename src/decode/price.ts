const Q192 = 1n << 192n;

/**
 * num / den as the nearest double, computed on integers first so that large raw amounts lose no
 * precision before the final rounding (Number(a) / Number(b) loses bits above 2^53 twice).
 */
export function ratioToNumber(num: bigint, den: bigint): number {
  if (den === 0n) throw new RangeError("ratioToNumber: zero denominator");
  if (num === 0n) return 0;
  const negative = num < 0n !== den < 0n;
  const n = num < 0n ? -num : num;
  const d = den < 0n ? -den : den;
  // Scale so that the integer quotient carries about 64 significant bits, more than a double's 53.
  const shift = approxBitLength(n) - approxBitLength(d) - 68;
  const q = shift >= 0 ? n / (d << BigInt(shift)) : (n << BigInt(-shift)) / d;
  // Two steps so that 2^shift alone cannot overflow or underflow where the product would not.
  const half = Math.trunc(shift / 2);
  const value = Number(q) * 2 ** half * 2 ** (shift - half);
  return negative ? -value : value;
}

function approxBitLength(value: bigint): number {
  return value.toString(16).length * 4;
}

/**
 * Price of token0 in token1 from a V3 sqrtPriceX96, decimal-adjusted:
 * (sqrtPriceX96 / 2^96)^2 · 10^(decimals0 − decimals1).
 */
export function priceFromSqrtPriceX96(sqrtPriceX96: bigint, decimals0: number, decimals1: number): number {
  return ratioToNumber(
    sqrtPriceX96 * sqrtPriceX96 * 10n ** BigInt(decimals0),
    Q192 * 10n ** BigInt(decimals1),
  );
}

/** Price of token0 in token1 from V2 reserves, decimal-adjusted; null for an empty reserve0. */
export function priceFromReserves(
  reserve0: bigint,
  reserve1: bigint,
  decimals0: number,
  decimals1: number,
): number | null {
  if (reserve0 === 0n) return null;
  return ratioToNumber(reserve1 * 10n ** BigInt(decimals0), reserve0 * 10n ** BigInt(decimals1));
}
