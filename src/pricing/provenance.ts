import type { PoolQuote, PricingOptions, TokenPrice } from "./usd-prices.js";

/** A pool's quote as stored in `token_prices.provenance` (snake_case, like the API). */
export type ProvenancePool = {
  pool: string;
  dex: string;
  quote: string;
  quote_usd: number;
  liquidity_usd: number;
  price: number;
  price_usd: number;
  weight: number;
};

/** `token_prices.provenance`: how a token's USD price was made (docs/PRICING.md). */
export type Provenance = {
  method: "anchor" | "pools" | "none";
  reason?: "decimals-unknown" | "no-qualifying-pool";
  usd_price: number | null;
  confidence: number;
  layer: number | null;
  route: string[];
  block: number | null;
  time: string | null;
  median_usd: number | null;
  pools: ProvenancePool[];
  dropped: ProvenancePool[];
  below_floor: number;
  liquidity_floor_usd: number;
  max_deviation: number;
};

const pool = (q: PoolQuote): ProvenancePool => ({
  pool: q.pool,
  dex: q.dex,
  quote: q.quote,
  quote_usd: q.quoteUsd,
  liquidity_usd: q.liquidityUsd,
  price: q.price,
  price_usd: q.priceUsd,
  weight: q.weight,
});

/** The provenance record of a computed price. */
export function provenanceOf(price: TokenPrice, options: PricingOptions): Provenance {
  return {
    method: price.method,
    ...(price.reason ? { reason: price.reason } : {}),
    usd_price: price.usdPrice,
    confidence: price.confidence,
    layer: price.layer,
    route: price.route,
    block: price.asOfBlock,
    time: price.asOfTime === null ? null : new Date(price.asOfTime).toISOString(),
    median_usd: price.median,
    pools: price.pools.map(pool),
    dropped: price.dropped.map(pool),
    below_floor: price.belowFloor,
    liquidity_floor_usd: options.liquidityFloorUsd,
    max_deviation: options.maxDeviation,
  };
}
