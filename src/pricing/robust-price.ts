/** A price with the weight (USD liquidity) of the pool that quotes it. */
export type WeightedPrice = { priceUsd: number; liquidityUsd: number };

/**
 * The liquidity-weighted median: the lowest price at which the cumulative weight of the prices
 * sorted ascending reaches half the total. One deep pool outweighs any number of thin ones.
 */
export function weightedMedian(prices: readonly WeightedPrice[]): number {
  if (prices.length === 0) throw new RangeError("weightedMedian of nothing");
  const sorted = [...prices].sort((a, b) => a.priceUsd - b.priceUsd);
  const total = sorted.reduce((sum, p) => sum + p.liquidityUsd, 0);
  let cumulative = 0;
  for (const p of sorted) {
    cumulative += p.liquidityUsd;
    if (cumulative >= total / 2) return p.priceUsd;
  }
  return (sorted[sorted.length - 1] as WeightedPrice).priceUsd;
}

/** Relative distance of `price` from `reference`: |price / reference − 1|. */
export function deviationOf(price: number, reference: number): number {
  return Math.abs(price / reference - 1);
}

export type CombinedPrice<T extends WeightedPrice> = {
  /** Liquidity-weighted mean of the kept prices. */
  priceUsd: number;
  median: number;
  kept: T[];
  /** Further than `maxDeviation` from the median. */
  dropped: T[];
};

/**
 * Combines the prices of several qualifying pools: drops those further than `maxDeviation` from
 * the liquidity-weighted median, then averages the rest weighted by liquidity. Null for no input.
 */
export function combinePrices<T extends WeightedPrice>(
  prices: readonly T[],
  maxDeviation: number,
): CombinedPrice<T> | null {
  if (prices.length === 0) return null;
  const median = weightedMedian(prices);
  const kept: T[] = [];
  const dropped: T[] = [];
  for (const p of prices) (deviationOf(p.priceUsd, median) <= maxDeviation ? kept : dropped).push(p);
  const weight = kept.reduce((sum, p) => sum + p.liquidityUsd, 0);
  // The median itself is always kept, so `kept` is never empty.
  const priceUsd =
    weight > 0 ? kept.reduce((sum, p) => sum + p.priceUsd * p.liquidityUsd, 0) / weight : median;
  return { priceUsd, median, kept, dropped };
}
