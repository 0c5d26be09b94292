/**
 * Exact decimals (digits / 10^scale): sums that must not depend on the order or grouping of their
 * terms (volumes of raw integer amounts, sums of doubles). Postgres `numeric` holds them as they
 * are; `numeric::float8` rounds correctly.
 */

/** An exact decimal: digits / 10^scale, scale ≥ 0. */
export type ExactDecimal = { digits: bigint; scale: number };

export const EXACT_ZERO: ExactDecimal = { digits: 0n, scale: 0 };

/**
 * a + b, exactly, at the larger of their scales (trailing zeros after the point are kept: the
 * scale stays that of the finest term; trimming would cost a bigint division at every addition,
 * and exactText trims once, when a value is written).
 */
export function addExact(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  if (b.digits === 0n) return a;
  if (a.digits === 0n) return b;
  if (a.scale === b.scale) return { digits: a.digits + b.digits, scale: a.scale };
  return a.scale < b.scale
    ? { digits: a.digits * powerOf10(b.scale - a.scale) + b.digits, scale: b.scale }
    : { digits: a.digits + b.digits * powerOf10(a.scale - b.scale), scale: a.scale };
}

/** 10^k (k ≥ 0), from a table of the powers made so far. */
export function powerOf10(k: number): bigint {
  for (let i = POWERS_OF_10.length; i <= k; i++) POWERS_OF_10.push((POWERS_OF_10[i - 1] as bigint) * 10n);
  return POWERS_OF_10[k] as bigint;
}
const POWERS_OF_10: bigint[] = [1n];

/**
 * The decimal text Postgres' numeric reads: `-12.0034`, `0.5`, `7`; without trailing zeros after
 * the point, so that a value has one text however its sum was grown.
 */
export function exactText(value: ExactDecimal): string {
  if (value.digits === 0n) return "0";
  const negative = value.digits < 0n;
  let digits = (negative ? -value.digits : value.digits).toString();
  let scale = value.scale;
  let end = digits.length;
  while (scale > 0 && digits.charCodeAt(end - 1) === ZERO) {
    end -= 1;
    scale -= 1;
  }
  if (end < digits.length) digits = digits.slice(0, end);
  if (scale === 0) return negative ? `-${digits}` : digits;
  if (digits.length <= scale) digits = digits.padStart(scale + 1, "0");
  const point = digits.length - scale;
  return `${negative ? "-" : ""}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** The character code of "0". */
const ZERO = 48;

/** A numeric's text (`-12.0034`, `7`, `1e-5` not accepted) as an exact decimal, at the text's scale. */
export function parseExact(text: string): ExactDecimal {
  const match = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[2] === "" && (match[3] ?? "") === "")) throw new RangeError(`not a decimal: ${text}`);
  const fraction = match[3] ?? "";
  const digits = BigInt(`${match[1]}${match[2] || "0"}${fraction}`);
  return digits === 0n ? EXACT_ZERO : { digits, scale: fraction.length };
}
