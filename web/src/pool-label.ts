// How the page names a pool, pure: base/quote as the API names it (`name`, `base_address`: the
// quote is the pair's reference token), the base's USD figures, and the pool's venue line: its DEX,
// its family where the DEX's name does not already say it, its hook, and a pool id shortened.

import type { Pair, TokenMarket, TopPool, WindowName } from "./api.js";
import { type ChangeDirection, formatChange, formatUsd, shortHex } from "./format.js";
import { symbolOr, tokenIdOf } from "./market.js";

type Protocol = Pair["protocol"];

/** A family as people read it beside a DEX's name. */
export const familyLabels: Readonly<Record<Protocol, string>> = {
  v2: "V2",
  v3: "V3",
  v4: "V4",
  algebra: "Algebra",
  "infinity-cl": "Infinity CL",
  "infinity-bin": "Infinity Bin",
};

/** What a pool record (a pair of /api/v1/pairs or a pair market record) tells of its pool. */
export type PoolFacts = Pick<
  Pair & TopPool,
  | "chain"
  | "pair_address"
  | "factory_name"
  | "protocol"
  | "hooks"
  | "hook_may_rewrite_amounts"
  | "token0_address"
  | "token1_address"
  | "token0_symbol"
  | "token1_symbol"
  | "name"
  | "base_address"
>;

/** A pool inside a manager (Uniswap V4, PancakeSwap Infinity) is known by a 32-byte id, not an address. */
export function isPoolId(address: string): boolean {
  return /^0x[0-9a-f]{64}$/i.test(address);
}

/** Which of the pool's tokens is the base (the API's `base_address`). */
export function baseSide(pool: Pick<PoolFacts, "chain" | "base_address" | "token1_address">): 0 | 1 {
  return tokenIdOf(pool.base_address, pool.chain) === tokenIdOf(pool.token1_address, pool.chain) ? 1 : 0;
}

/** The pool's tokens as named, base first: symbols and token ids. */
export function baseQuote(pool: PoolFacts): { symbols: [string, string]; tokenIds: [string, string] } {
  const side = baseSide(pool);
  const tokens = [
    { symbol: symbolOr(pool.token0_symbol, pool.token0_address), address: pool.token0_address },
    { symbol: symbolOr(pool.token1_symbol, pool.token1_address), address: pool.token1_address },
  ];
  const [base, quote] = side === 0 ? [tokens[0], tokens[1]] : [tokens[1], tokens[0]];
  return {
    symbols: [base?.symbol ?? "", quote?.symbol ?? ""],
    tokenIds: [tokenIdOf(base?.address ?? "", pool.chain), tokenIdOf(quote?.address ?? "", pool.chain)],
  };
}

/** The family's label unless the DEX's name already says it ("Uniswap V3" is a V3 pool). */
function familyPart(pool: Pick<PoolFacts, "factory_name" | "protocol">): string | undefined {
  const label = familyLabels[pool.protocol] ?? pool.protocol;
  const words = ` ${pool.factory_name.toLowerCase()} `;
  return words.includes(` ${label.toLowerCase()} `) ? undefined : label;
}

/**
 * The pool's venue line: `Uniswap V4 · hook · 0x1234…abcd`, `QuickSwap V3 · Algebra`,
 * `Uniswap V3`. `withAddress` adds the short address of a pool that is a contract (told apart
 * from a sibling of the same DEX and tokens); a pool id is always shown, shortened.
 */
export function poolVenue(
  pool: Pick<PoolFacts, "factory_name" | "protocol" | "hooks" | "hook_may_rewrite_amounts" | "pair_address">,
  withAddress = false,
): string {
  const parts = [pool.factory_name];
  const family = familyPart(pool);
  if (family) parts.push(family);
  if (pool.hooks) parts.push(pool.hook_may_rewrite_amounts ? "delta hook" : "hook");
  if (withAddress || isPoolId(pool.pair_address)) parts.push(shortHex(pool.pair_address));
  return parts.join(" · ");
}

/** The venue line's tooltip: DEX, family, hook and the pool's full address or id. */
export function poolVenueTitle(
  pool: Pick<PoolFacts, "factory_name" | "protocol" | "hooks" | "hook_may_rewrite_amounts" | "pair_address">,
): string {
  const lines = [`DEX: ${pool.factory_name}`, `Family: ${familyLabels[pool.protocol] ?? pool.protocol}`];
  if (pool.hooks) {
    lines.push(
      pool.hook_may_rewrite_amounts
        ? `Hook ${pool.hooks}: may return deltas, so amounts may differ from what traders paid; the pool never moves a USD price`
        : `Hook ${pool.hooks}`,
    );
  }
  lines.push(`${isPoolId(pool.pair_address) ? "Pool id" : "Pool"}: ${pool.pair_address}`);
  return lines.join("\n");
}

/**
 * The base's USD price and its USD change over `window`: the change is the token's own (its
 * market record), the same figure its token page shows, never the pool's ratio.
 */
export function basePrice(
  pool: Pick<PoolFacts, "chain" | "base_address" | "token1_address"> & {
    token0_usd_price?: number | null;
    token1_usd_price?: number | null;
    token0_price?: number | null;
    token1_price?: number | null;
  },
  markets: ReadonlyMap<string, TokenMarket>,
  window: WindowName,
): { price: string; change: { text: string; direction: ChangeDirection } } {
  const side = baseSide(pool);
  const usd =
    side === 0
      ? (pool.token0_usd_price ?? pool.token0_price ?? null)
      : (pool.token1_usd_price ?? pool.token1_price ?? null);
  const market = markets.get(tokenIdOf(pool.base_address, pool.chain));
  return { price: formatUsd(usd), change: formatChange(market?.windows[window]?.price_change) };
}

/**
 * The venue line of each pair, with the pool's short address where one pair of tokens trades in
 * several pools of one DEX (V3 fee tiers), so that the pools can be told apart.
 */
export function pairVenues(pairs: readonly Pair[]): Map<string, string> {
  const count = new Map<string, number>();
  const key = (p: Pair) => `${p.name}|${p.factory_name}`;
  for (const p of pairs) count.set(key(p), (count.get(key(p)) ?? 0) + 1);
  return new Map(pairs.map((p) => [p.pair_id, poolVenue(p, (count.get(key(p)) ?? 0) > 1)]));
}
