import {
  type Ratio,
  ratioInverse,
  ratioMul,
  ratioOfNumber,
  ratioReduced,
  ratioValue,
} from "../exact/ratio.js";
import { NATIVE_COIN } from "../model/index.js";
import { combinePrices } from "./robust-price.js";

/**
 * USD prices of every token of a chain from its pools' state: stablecoin anchors at 1 USD, then
 * breadth-first through qualifying pools (see docs/PRICING.md).
 */

/**
 * A pool as the routing sees it: spot price and the depth of each side, decimal-adjusted. Figures
 * derived from a MarketPool's state (pool-state.ts), not its stored facts.
 */
export type GraphPool = {
  address: string;
  dex: string;
  token0: string;
  token1: string;
  /** Spot price of token0 in token1; null when unknown (no state, empty pool, decimals unknown). */
  price0: number | null;
  /** The exact spot price that `price0` rounds (absent: `price0` is taken as exact). */
  ratio0?: Ratio | null;
  /**
   * Balance of each side measured so that one trade cannot lift it: the smaller of the balance
   * now and the balance just before the pool's latest block of swaps. Null when unknown.
   */
  depth0: number | null;
  depth1: number | null;
  /** Block and time (ms) of the pool's latest event; null before any. */
  stateBlock: number | null;
  stateTime: number | null;
  /**
   * Moves by one each time `updateGraphPool` (pool-state.ts) changes any of the figures above, so
   * that a price memo compares one small integer instead of keeping a copy of every figure.
   * Absent (a pool built or moved by hand): a memo never reuses an evaluation that reads it.
   */
  version?: number;
};

/** The chain's reference tokens (configuration `referenceTokens`), lowercase addresses. */
export type ReferenceTokens = {
  /** USD anchors at 1 USD. */
  stablecoins: readonly string[];
  wrappedNative: string;
  wrappedBtc: readonly string[];
  /** Further tokens trusted as routing hops once priced. */
  others: readonly string[];
};

export type PricingOptions = {
  /** A pool whose quote-side liquidity (2 × quote depth × quote USD price) is below this never prices. */
  liquidityFloorUsd: number;
  /** Pools further than this fraction from the liquidity-weighted median are dropped. */
  maxDeviation: number;
};

/** One pool's quote of a token's price. */
export type PoolQuote = {
  pool: string;
  dex: string;
  /** The token it is priced against. */
  quote: string;
  quoteUsd: number;
  /** The quote's exact USD price (absent: `quoteUsd` is taken as exact). Not stored. */
  quoteUsdRatio?: Ratio;
  /** 2 × quote-side depth × quote USD price. */
  liquidityUsd: number;
  /** Spot price of the token in the quote token. */
  price: number;
  /** Exact price × exact quote USD price, correctly rounded. */
  priceUsd: number;
  /** The exact `priceUsd` (while the token's price is combined; not kept in its `TokenPrice`). Not stored. */
  priceUsdRatio?: Ratio;
  /** Share in the token's price: the kept pools' weights sum to 1; 0 for a dropped pool. */
  weight: number;
};

export type PriceMethod = "anchor" | "pools" | "none";

/** A token's USD price with where it comes from (stored as `token_prices.provenance`). */
export type TokenPrice = {
  token: string;
  /** Null: no qualifying route. Never 0. The correctly rounded double of `usdRatio`. */
  usdPrice: number | null;
  /**
   * The exact USD price: pool prices from the raw integers times the quotes' exact USD prices,
   * combined exactly; rounded once into `usdPrice` (absent: `usdPrice` is taken as exact).
   */
  usdRatio?: Ratio | null;
  method: PriceMethod;
  /** Why a token has no price. */
  reason?: "decimals-unknown" | "no-qualifying-pool";
  /** Breadth-first layer: 0 for anchors; null when not priced. */
  layer: number | null;
  /** 0 … 1: agreement × depth × the quotes' confidence (docs/PRICING.md); 0 when not priced. */
  confidence: number;
  /** The token, then the quote of its heaviest kept pool, and so on down to an anchor. */
  route: string[];
  /** Liquidity-weighted median of the qualifying pools' prices. */
  median: number | null;
  pools: PoolQuote[];
  /** Qualifying pools left out for deviating more than maxDeviation from the median. */
  dropped: PoolQuote[];
  /** Pools against priced tokens whose liquidity is below the floor. */
  belowFloor: number;
  /** Latest block (and its time, ms) of the pool states this price reflects. */
  asOfBlock: number | null;
  asOfTime: number | null;
};

