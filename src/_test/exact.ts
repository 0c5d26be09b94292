/**
 * An independent reference for "the correctly rounded double of an exact rational", for tests:
 * textbook long division one bit at a time with guard and sticky bits and round half to even, the
 * double assembled from its IEEE 754 bit fields. Slow and obvious on purpose; it shares no code
 * with `ratioToNumber` (src/exact/ratio.ts), which it checks.
 */
export function referenceRatioToNumber(num: bigint, den: bigint): number {
  if (den === 0n) throw new RangeError("zero denominator");
  if (num === 0n) return 0;
  const negative = num < 0n !== den < 0n;
  let n = num < 0n ? -num : num;
  let d = den < 0n ? -den : den;
  // Normalise to 1 ≤ n/d < 2 and count the binary exponent e (value = n/d · 2^e).
  let e = 0;
  while (n >= d * 2n) {
    d *= 2n;
    e += 1;
    if (e > 1100) return negative ? -Infinity : Infinity;
  }
  while (n < d) {
    n *= 2n;
    e -= 1;
    if (e < -1100) return negative ? -0 : 0;
  }
  // Significand bits available at this exponent: 53, fewer below 2^-1022 (subnormals).
  const precision = e >= -1022 ? 53 : 53 - (-1022 - e);
  let mantissa = 0n;
  for (let i = 0; i < precision; i++) {
    const bit = n >= d ? 1n : 0n;
    mantissa = mantissa * 2n + bit;
    n = (n - bit * d) * 2n;
  }
  // Now n/d (n already doubled) holds the bits after the last kept one.
  const guard = n >= d;
  const sticky = guard ? n - d !== 0n : n !== 0n;
  const lastBitOdd = (mantissa & 1n) === 1n;
  if (precision < 0) mantissa = 0n;
  else if (guard && (sticky || lastBitOdd)) mantissa += 1n;
  if (precision < 0) return negative ? -0 : 0;
  let bits: bigint;
  if (e >= -1022) {
    if (mantissa === 1n << 53n) {
      mantissa >>= 1n;
      e += 1;
    }
    if (e > 1023) return negative ? -Infinity : Infinity;
    bits = (BigInt(e + 1023) << 52n) | (mantissa - (1n << 52n));
  } else {
    // Subnormal: the value is mantissa · 2^-1074, whose bit pattern is the mantissa itself (a
    // carry into 2^52 gives exponent field 1: the smallest normal, as it should).
    bits = mantissa;
  }
  if (negative) bits |= 1n << 63n;
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, bits);
  return view.getFloat64(0);
}

/** Bit-for-bit equality, telling 0 from −0 (what `===` would not). */
export function sameDouble(a: number | null | undefined, b: number | null | undefined): boolean {
  return Object.is(a, b);
}

/**
 * An exact rational for test references (num / den, den ≠ 0, never reduced): built from the raw
 * integers a test knows (amounts, reserves, sqrtPriceX96, decimals) and rounded once with
 * `referenceRatioToNumber`. It shares no code with the production `Ratio` (src/exact/ratio.ts).
 */
export type Exact = { readonly num: bigint; readonly den: bigint };

export function exact(num: bigint, den = 1n): Exact {
  if (den === 0n) throw new RangeError("zero denominator");
  return { num, den };
}

export const exactMul = (a: Exact, b: Exact): Exact => exact(a.num * b.num, a.den * b.den);
export const exactDiv = (a: Exact, b: Exact): Exact => exact(a.num * b.den, a.den * b.num);
export const exactAdd = (a: Exact, b: Exact): Exact => exact(a.num * b.den + b.num * a.den, a.den * b.den);
export const exactSub = (a: Exact, b: Exact): Exact => exact(a.num * b.den - b.num * a.den, a.den * b.den);

/** Σ values, exactly. */
export function exactSum(values: readonly Exact[]): Exact {
  return values.reduce(exactAdd, exact(0n));
}

/** The correctly rounded double of an exact rational. */
export function toDouble(a: Exact): number {
  return referenceRatioToNumber(a.num, a.den);
}

/** A raw token amount in units, exactly: raw / 10^decimals. */
export function unitsExact(raw: bigint, decimals: number): Exact {
  return exact(raw, 10n ** BigInt(decimals));
}

/** A raw token amount in units, correctly rounded. */
export function unitsOf(raw: bigint, decimals: number): number {
  return toDouble(unitsExact(raw, decimals));
}

/**
 * The exact rational a finite double denotes: doubling is exact for a double, so doubling until
 * the value is an integer finds its significand and binary exponent.
 */
export function exactOfDouble(value: number): Exact {
  if (!Number.isFinite(value)) throw new RangeError(`${value} is not finite`);
  let scaled = value;
  let twos = 0n;
  while (!Number.isInteger(scaled)) {
    scaled *= 2;
    twos += 1n;
  }
  return exact(BigInt(scaled), 2n ** twos);
}

/**
 * The correctly rounded sum of doubles: their exact sum, rounded once (what a volume or any sum
 * of per-trade figures is promised to be, whatever the order of the additions).
 */
