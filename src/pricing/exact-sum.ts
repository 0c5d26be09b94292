/**
 * Exact sums of doubles and of raw amounts, as decimals (src/internal/exact-decimal.ts). A double
 * is a binary fraction m · 2^e, so it is exactly a decimal with at most 1074 digits after the
 * point; a raw amount of a token with d decimals is exactly raw / 10^d. Kept that way (Postgres
 * `numeric`), sums of trades' volumes are exact and do not depend on the order or grouping of
 * their terms, and are rounded once when read (`exactValue`, or `::float8` in SQL): a volume is
 * the correctly rounded double of its exact sum however its buckets were grown.
 */
import { ratioOfNumber, ratioToNumber } from "../exact/ratio.js";
import { EXACT_ZERO, type ExactDecimal } from "../internal/exact-decimal.js";

export { addExact, EXACT_ZERO, type ExactDecimal, exactText, parseExact } from "../internal/exact-decimal.js";

/** A finite double as the exact decimal it denotes (m · 2^-k = m · 5^k / 10^k). */
export function exactOf(value: number): ExactDecimal {
  let { num, den } = ratioOfNumber(value);
  if (num === 0n) return EXACT_ZERO;
  // den = 2^k; with num odd (or den 1) the decimal num · 5^k / 10^k has no trailing zero.
  while (den > 1n && (num & 1n) === 0n) {
    num >>= 1n;
    den >>= 1n;
  }
  const k = den.toString(2).length - 1;
  return { digits: num * 5n ** BigInt(k), scale: k };
}

/** A raw amount of a token with `decimals` decimals, exactly: raw / 10^decimals. */
export function exactUnits(raw: bigint, decimals: number): ExactDecimal {
  return { digits: raw, scale: decimals };
}

/** The correctly rounded double of an exact decimal. */
export function exactValue(value: ExactDecimal): number {
  return value.scale === 0
    ? ratioToNumber(value.digits, 1n)
    : ratioToNumber(value.digits, 10n ** BigInt(value.scale));
}

/** a × b, exactly. */
export function exactProduct(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  return { digits: a.digits * b.digits, scale: a.scale + b.scale };
}