export type RoutingGraph = {
  /** Decimals of each token (null: unknown). */
  decimals: ReadonlyMap<string, number | null>;
  /** Each token's pools, in address order. */
  poolsOf: ReadonlyMap<string, readonly GraphPool[]>;
  /**
   * Per token, the newest state (block, time) among its pools, when whoever moves the pools
   * keeps it (`noteNewest`; the market state does): what a price is as of without walking the
   * token's pools (WETH's are a large share of the chain's). Absent: walked.
   */
  newestOf?: Map<string, [number, number | null]>;
};

/**
 * Notes a pool's state in its tokens' `newestOf` entries (the graph's, when it keeps them): the
 * newest block wins; pools at one block share its time. States only move forward (a rollback
 * loads the market afresh).
 */
export function noteNewest(graph: RoutingGraph, pool: GraphPool): void {
  const newest = graph.newestOf;
  const block = pool.stateBlock;
  if (!newest || block === null) return;
  for (const token of [pool.token0, pool.token1]) {
    const entry = newest.get(token);
    if (!entry || block > entry[0]) newest.set(token, [block, pool.stateTime]);
  }
}

/** `newestOf` of every token, walked once (the graph then keeps it up to date with `noteNewest`). */
export function newestOfPools(poolsOf: RoutingGraph["poolsOf"]): Map<string, [number, number | null]> {
  const newest = new Map<string, [number, number | null]>();
  for (const token of poolsOf.keys()) {
    const [block, time] = asOfOwnPools({ decimals: new Map(), poolsOf }, token);
    if (block !== null) newest.set(token, [block, time]);
  }
  return newest;
}

/**
 * The token evaluations of the previous price computation over the same graph, each with what it
 * read: per pool of the token its version (its routing figures) and the quote's price object. An evaluation
 * that would read the very same values returns the very same result (a pure function of them),
 * so an unchanged token keeps its price object and the tokens priced from it see no change
 * either: between two blocks only what a moved pool reaches costs exact arithmetic.
 */
export type PriceMemo = {
  entries: Map<string, { layer: number; phase: number; read: unknown[]; result: TokenPrice | null }>;
  /** The entries of unpriced tokens last returned: the same object again while equal. */
  unpriced: Map<string, TokenPrice>;
};

/** An empty PriceMemo. */
export const createPriceMemo = (): PriceMemo => ({ entries: new Map(), unpriced: new Map() });

/** Indexes pools by token. Pools stay mutable: update their state and compute again. */
export function createRoutingGraph(
  decimals: ReadonlyMap<string, number | null>,
  pools: readonly GraphPool[],
): RoutingGraph {
  const poolsOf = new Map<string, GraphPool[]>();
  for (const pool of pools) {
    for (const token of [pool.token0, pool.token1]) {
      let list = poolsOf.get(token);
      if (!list) {
        list = [];
        poolsOf.set(token, list);
      }
      list.push(pool);
    }
  }
  return { decimals, poolsOf };
}

/**
 * The correctly rounded value of a pool's exact token1 price (`inverse` = 1 / `ratio0`), kept per
 * ratio object (a pool's state change makes a new one): every token priced against the pool's
 * token0 reads it again at each block the quote's USD price moves.
 */
const inverseValues = new WeakMap<Ratio, number>();
function inverseValue(ratio0: Ratio, inverse: Ratio): number {
  let value = inverseValues.get(ratio0);
  if (value === undefined) {
    value = ratioValue(inverse);
    inverseValues.set(ratio0, value);
  }
  return value;
}

/** Every reference token of a chain (anchors included). */
export function referenceSet(reference: ReferenceTokens): Set<string> {
  return new Set([
    ...reference.stablecoins,
    reference.wrappedNative,
    ...reference.wrappedBtc,
    ...reference.others,
  ]);
}

/** Ranks the trustworthiness of a token as a source of USD value: anchor 0, reference 1, other 2. */
export function sideRank(token: string, reference: ReferenceTokens): 0 | 1 | 2 {
  if (reference.stablecoins.includes(token)) return 0;
  const isReference =
    token === reference.wrappedNative ||
    reference.wrappedBtc.includes(token) ||
    reference.others.includes(token);
  return isReference ? 1 : 2;
}

