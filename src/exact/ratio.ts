/**
 * Exact rational arithmetic on bigints, rounded to a double once, at the edge. Below every stage
 * (it imports nothing): the decoders and the pricing share it.
 */

/**
 * An exact non-negative (or signed) rational number: num / den with den ≠ 0. Prices are carried
 * as ratios of the raw on-chain integers through every product and reciprocal, and rounded to a
 * double once, at the edge (`ratioValue`), so that every price is the correctly rounded double of
 * its exact value.
 */
export type Ratio = { num: bigint; den: bigint };

/** The exact ratio num / den (not reduced: reducing costs a gcd and changes nothing exact). */
export function ratio(num: bigint, den: bigint): Ratio {
  if (den === 0n) throw new RangeError("ratio: zero denominator");
  return { num, den };
}

/** a × b, exactly. */
export function ratioMul(a: Ratio, b: Ratio): Ratio {
  return { num: a.num * b.num, den: a.den * b.den };
}

/** 1 / a, exactly; a must not be zero. */
export function ratioInverse(a: Ratio): Ratio {
  if (a.num === 0n) throw new RangeError("ratioInverse: zero");
  return { num: a.den, den: a.num };
}

/** The correctly rounded double of a ratio. */
export function ratioValue(a: Ratio): number {
  return ratioToNumber(a.num, a.den);
}

/** A finite double as the exact ratio it denotes (a double is m · 2^e). */
export function ratioOfNumber(value: number): Ratio {
  if (!Number.isFinite(value)) throw new RangeError(`ratioOfNumber: ${value} is not finite`);
  if (value === 0) return { num: 0n, den: 1n };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  const signed = negative ? -mantissa : mantissa;
  return exponent >= 0
    ? { num: signed << BigInt(exponent), den: 1n }
    : { num: signed, den: 1n << BigInt(-exponent) };
}

/** Σ ratios, exactly (one common denominator: the product). */
export function ratioSum(values: readonly Ratio[]): Ratio {
  let num = 0n;
  let den = 1n;
  for (const v of values) {
    if (v.den === den) num += v.num;
    else {
      num = num * v.den + v.num * den;
      den *= v.den;
    }
  }
  return { num, den };
}

/**
 * The same ratio without the power of two common to both terms: cheap (no gcd), and it keeps the
 * 2^192 of V3 prices and the 2^k of double weights from piling up along a route.
 */
export function ratioReduced(a: Ratio): Ratio {
  if (a.num === 0n) return { num: 0n, den: 1n };
  const twos = Math.min(trailingZeros(a.num), trailingZeros(a.den));
  if (twos === 0) return a;
  const shift = BigInt(twos);
  return { num: a.num >> shift, den: a.den >> shift };
}

function trailingZeros(value: bigint): number {
  const v = value < 0n ? -value : value;
  return bitLength(v & -v) - 1;
}

/**
 * num / den as the correctly rounded double (round half to even, subnormals and overflow to
 * ±Infinity included), computed on integers so that large raw amounts lose nothing before the
 * one final rounding. The quotient is taken at the double's own precision at that magnitude and
 * the exact remainder decides the rounding (it is the sticky bit: a quotient truncated without
 * it rounds a value just above a halfway point down).
 */
export function ratioToNumber(num: bigint, den: bigint): number {
  if (den === 0n) throw new RangeError("ratioToNumber: zero denominator");
  if (num === 0n) return 0;
  const negative = num < 0n !== den < 0n;
  const n = num < 0n ? -num : num;
  const d = den < 0n ? -den : den;
  const sign = negative ? -1 : 1;
  // Both below 2^53: each is exactly a double, and IEEE division rounds their quotient correctly
  // (to nearest, ties to even). Small amounts and reserves take this path, without bigint division.
  const x = Number(n);
  const y = Number(d);
  if (x < TWO_53 && y < TWO_53) return sign * (x / y);
  // e = floor(log2(n / d)): 2^(bits(n) − bits(d) − 1) < n / d < 2^(bits(n) − bits(d) + 1).
  let e = bitLength(n) - bitLength(d);
  if (e >= 0 ? n < d << BigInt(e) : n << BigInt(-e) < d) e -= 1;
  if (e > 1023) return sign * Number.POSITIVE_INFINITY;
  // Below half the smallest subnormal (2^-1075) everything rounds to zero.
  if (e < -1076) return sign * 0;
  // The weight of the last significand bit: 53 bits for normal numbers, fewer for subnormals.
  const k = Math.max(e - 52, -1074);
  const scaledN = k >= 0 ? n : n << BigInt(-k);
  const scaledD = k >= 0 ? d << BigInt(k) : d;
  let q = scaledN / scaledD;
  const twiceRemainder = (scaledN - q * scaledD) * 2n;
  if (twiceRemainder > scaledD || (twiceRemainder === scaledD && (q & 1n) === 1n)) q += 1n;
  // q ≤ 2^53 is exact as a number, 2^k is exact (−1074 ≤ k ≤ 971) and so is their product,
  // which is a representable double, or overflows to Infinity when rounding carried past 2^1024.
  return sign * Number(q) * 2 ** k;
}

/** A raw amount as a decimal-adjusted number, raw / 10^decimals rounded once. */
export function toUnits(raw: bigint, decimals: number): number {
  return ratioToNumber(raw, 10n ** BigInt(decimals));
}

const TWO_53 = 2 ** 53;
/** Scratch space to read a double's exponent bits (big-endian, whatever the platform). */
const scratch = new DataView(new ArrayBuffer(8));

/**
 * Number of bits of a positive bigint, from the exponent of its nearest double (no string, no
 * allocation): a value of b bits is in [2^(b−1), 2^b), and its double in the same binade unless
 * rounding carried it up to 2^b, which only a double that is a power of two above 2^53 can be
 * (checked exactly). Past the double range (≥ 2^1024), through its hexadecimal digits.
 */
function bitLength(value: bigint): number {
  const x = Number(value);
  if (x === Number.POSITIVE_INFINITY) {
    const hex = value.toString(16);
    return (hex.length - 1) * 4 + (32 - Math.clz32(Number.parseInt(hex[0] as string, 16)));
  }
  scratch.setFloat64(0, x);
  const high = scratch.getUint32(0);
  const exponent = ((high >>> 20) & 0x7ff) - 1023;
  if (exponent > 53 && (high & 0xfffff) === 0 && scratch.getUint32(4) === 0) {
    return value < 1n << BigInt(exponent) ? exponent : exponent + 1;
  }
  return exponent + 1;
}
