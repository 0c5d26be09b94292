import { NATIVE_COIN } from "../model/index.js";
import {
  computeUsdPrices,
  evaluateToken,
  type GraphPool,
  type PriceMemo,
  type PricingOptions,
  type ReferenceTokens,
  type RoutingGraph,
  referenceSet,
  type TokenPrice,
  withUnpriced,
} from "./usd-prices.js";

/**
 * The USD prices of a few tokens, exactly those `computeUsdPrices` gives them, without walking
 * every token of the chain: what valuing one block's trades needs (docs/PRICING.md, *Prices of a
 * block's trades*).
 *
 * The full walk prices the reference tokens (phase 1), then every other token breadth-first: a
 * token priced in round k of the second phase reads the tokens priced before round k, and it is
 * priced in the first round in which one of its pools qualifies, so its round is one more than
 * the lowest round among the quotes of its qualifying pools. Here phase 1 runs as in the full
 * walk (the reference tokens are few), and the rest is asked for: `resolve(T, m)` finds whether
 * T's round is at most m, trying rounds 1 … m, each after its neighbours' rounds up to k − 1 are
 * known (recursively, memoised; the second argument falls with every step, so it ends). A round
 * is evaluated by the same function as the full walk (`evaluateToken`) with the same quotes in the
 * same pool order, hence the same object fields, bit for bit. A token none of whose neighbours can
 * still be priced later is settled as never priced.
 *
 * Null when the question cannot be settled within the budget (a ring of tokens none of which
 * gets priced, a deep or very wide neighbourhood): the caller walks the whole graph instead.
 */
export function lazyUsdPrices(
  graph: RoutingGraph,
  reference: ReferenceTokens,
  options: PricingOptions,
  wanted: Iterable<string>,
  budget: { rounds: number; poolVisits: number } = { rounds: 32, poolVisits: 200_000 },
): Map<string, TokenPrice> | null {
  // Phase 1 (anchors and reference tokens) exactly as the full walk, and its last layer.
  const prices = computeUsdPrices(referenceView(graph, reference), reference, options, undefined, true, true);
  let lastLayer = 0;
  const round = new Map<string, number>();
  for (const [token, price] of prices) {
    round.set(token, 0);
    if (price.layer !== null && price.layer > lastLayer) lastLayer = price.layer;
  }
  /** Per token whose round is not known: its round is above this (Infinity: never priced). */
  const above = new Map<string, number>();
  let visits = 0;
  const GIVE_UP = Symbol("give up");

  const resolve = (token: string, m: number): number => {
    const known = round.get(token);
    if (known !== undefined) return known <= m ? known : Number.POSITIVE_INFINITY;
    const from = above.get(token) ?? 0;
    if (from >= m) return Number.POSITIVE_INFINITY;
    // The native coin is priced in phase 1 (as the wrapped native token) or not at all.
    if (graph.decimals.get(token) == null || token === NATIVE_COIN) {
      above.set(token, Number.POSITIVE_INFINITY);
      return Number.POSITIVE_INFINITY;
    }
    const pools = graph.poolsOf.get(token) ?? [];
    for (let k = from + 1; k <= m; k++) {
      visits += pools.length;
      if (visits > budget.poolVisits) throw GIVE_UP;
      // The quotes of round k are the neighbours priced before it; a round that adds none sees
      // the same quotes as the round before, which priced nothing.
      let added = k === 1;
      let settled = true;
      for (const pool of pools) {
        const quote = pool.token0 === token ? pool.token1 : pool.token0;
        if (quote === token) continue;
        const r = resolve(quote, k - 1);
        if (r === k - 1) added = true;
        else if (r === Number.POSITIVE_INFINITY && above.get(quote) !== Number.POSITIVE_INFINITY)
          settled = false;
      }
      if (added) {
        const price = evaluateToken(
          graph,
          options,
          token,
          (quote) => {
            const r = round.get(quote);
            return r !== undefined && r < k ? prices.get(quote) : undefined;
          },
          lastLayer + k,
        );
        if (price) {
          round.set(token, k);
          prices.set(token, price);
          return k;
        }
      }
      // Every neighbour priced before k or never: no later round brings a new quote.
      above.set(token, settled ? Number.POSITIVE_INFINITY : k);
      if (settled) return Number.POSITIVE_INFINITY;
    }
    return Number.POSITIVE_INFINITY;
  };

  try {
    for (const token of wanted) {
      if (round.has(token) || !graph.poolsOf.has(token)) continue;
      if (
        resolve(token, budget.rounds) === Number.POSITIVE_INFINITY &&
        above.get(token) !== Number.POSITIVE_INFINITY
      ) {
        return null;
      }
    }
  } catch (error) {
    if (error === GIVE_UP) return null;
    throw error;
  }
  return prices;
}

/**
 * The entries `computeUsdPrices` then `withUnpriced` give `tokens` (priced or with why not), and
 * only theirs: `lazyUsdPrices`, the full walk when that gives up. What a batch that refreshes a
 * share of the chain's figures stores (docs/PRICING.md, *Figures of a large chain, a share per
 * batch*).
 */
export function pricesOfTokens(
  graph: RoutingGraph,
  reference: ReferenceTokens,
  options: PricingOptions,
  tokens: readonly string[],
  memo?: PriceMemo,
): Map<string, TokenPrice> {
  const lazy = lazyUsdPrices(graph, reference, options, tokens);
  // Every priced neighbour of an unpriced wanted token is in the lazy map: the token was settled
  // as never priced only once each neighbour's round was known (or its decimals are unknown, when
  // the count is not read).
  const priced = lazy ?? computeUsdPrices(graph, reference, options, memo, true);
  return withUnpriced(graph, options, priced, memo, tokens);
}

/**
 * What phase 1 of the walk reads of a graph that keeps `newestOf`: the reference tokens with only
 * their pools against other reference tokens (in the same order), and the same `newestOf`. Phase 1
 * allows only reference tokens as quotes, so the other pools add no quote and no below-the-floor
 * count, and a price's as-of block comes from `newestOf` (every pool of the token): the same
 * entries, without walking WETH's pools (a large share of the chain's) at every block. Kept per
 * graph while the reference tokens' pool lists keep their lengths (pools are only ever added).
 * A graph without `newestOf` is its own view.
 */
function referenceView(graph: RoutingGraph, reference: ReferenceTokens): RoutingGraph {
  if (!graph.newestOf) return graph;
  const references = referenceSet(reference);
  let key = "";
  for (const token of references) key += `${token}:${graph.poolsOf.get(token)?.length ?? 0},`;
  key += graph.poolsOf.has(NATIVE_COIN) ? "native" : "";
  const kept = referenceViews.get(graph);
  if (kept && kept.key === key) return kept.view;
  const poolsOf = new Map<string, GraphPool[]>();
  for (const token of references) {
    const pools = graph.poolsOf.get(token);
    if (!pools) continue;
    poolsOf.set(
      token,
      pools.filter((pool) => references.has(pool.token0 === token ? pool.token1 : pool.token0)),
    );
  }
  // The native coin takes the wrapped native token's price in phase 1 where it has pools.
  if (graph.poolsOf.has(NATIVE_COIN)) poolsOf.set(NATIVE_COIN, []);
  const view: RoutingGraph = { decimals: graph.decimals, poolsOf, newestOf: graph.newestOf };
  referenceViews.set(graph, { key, view });
  return view;
}
const referenceViews = new WeakMap<RoutingGraph, { key: string; view: RoutingGraph }>();