/** A priced token's exact USD price (a price built without one is taken as its exact double). */
export function exactUsd(price: Pick<TokenPrice, "usdPrice" | "usdRatio">): Ratio {
  if (price.usdRatio) return price.usdRatio;
  if (price.usdPrice === null) throw new RangeError("exactUsd of an unpriced token");
  return ratioOfNumber(price.usdPrice);
}

/**
 * The USD price of every token of the graph.
 *
 * 1. Configured stablecoins are anchors at 1 USD (layer 0).
 * 2. The other reference tokens (wrapped native, wrapped BTC, others), breadth-first through
 *    pools against anchors and already priced reference tokens only.
 * 3. Every other token, breadth-first through pools against any already priced token: a token
 *    priced in layer k uses only tokens priced in earlier layers, so shorter routes win and a
 *    token is never priced from itself.
 *
 * A pool qualifies when its quote side is deep enough (2 × depth × quote USD ≥ floor).
 * Qualifying pools combine by liquidity after dropping those further than maxDeviation from the
 * liquidity-weighted median. No qualifying pool: null. Unknown decimals: null, and no routing.
 */
export function computeUsdPrices(
  graph: RoutingGraph,
  reference: ReferenceTokens,
  options: PricingOptions,
  /** Reused and refilled (graph, reference and options must be those of the previous call). */
  memo?: PriceMemo,
  /**
   * Only the priced tokens (no entry for the others): what valuing a block's trades reads, since
   * an unpriced token's entry values a trade as no entry does. The full map: `withUnpriced`.
   */
  pricedOnly = false,
  /** Stop after the reference tokens (anchors and phase 1; priced only): `lazyUsdPrices`' base. */
  referencesOnly = false,
): Map<string, TokenPrice> {
  const previous = memo?.entries ?? null;
  const next: PriceMemo["entries"] = new Map();
  if (memo) memo.entries = next;
  const anchors = new Set(reference.stablecoins);
  const references = referenceSet(reference);
  const priced = new Map<string, TokenPrice>();
  let layer = 0;

  const asOfOwn = (token: string) => asOfOwnPools(graph, token);

  /** The value an evaluation of `token` reads from one of its pools' quote (see PriceMemo). */
  const quoteRead = (token: string, pool: GraphPool, allowQuote: (quote: string) => boolean) => {
    const quote = pool.token0 === token ? pool.token1 : pool.token0;
    return quote !== token && allowQuote(quote) ? (priced.get(quote) ?? null) : null;
  };

  /**
   * What an evaluation of `token` reads (see PriceMemo), in a flat list: the token's decimals,
   * then per pool the pool, its version (its figures: `GraphPool.version`) and the quote's price.
   */
  const readsOf = (token: string, allowQuote: (quote: string) => boolean): unknown[] => {
    const read: unknown[] = [graph.decimals.get(token)];
    for (const pool of graph.poolsOf.get(token) ?? []) {
      read.push(pool, pool.version, quoteRead(token, pool, allowQuote));
    }
    return read;
  };

  /** Whether an evaluation of `token` would read `read` again (compared in place: no allocation). */
  const readsSame = (read: unknown[], token: string, allowQuote: (quote: string) => boolean): boolean => {
    const pools = graph.poolsOf.get(token) ?? [];
    if (read.length !== 1 + 3 * pools.length || read[0] !== graph.decimals.get(token)) return false;
    let i = 1;
    for (const pool of pools) {
      if (
        pool.version === undefined ||
        read[i] !== pool ||
        read[i + 1] !== pool.version ||
        read[i + 2] !== quoteRead(token, pool, allowQuote)
      ) {
        return false;
      }
      i += 3;
    }
    return true;
  };

  const evaluate = (
    token: string,
    allowQuote: (quote: string) => boolean,
    tokenLayer: number,
    phase: number,
  ): TokenPrice | null => {
    if (!previous) return evaluateNow(token, allowQuote, tokenLayer);
    // One entry per token: a token evaluated again in a later layer replaces its earlier entry.
    const before = previous.get(token);
    if (
      before &&
      before.layer === tokenLayer &&
      before.phase === phase &&
      readsSame(before.read, token, allowQuote)
    ) {
      next.set(token, before);
      return before.result;
    }
    const read = readsOf(token, allowQuote);
    const result = evaluateNow(token, allowQuote, tokenLayer);
    next.set(token, { layer: tokenLayer, phase, read, result });
    return result;
  };

  const evaluateNow = (
    token: string,
    allowQuote: (quote: string) => boolean,
    tokenLayer: number,
  ): TokenPrice | null =>
    evaluateToken(
      graph,
      options,
      token,
      (quote) => (allowQuote(quote) ? priced.get(quote) : undefined),
      tokenLayer,
    );

  /** Prices layer after layer the eligible tokens next to the last layer, until none is added. */
  const runLayers = (
    phase: number,
    frontier: string[],
    eligible: (token: string) => boolean,
    allowQuote: (quote: string) => boolean,
  ) => {
    while (frontier.length > 0) {
      const candidates = new Set<string>();
      for (const token of frontier) {
        for (const pool of graph.poolsOf.get(token) ?? []) {
          const other = pool.token0 === token ? pool.token1 : pool.token0;
          if (!priced.has(other) && eligible(other)) candidates.add(other);
        }
      }
      // Evaluated against the tokens of earlier layers only, then added together.
      const found: TokenPrice[] = [];
      for (const token of candidates) {
        const price = evaluate(token, allowQuote, layer + 1, phase);
        if (price) found.push(price);
      }
      if (found.length > 0) layer += 1;
      for (const price of found) priced.set(price.token, price);
      frontier = found.map((p) => p.token);
    }
  };

  for (const anchor of anchors) {
    if (!graph.poolsOf.has(anchor)) continue;
    const [asOfBlock, asOfTime] = asOfOwn(anchor);
    // The same object as before when nothing it holds changed, so the memo sees the tokens above it unchanged.
    const before = previous?.get(anchor);
    if (before?.result && before.phase === 0 && before.read[0] === asOfBlock && before.read[1] === asOfTime) {
      next.set(anchor, before);
      priced.set(anchor, before.result);
      continue;
    }
    const anchorPrice: TokenPrice = {
      token: anchor,
      usdPrice: 1,
      usdRatio: { num: 1n, den: 1n },
      method: "anchor",
      layer: 0,
      confidence: 1,
      route: [anchor],
      median: null,
      pools: [],
      dropped: [],
      belowFloor: 0,
      asOfBlock,
      asOfTime,
    };
    next.set(anchor, { layer: 0, phase: 0, read: [asOfBlock, asOfTime], result: anchorPrice });
    priced.set(anchor, anchorPrice);
  }
  runLayers(
    1,
    [...priced.keys()],
    (token) => references.has(token),
    (quote) => references.has(quote),
  );
  // The native coin (a V4 pool's currency address zero) is the wrapped native token's coin: one
  // USD price for both ids, never one of its own pools'. The same object while the wrapped
  // token's price is, so the memo of the tokens priced through it holds.
  const wrapped = priced.get(reference.wrappedNative);
  if (wrapped && graph.poolsOf.has(NATIVE_COIN)) {
    let native = nativePrices.get(wrapped);
    if (native === undefined) {
      native = { ...wrapped, token: NATIVE_COIN, route: [NATIVE_COIN, ...wrapped.route] };
      nativePrices.set(wrapped, native);
    }
    priced.set(NATIVE_COIN, native);
  }
  if (referencesOnly) return priced;
  // Never the native coin: without a wrapped native price it has none (its own pools would give
  // it one the wrapped token does not answer).
  runLayers(
    2,
    [...priced.keys()],
    (token) => token !== NATIVE_COIN,
    () => true,
  );

  return pricedOnly ? priced : withUnpriced(graph, options, priced, memo);
}

