/**
 * Exact decimals (digits / 10^scale): sums that must not depend on the order or grouping of their
 * terms (volumes of raw integer amounts, sums of doubles). Postgres `numeric` holds them as they
 * are; `numeric::float8` rounds correctly.
 */

/** An exact decimal: digits / 10^scale, scale ≥ 0. */
export type ExactDecimal = { digits: bigint; scale: number };

export const EXACT_ZERO: ExactDecimal = { digits: 0n, scale: 0 };

/** a + b, exactly (without trailing zeros after the point). */
export function addExact(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  if (b.digits === 0n) return a;
  if (a.digits === 0n) return b;
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

/** A numeric's text (`-12.0034`, `7`, `1e-5` not accepted) as an exact decimal. */
export function parseExact(text: string): ExactDecimal {
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[2] === "" && (match[3] ?? "") === "")) throw new RangeError(`not a decimal: ${text}`);
  const fraction = match[3] ?? "";
  const digits = BigInt(`${match[1]}${match[2] || "0"}${fraction}`);
  return trimmed({ digits, scale: fraction.length });
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
