/**
 * An independent reference for "the correctly rounded double of an exact rational", for tests:
 * textbook long division one bit at a time with guard and sticky bits and round half to even, the
 * double assembled from its IEEE 754 bit fields. Slow and obvious on purpose; it shares no code
 * with `ratioToNumber` (src/decode/price.ts), which it checks.
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