/** The native coin's price for each price of the wrapped native token (see computeUsdPrices). */
const nativePrices = new WeakMap<TokenPrice, TokenPrice>();

/** A quote of a token with what the evaluation reads of its quote token. */
type QuoteRead = PoolQuote & { quoteConfidence: number; quoteAsOf: [number | null, number | null] };

/**
 * The pools of `token` that quote it: against a quote token `quoteOf` prices (the tokens of the
 * earlier layers), above the floor; with the count of those below it.
 */
function quotesOf(
  graph: RoutingGraph,
  options: PricingOptions,
  token: string,
  quoteOf: (quote: string) => TokenPrice | undefined,
): { quotes: QuoteRead[]; belowFloor: number } {
  const quotes: QuoteRead[] = [];
  let belowFloor = 0;
  for (const pool of graph.poolsOf.get(token) ?? []) {
    const isToken0 = pool.token0 === token;
    const quote = isToken0 ? pool.token1 : pool.token0;
    if (quote === token) continue;
    const q = quoteOf(quote);
    if (!q || q.usdPrice === null) continue;
    const liquidityUsd = quotedLiquidityUsd(pool, isToken0, q.usdPrice);
    if (liquidityUsd === null) continue;
    if (belowTheFloor(liquidityUsd, options)) {
      belowFloor += 1;
      continue;
    }
    const price0 = pool.price0 as number;
    // Exact: the side's price from the pool's raw integers (token1's is the exact reciprocal,
    // not 1 / a rounded price) times the quote's exact USD price, rounded once each.
    const ratio0 = pool.ratio0 ?? ratioOfNumber(price0);
    const priceRatio = isToken0 ? ratio0 : ratioInverse(ratio0);
    const quoteUsdRatio = exactUsd(q);
    const priceUsdRatio = ratioReduced(ratioMul(priceRatio, quoteUsdRatio));
    quotes.push({
      pool: pool.address,
      dex: pool.dex,
      quote,
      quoteUsd: q.usdPrice,
      quoteUsdRatio,
      liquidityUsd,
      // price0 is ratio0 correctly rounded (GraphPool); the other side's rounding is kept per ratio.
      price: isToken0 ? price0 : inverseValue(ratio0, priceRatio),
      priceUsd: ratioValue(priceUsdRatio),
      priceUsdRatio,
      weight: 0,
      quoteConfidence: q.confidence,
      // An anchor's price does not move with its pools: it adds no block to the tokens above it.
      quoteAsOf: q.method === "anchor" ? [null, null] : [q.asOfBlock, q.asOfTime],
    });
  }
  return { quotes, belowFloor };
}

