/**
 * Counter-based randomness: every random number of the synthetic chain is a pure function of
 * (seed, what, block, index, …), so block N can be generated without generating blocks 0…N−1's
 * randomness, and the same inputs always give the same chain. 32-bit integer mixing (the
 * "lowbias32" finaliser) is used instead of 64-bit splitmix because JS has fast 32-bit
 * multiplication (Math.imul) and no fast 64-bit one.
 */

/** A bijective 32-bit mixer (lowbias32 by Chris Wellons). */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of up to six 32-bit integers (each taken modulo 2^32). */
export function hash32(a: number, b = 0, c = 0, d = 0, e = 0, f = 0): number {
  let h = mix32((a ^ 0x9e3779b9) >>> 0);
  h = mix32((h ^ b) + 0x85ebca6b);
  h = mix32((h ^ c) + 0xc2b2ae35);
  h = mix32((h ^ d) + 0x27d4eb2f);
  h = mix32((h ^ e) + 0x165667b1);
  h = mix32((h ^ f) + 0x61c88647);
  return h;
}

/** A uniform number in [0, 1) with 53 bits, from the same inputs as hash32. */
export function unit(a: number, b = 0, c = 0, d = 0, e = 0): number {
  const hi = hash32(a, b, c, d, e, 1) >>> 5;
  const lo = hash32(a, b, c, d, e, 2) >>> 6;
  return (hi * 67_108_864 + lo) / 9_007_199_254_740_992;
}

/** A stream of uniform numbers in [0, 1) keyed by (a, b, c, d): draw k is unit(a, b, c, d, k). */
export type Stream = () => number;

export function stream(a: number, b = 0, c = 0, d = 0): Stream {
  let k = 0;
  return () => unit(a, b, c, d, k++);
}

/** Eight hex digits of a 32-bit word. */
export function hex8(word: number): string {
  return (word >>> 0).toString(16).padStart(8, "0");
}

/** Domain separators, so that addresses, hashes and draws of different kinds never coincide. */
export const Kind = {
  token: 1,
  pool: 2,
  trader: 3,
  block: 4,
  tx: 5,
  plan: 6,
  tokenMeta: 7,
  poolMeta: 8,
  tag: 9,
  bogus: 10,
  root: 11,
  balance: 12,
  hook: 13,
} as const;
