/** A seeded pseudo-random source: the same seed gives the same sequence on every machine. */
export type Random = {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** Standard normal. */
  normal(): number;
  /** Exponential with the given mean. */
  exponential(mean: number): number;
  /** Log-normal with the given median and standard deviation of the log. */
  logNormal(median: number, sigma: number): number;
  /** Poisson-distributed count with the given mean (small means). */
  poisson(mean: number): number;
  /** An index drawn with probability proportional to its weight. */
  weighted(weights: readonly number[]): number;
  /** An element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** An independent generator derived from this one's seed and a label (stable across code changes elsewhere). */
  fork(label: string): Random;
};

/** sfc32 seeded through splitmix32: fast, good enough statistically, 32-bit integer maths only. */
export function createRandom(seed: number): Random {
  let s = seed >>> 0;
  const splitmix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();

  let spareNormal: number | undefined;
  const normal = () => {
    if (spareNormal !== undefined) {
      const value = spareNormal;
      spareNormal = undefined;
      return value;
    }
    // Box-Muller; 1 - next() is in (0, 1], so the logarithm is finite.
    const r = Math.sqrt(-2 * Math.log(1 - next()));
    const theta = 2 * Math.PI * next();
    spareNormal = r * Math.sin(theta);
    return r * Math.cos(theta);
  };

  const random: Random = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    normal,
    exponential: (mean) => -mean * Math.log(1 - next()),
    logNormal: (median, sigma) => median * Math.exp(sigma * normal()),
    poisson(mean) {
      // Knuth's method: fine for the small means used here.
      const limit = Math.exp(-mean);
      let k = 0;
      let p = next();
      while (p > limit) {
        k++;
        p *= next();
      }
      return k;
    },
    weighted(weights) {
      const total = weights.reduce((sum, w) => sum + w, 0);
      let x = next() * total;
      for (let i = 0; i < weights.length; i++) {
        x -= weights[i] ?? 0;
        if (x < 0) return i;
      }
      return weights.length - 1;
    },
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[Math.floor(next() * items.length)] as T;
    },
    fork(label) {
      let h = (seed ^ 0x811c9dc5) >>> 0;
      for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
      return createRandom(h);
    },
  };
  return random;
}