/**
 * A token's price in layer `tokenLayer` from its pools against the tokens `quoteOf` prices (those
 * of the earlier layers); null when none qualifies or its decimals are unknown.
 */
export function evaluateToken(
  graph: RoutingGraph,
  options: PricingOptions,
  token: string,
  quoteOf: (quote: string) => TokenPrice | undefined,
  tokenLayer: number,
): TokenPrice | null {
  if (graph.decimals.get(token) == null) return null;
  const { quotes, belowFloor } = quotesOf(graph, options, token, quoteOf);
  const combined = combinePrices(quotes, options.maxDeviation);
  if (!combined) return null;
  const keptLiquidity = combined.kept.reduce((sum, q) => sum + q.liquidityUsd, 0);
  const totalLiquidity = quotes.reduce((sum, q) => sum + q.liquidityUsd, 0);
  const quoteConfidence =
    combined.kept.reduce((sum, q) => sum + q.quoteConfidence * q.liquidityUsd, 0) / keptLiquidity;
  const depthFactor =
    options.liquidityFloorUsd > 0 ? keptLiquidity / (keptLiquidity + options.liquidityFloorUsd) : 1;
  const confidence = (keptLiquidity / totalLiquidity) * depthFactor * quoteConfidence;
  let [asOfBlock, asOfTime] = asOfOwnPools(graph, token);
  let heaviest = combined.kept[0];
  for (const q of combined.kept) {
    const [block, time] = q.quoteAsOf;
    if (block !== null && (asOfBlock === null || block > asOfBlock)) [asOfBlock, asOfTime] = [block, time];
    if (heaviest && q.liquidityUsd > heaviest.liquidityUsd) heaviest = q;
  }
  // Field by field: a rest pattern copies through the generic (slow) path, once per quote and block.
  const strip = (q: QuoteRead, weight: number): PoolQuote => ({
    pool: q.pool,
    dex: q.dex,
    quote: q.quote,
    quoteUsd: q.quoteUsd,
    quoteUsdRatio: q.quoteUsdRatio,
    liquidityUsd: q.liquidityUsd,
    price: q.price,
    priceUsd: q.priceUsd,
    weight,
  });
  return {
    token,
    usdPrice: combined.priceUsd,
    usdRatio: combined.priceUsdRatio,
    method: "pools",
    layer: tokenLayer,
    confidence: Math.round(confidence * 1e4) / 1e4,
    route: [token, ...(heaviest ? (quoteOf(heaviest.quote)?.route ?? [heaviest.quote]) : [])],
    median: combined.median,
    pools: combined.kept.map((q) => strip(q, q.liquidityUsd / keptLiquidity)),
    dropped: combined.dropped.map((q) => strip(q, 0)),
    belowFloor,
    asOfBlock,
    asOfTime,
  };
}

