/**
 * Numbers at the API's edge: raw on-chain integers (numeric(78,0) strings) become decimal-adjusted
 * JSON numbers here and nowhere earlier; a value that is unknown or not finite becomes null.
 */

/** A raw integer amount scaled by 10^decimals, as a JSON number; null when either is unknown. */
export function toUnits(
  raw: string | bigint | null | undefined,
  decimals: number | null | undefined,
): number | null {
  if (raw === null || raw === undefined || decimals === null || decimals === undefined) return null;
  let value: bigint;
  try {
    value = typeof raw === "bigint" ? raw : BigInt(raw);
  } catch {
    return null;
  }
  return Number(bigintToDecimal(value, decimals));
}

/** Exact decimal text of value / 10^decimals (no exponent, no trailing zeros). */
export function bigintToDecimal(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** The number itself when finite, else null (JSON has no NaN or Infinity). */
export function finite(value: number | null | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * A finite number as plain decimal text, never in exponent form: 1e-7 → "0.0000001",
 * 1.5e21 → "1500000000000000000000". Keeps the shortest round-trip digits of the number.
 */
export function toDecimalString(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, lead, rest = "", exp] = match;
  const digits = `${lead}${rest}`;
  const point = 1 + Number(exp); // position of the decimal point within `digits`
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
