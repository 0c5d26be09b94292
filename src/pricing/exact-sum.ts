/**
 * Exact sums of doubles, as decimals. A double is a binary fraction m · 2^e, so it is exactly a
 * decimal with at most 1074 digits after the point; kept that way (Postgres `numeric`), sums of
 * trades' USD volumes are exact and do not depend on the order or grouping of their terms. The
 * market windows add minute and hour buckets and round the total once, so a window's volume is
 * the correctly rounded sum of its trades' volumes however the buckets were grown.
 */
import { ratioOfNumber } from "../decode/price.js";

/** An exact decimal: digits / 10^scale. */
export type ExactDecimal = { digits: bigint; scale: number };

export const EXACT_ZERO: ExactDecimal = { digits: 0n, scale: 0 };

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

/** a + b, exactly. */
export function addExact(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  if (a.scale === b.scale) return trimmed({ digits: a.digits + b.digits, scale: a.scale });
  const [low, high] = a.scale < b.scale ? [a, b] : [b, a];
  return trimmed({
    digits: low.digits * 10n ** BigInt(high.scale - low.scale) + high.digits,
    scale: high.scale,
  });
}

/** The decimal text Postgres' numeric reads: `-12.0034`, `0.5`, `7`. */
export function exactText(value: ExactDecimal): string {
  const negative = value.digits < 0n;
  const digits = (negative ? -value.digits : value.digits).toString().padStart(value.scale + 1, "0");
  const whole = digits.slice(0, digits.length - value.scale);
  const fraction = digits.slice(digits.length - value.scale);
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** Without trailing zeros after the point (shorter text, the same value). */
function trimmed(value: ExactDecimal): ExactDecimal {
  let { digits, scale } = value;
  if (digits === 0n) return EXACT_ZERO;
  while (scale > 0 && digits % 10n === 0n) {
    digits /= 10n;
    scale -= 1;
  }
  return { digits, scale };
}
