import { type Ratio, ratioMul, ratioOfNumber, ratioReduced, ratioSum, ratioValue } from "../exact/ratio.js";

/**
 * A price with the weight (USD liquidity) of the pool that quotes it. `priceUsdRatio`, when
 * given, is the exact price that `priceUsd` is the rounding of (else `priceUsd` is taken as exact).
 */
export type WeightedPrice = { priceUsd: number; liquidityUsd: number; priceUsdRatio?: Ratio };

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
  /** Liquidity-weighted mean of the kept prices: `priceUsdRatio` correctly rounded. */
  priceUsd: number;
  /** The exact liquidity-weighted mean Σ price·liquidity / Σ liquidity of the kept prices. */
  priceUsdRatio: Ratio;
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
  const priceUsdRatio = weightedMeanRatio(kept, median);
  // One kept price: its own exact price, whose rounding it carries already (WeightedPrice).
  const only = kept.length === 1 ? kept[0] : undefined;
  const priceUsd = only?.priceUsdRatio ? only.priceUsd : ratioValue(priceUsdRatio);
  return { priceUsd, priceUsdRatio, median, kept, dropped };
}

const exactPrice = (p: WeightedPrice): Ratio => p.priceUsdRatio ?? ratioOfNumber(p.priceUsd);

/**
 * Σ price·liquidity / Σ liquidity over exact prices (the liquidities are doubles, hence exact
 * rationals too), rounded by the caller once. One pool: its own exact price, so that a price
 * routed through a single pool is exactly pool price × quote price. The median itself is always
 * kept, so `kept` is never empty; no weight at all falls back to the median.
 */
function weightedMeanRatio(kept: readonly WeightedPrice[], median: number): Ratio {
  const first = kept[0];
  if (kept.length === 1 && first) return exactPrice(first);
  const weights = kept.map((p) => ratioOfNumber(p.liquidityUsd));
  const total = ratioSum(weights);
  if (total.num <= 0n) {
    const medianQuote = kept.find((p) => p.priceUsd === median);
    return medianQuote ? exactPrice(medianQuote) : ratioOfNumber(median);
  }
  const weighted = ratioSum(kept.map((p, i) => ratioMul(exactPrice(p), weights[i] as Ratio)));
  return ratioReduced({ num: weighted.num * total.den, den: weighted.den * total.num });
}