export function roundedSum(values: readonly number[]): number {
  return toDouble(exactSum(values.map(exactOfDouble)));
}

/**
 * A V2 pool's exact spot price of `base` in `quote` from the raw reserves:
 * reserveQuote·10^dBase / (reserveBase·10^dQuote). Either token order: name the sides.
 */
export function reservesPrice(
  base: { reserve: bigint; decimals: number },
  quote: { reserve: bigint; decimals: number },
): Exact {
  return exact(quote.reserve * 10n ** BigInt(base.decimals), base.reserve * 10n ** BigInt(quote.decimals));
}

/**
 * A V3 pool's exact spot price of token0 in token1 from its sqrtPriceX96:
 * sqrtPriceX96²·10^d0 / (2^192·10^d1); of token1 in token0 the exact reciprocal.
 */
export function sqrtPriceOf(sqrtPriceX96: bigint, decimals0: number, decimals1: number, side: 0 | 1): Exact {
  const num = sqrtPriceX96 * sqrtPriceX96 * 10n ** BigInt(decimals0);
  const den = 2n ** 192n * 10n ** BigInt(decimals1);
  return side === 0 ? exact(num, den) : exact(den, num);
}

/** ⌊√n⌋ of a non-negative bigint, by bisection (obvious, not fast). */
export function integerSqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError("negative");
  let low = 0n;
  let high = n + 1n;
  while (high - low > 1n) {
    const mid = (low + high) / 2n;
    if (mid * mid <= n) low = mid;
    else high = mid;
  }
  return low;
}

/**
 * A trade's exact price of the token paid or received in the other, from the raw amounts that
 * moved: |amountOther|·10^dToken / (|amountToken|·10^dOther).
 */
export function tradePrice(
  token: { amount: bigint; decimals: number },
  other: { amount: bigint; decimals: number },
): Exact {
  const abs = (v: bigint) => (v < 0n ? -v : v);
  return exact(
    abs(other.amount) * 10n ** BigInt(token.decimals),
    abs(token.amount) * 10n ** BigInt(other.decimals),
  );
}

/**
 * The liquidity-weighted mean Σ price·weight / Σ weight of exact prices, the weights being the
 * doubles the routing measures (each an exact rational).
 */
export function weightedMean(prices: readonly { price: Exact; weight: number }[]): Exact {
  const weights = prices.map((p) => exactOfDouble(p.weight));
  const total = exactSum(weights);
  const weighted = exactSum(prices.map((p, i) => exactMul(p.price, weights[i] as Exact)));
  return exactDiv(weighted, total);
}

/** a < b, a = b or a > b of two exact rationals (−1, 0, 1). */
export function exactCompare(a: Exact, b: Exact): number {
  // Both sides times a.den²·b.den² (positive), so that no sign of a denominator matters.
  const left = a.num * a.den * b.den * b.den;
  const right = b.num * b.den * a.den * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** One qualifying pool's quote of a token: its exact USD price and the liquidity that weighs it. */
export type ReferenceQuote = { price: Exact; liquidityUsd: number };

/**
 * A token's USD price from its qualifying pools as docs/PRICING.md states the rule, written out
 * in exact arithmetic: the liquidity-weighted median (the lowest price at which the cumulative
 * liquidity of the prices sorted ascending reaches half the total), pools further than
 * `maxDeviation` from it dropped, the rest averaged weighted by liquidity (Σ price·liquidity /
 * Σ liquidity, the liquidities being the doubles the routing measures). One kept pool: its own
 * exact price. Null without a quote; `kept` in the order of `quotes`.
 */
export function referenceCombine<T extends ReferenceQuote>(
  quotes: readonly T[],
  maxDeviation: number,
): { price: Exact; kept: T[] } | null {
  if (quotes.length === 0) return null;
  const sorted = [...quotes].sort((a, b) => exactCompare(a.price, b.price));
  const total = exactSum(sorted.map((q) => exactOfDouble(q.liquidityUsd)));
  let cumulative = exact(0n);
  let median = (sorted[sorted.length - 1] as T).price;
  for (const q of sorted) {
    cumulative = exactAdd(cumulative, exactOfDouble(q.liquidityUsd));
    if (exactCompare(exactMul(cumulative, exact(2n)), total) >= 0) {
      median = q.price;
      break;
    }
  }
  const limit = exactOfDouble(maxDeviation);
  const kept = quotes.filter((q) => {
    const deviation = exactSub(exactDiv(q.price, median), exact(1n));
    const absolute = exactCompare(deviation, exact(0n)) < 0 ? exactSub(exact(0n), deviation) : deviation;
    return exactCompare(absolute, limit) <= 0;
  });
  const price =
    kept.length === 1
      ? (kept[0] as T).price
      : weightedMean(kept.map((q) => ({ price: q.price, weight: q.liquidityUsd })));
  return { price, kept };
}

/** The price of `referenceCombine`; null without a quote. */
export function referenceUsdPrice(quotes: readonly ReferenceQuote[], maxDeviation: number): Exact | null {
  return referenceCombine(quotes, maxDeviation)?.price ?? null;
}
