/**
 * Exact sums of doubles and of raw amounts, as decimals (src/internal/exact-decimal.ts). A double
 * is a binary fraction m · 2^e, so it is exactly a decimal with at most 1074 digits after the
 * point; a raw amount of a token with d decimals is exactly raw / 10^d. Kept that way (Postgres
 * `numeric`), sums of trades' volumes are exact and do not depend on the order or grouping of
 * their terms, and are rounded once when read (`exactValue`, or `::float8` in SQL): a volume is
 * the correctly rounded double of its exact sum however its buckets were grown.
 */
import { ratioToNumber } from "../exact/ratio.js";
import { EXACT_ZERO, type ExactDecimal, powerOf10 } from "../internal/exact-decimal.js";

export {
  addExact,
  EXACT_ZERO,
  type ExactDecimal,
  exactText,
  parseExact,
  powerOf10,
} from "../internal/exact-decimal.js";

/** A finite double as the exact decimal it denotes (m · 2^-k = m · 5^k / 10^k). */
export function exactOf(value: number): ExactDecimal {
  // A trade's USD value enters a bucket at each resolution in turn: it is made once.
  if (value === lastOf.value) return lastOf.exact;
  const exact = decimalOf(value);
  lastOf = { value, exact };
  return exact;
}

/** The last double exactOf was given and its decimal (NaN: none yet). */
let lastOf: { value: number; exact: ExactDecimal } = { value: Number.NaN, exact: EXACT_ZERO };

/** Scratch space to read a double's bits (big-endian, whatever the platform). */
const bits = new DataView(new ArrayBuffer(8));

/** 5^k for k = 0 … 1074, made as needed. */
const POWERS_OF_5: bigint[] = [1n];
function powerOf5(k: number): bigint {
  for (let i = POWERS_OF_5.length; i <= k; i++) POWERS_OF_5.push((POWERS_OF_5[i - 1] as bigint) * 5n);
  return POWERS_OF_5[k] as bigint;
}

/** Trailing zero bits of a non-zero 32-bit value. */
const trailingZeros32 = (x: number): number => 31 - Math.clz32(x & -x);

/**
 * The exact decimal of a finite double: its significand m (53 bits, a safe integer) without its
 * trailing zero bits and its exponent e; m · 2^e is m · 2^e / 1 or m · 5^-e / 10^-e, and with m
 * odd the latter has no trailing zero.
 */
function decimalOf(value: number): ExactDecimal {
  if (!Number.isFinite(value)) throw new RangeError(`exactOf: ${value} is not finite`);
  if (value === 0) return EXACT_ZERO;
  bits.setFloat64(0, value);
  const high = bits.getUint32(0);
  const low = bits.getUint32(4);
  const biased = (high >>> 20) & 0x7ff;
  const top = (high & 0xfffff) | (biased === 0 ? 0 : 0x100000);
  const zeros = low !== 0 ? trailingZeros32(low) : 32 + trailingZeros32(top);
  // m / 2^zeros, exactly (a safe integer divided by a power of two it is a multiple of).
  const m = (top * 2 ** 32 + low) / 2 ** zeros;
  const e = (biased === 0 ? 1 : biased) - 1075 + zeros;
  const digits = BigInt(value < 0 ? -m : m);
  return e >= 0 ? { digits: digits << BigInt(e), scale: 0 } : { digits: digits * powerOf5(-e), scale: -e };
}

/** A raw amount of a token with `decimals` decimals, exactly: raw / 10^decimals. */
export function exactUnits(raw: bigint, decimals: number): ExactDecimal {
  return { digits: raw, scale: decimals };
}

/** The correctly rounded double of an exact decimal. */
export function exactValue(value: ExactDecimal): number {
  return value.scale === 0
    ? ratioToNumber(value.digits, 1n)
    : ratioToNumber(value.digits, powerOf10(value.scale));
}

/** a × b, exactly. */
export function exactProduct(a: ExactDecimal, b: ExactDecimal): ExactDecimal {
  return { digits: a.digits * b.digits, scale: a.scale + b.scale };
}