/**
 * A pool's liquidity in USD as a token's pricing measures it: twice the quote side's depth at the
 * quote's USD price. Null when the pool cannot quote (no usable spot price, no depth).
 */
function quotedLiquidityUsd(pool: GraphPool, isToken0: boolean, quoteUsd: number): number | null {
  const price0 = pool.price0;
  if (price0 === null || !(price0 > 0) || !Number.isFinite(price0)) return null;
  const depth = isToken0 ? pool.depth1 : pool.depth0;
  if (depth === null) return null;
  return 2 * depth * quoteUsd;
}

/** A pool whose quoted liquidity is under the floor (or not positive) does not qualify. */
const belowTheFloor = (liquidityUsd: number, options: PricingOptions) =>
  !(liquidityUsd > 0) || liquidityUsd < options.liquidityFloorUsd;

/** The newest state (block, time) among a token's own pools: what its price is as of without quotes. */
function asOfOwnPools(graph: RoutingGraph, token: string): [number | null, number | null] {
  if (graph.newestOf) return graph.newestOf.get(token) ?? [null, null];
  let block: number | null = null;
  let time: number | null = null;
  for (const pool of graph.poolsOf.get(token) ?? []) {
    if (pool.stateBlock !== null && (block === null || pool.stateBlock > block)) {
      block = pool.stateBlock;
      time = pool.stateTime;
    }
  }
  return [block, time];
}

/**
 * Every token of the graph's price: the priced ones (`computeUsdPrices` with `pricedOnly`), the
 * others with why they have none. An unpriced token's entry is the previous call's object while
 * it holds the same, so that its stored row is seen unchanged without being compared.
 */
export function withUnpriced(
  graph: RoutingGraph,
  options: PricingOptions,
  priced: ReadonlyMap<string, TokenPrice>,
  memo?: PriceMemo,
  /**
   * Only these tokens' entries (default: every token of the graph); `priced` must then hold every
   * priced neighbour of theirs (as `lazyUsdPrices` does), which the below-the-floor count reads.
   */
  tokens?: Iterable<string>,
): Map<string, TokenPrice> {
  const asOfOwn = (token: string) => asOfOwnPools(graph, token);
  /** Pools against priced tokens whose liquidity is below the floor (as `quotesOf` counts them). */
  const belowFloorOf = (token: string): number => {
    let count = 0;
    for (const pool of graph.poolsOf.get(token) ?? []) {
      const isToken0 = pool.token0 === token;
      const quote = isToken0 ? pool.token1 : pool.token0;
      if (quote === token) continue;
      const q = priced.get(quote);
      if (!q || q.usdPrice === null) continue;
      const liquidityUsd = quotedLiquidityUsd(pool, isToken0, q.usdPrice);
      if (liquidityUsd !== null && belowTheFloor(liquidityUsd, options)) count += 1;
    }
    return count;
  };
  const previous = memo?.unpriced ?? null;
  const next = new Map<string, TokenPrice>();
  const out = new Map<string, TokenPrice>();
  for (const token of tokens ?? graph.poolsOf.keys()) {
    const price = priced.get(token);
    if (price) {
      out.set(token, price);
      continue;
    }
    if (!graph.poolsOf.has(token)) continue;
    const [asOfBlock, asOfTime] = asOfOwn(token);
    const known = graph.decimals.get(token) != null;
    const reason = known ? "no-qualifying-pool" : "decimals-unknown";
    const belowFloor = known ? belowFloorOf(token) : 0;
    const before = previous?.get(token);
    const entry: TokenPrice =
      before &&
      before.reason === reason &&
      before.belowFloor === belowFloor &&
      before.asOfBlock === asOfBlock &&
      before.asOfTime === asOfTime
        ? before
        : {
            token,
            usdPrice: null,
            usdRatio: null,
            method: "none",
            reason,
            layer: null,
            confidence: 0,
            route: [],
            median: null,
            pools: [],
            dropped: [],
            belowFloor,
            asOfBlock,
            asOfTime,
          };
    next.set(token, entry);
    out.set(token, entry);
  }
  // A subset's entries do not replace the memo of every token's.
  if (memo && tokens === undefined) memo.unpriced = next;
  return out;
}
