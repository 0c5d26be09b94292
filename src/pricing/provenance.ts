import type { PoolQuote, PricingOptions, TokenPrice } from "./usd-prices.js";

/** A pool's quote as stored in `token_prices.provenance` (snake_case, like the API): a JSON record, not a pool type. */
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

/**
 * Whether two prices of a token make the same `token_prices` row (usd_price, block, time and the
 * provenance's text, for the same options): compared field by field, so that no row's text has to
 * be kept to see it unchanged. Numbers by `Object.is` (a -0 against a 0, which the row's text
 * writes alike, counts as a change: the row is then sent and the database finds it equal).
 */
export function sameRow(a: TokenPrice, b: TokenPrice): boolean {
  return (
    a === b ||
    (Object.is(a.usdPrice, b.usdPrice) &&
      a.asOfBlock === b.asOfBlock &&
      Object.is(a.asOfTime, b.asOfTime) &&
      a.method === b.method &&
      a.reason === b.reason &&
      Object.is(a.confidence, b.confidence) &&
      a.layer === b.layer &&
      Object.is(a.median, b.median) &&
      a.belowFloor === b.belowFloor &&
      sameStrings(a.route, b.route) &&
      sameQuotes(a.pools, b.pools) &&
      sameQuotes(a.dropped, b.dropped))
  );
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The stored fields of each quote (`ProvenancePool`), in order. */
function sameQuotes(a: readonly PoolQuote[], b: readonly PoolQuote[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as PoolQuote;
    const y = b[i] as PoolQuote;
    if (
      x.pool !== y.pool ||
      x.dex !== y.dex ||
      x.quote !== y.quote ||
      !Object.is(x.quoteUsd, y.quoteUsd) ||
      !Object.is(x.liquidityUsd, y.liquidityUsd) ||
      !Object.is(x.price, y.price) ||
      !Object.is(x.priceUsd, y.priceUsd) ||
      !Object.is(x.weight, y.weight)
    ) {
      return false;
    }
  }
  return true;
}
