/**
 * What a pair record tells people about its pool beyond token0/token1: its name as traders read
 * it, base/quote, the quote being the pair's reference token (a stablecoin, else the wrapped
 * native coin or the native coin itself, else wrapped BTC) and the base the other one (WETH/USDC,
 * not USDC/WETH; KIBL/WETH), and its hook. Records keep token0/token1 in the pool's order.
 */
import { Type } from "@sinclair/typebox";
import type { ReferenceTokens } from "../config/schema.js";
import { NATIVE_COIN, type ProtocolName } from "../model/index.js";
import { usdSeriesToken } from "../pricing/native-coin.js";
import { familyOf, type PoolTraits } from "../protocols/index.js";
import { Nullable } from "./schemas.js";

/** How strongly a token is a quote: 0 for a token that is not a reference, higher is preferred. */
export function quotePreference(reference: ReferenceTokens | undefined, token: string): number {
  if (!reference) return 0;
  const address = token.toLowerCase();
  // Within a group, the configuration's order: its first stablecoin is the preferred quote.
  const inGroup = (group: readonly string[], weight: number) => {
    const i = group.indexOf(address);
    return i === -1 ? 0 : weight - i / (group.length + 1);
  };
  const stable = inGroup(reference.stablecoins, 4);
  if (stable > 0) return stable;
  if (address === reference.wrappedNative) return 3;
  // The native coin answers the wrapped native's price: the same kind of quote, after it.
  if (address === NATIVE_COIN) return 2.5;
  return inGroup(reference.wrappedBtc, 2);
}

/** Which of the pool's tokens is the base (the other is the quote); token0 where neither is preferred. */
export function baseSide(reference: ReferenceTokens | undefined, token0: string, token1: string): 0 | 1 {
  return quotePreference(reference, token0) > quotePreference(reference, token1) ? 1 : 0;
}

/** A token's symbol, else its short address (`0x1234…abcd`), as the page shows an unnamed token. */
function symbolOr(symbol: string | null, address: string): string {
  return symbol || `${address.slice(0, 6)}…${address.slice(-4)}`;
}

/** The fields a pair record gains: its name and its base and quote tokens' ids. */
export type PairNaming = { name: string; base_address: string; quote_address: string };

/** A pool's name and base/quote token ids (`<address>:<chainId>`). */
export function pairNaming(
  reference: ReferenceTokens | undefined,
  pool: {
    chainId: number;
    token0: string;
    token1: string;
    symbol0: string | null;
    symbol1: string | null;
  },
): PairNaming {
  const tokens = [
    { address: pool.token0, symbol: pool.symbol0 },
    { address: pool.token1, symbol: pool.symbol1 },
  ] as const;
  const side = baseSide(reference, pool.token0, pool.token1);
  const base = tokens[side];
  const quote = tokens[1 - side] as (typeof tokens)[number];
  return {
    name: `${symbolOr(base.symbol, base.address)}/${symbolOr(quote.symbol, quote.address)}`,
    base_address: `${base.address}:${pool.chainId}`,
    quote_address: `${quote.address}:${pool.chainId}`,
  };
}

/** The reference tokens of a configured chain (undefined for another: its pools keep token0/token1's order). */
export function referenceTokensOf(
  chains: readonly { id: number; referenceTokens: ReferenceTokens }[],
  chainId: number,
): ReferenceTokens | undefined {
  return chains.find((c) => c.id === chainId)?.referenceTokens;
}

/**
 * The token whose USD series (line chart, USD candles) the token `id` answers: the native coin
 * answers the wrapped native token's series (one USD price for both), any other token its own.
 */
export function seriesTokenOf(
  chains: readonly { id: number; referenceTokens: ReferenceTokens }[],
  id: { chainId: number; address: string },
): string {
  return usdSeriesToken(id.address, referenceTokensOf(chains, id.chainId)?.wrappedNative);
}

/** The fields a pair record gains, for its schema (poolLabels makes them). */
export const poolLabelFields = {
  name: Type.String({
    description:
      "The pool as traders name it, `<base>/<quote>`: the quote is its reference token (a stablecoin, else the wrapped native coin or the native coin, else wrapped BTC), the base the other (WETH/USDC, KIBL/WETH); a token without a symbol shows as its short address. token0/token1 keep the pool's order.",
  }),
  base_address: Type.String({ description: "Token id of the base (one of token0, token1)." }),
  quote_address: Type.String({ description: "Token id of the quote (the other one)." }),
  hooks: Nullable(
    Type.String({
      description:
        "The hook contract of a pool inside a manager (Uniswap V4, PancakeSwap Infinity); null for a pool without one.",
    }),
  ),
  hook_may_rewrite_amounts: Type.Optional(
    Type.Literal(true, {
      description:
        "Present (true) only for a pool whose hook may return deltas: its trades' amounts may differ from what the trader paid, and it never sets or moves a USD price (as on its trades).",
    }),
  ),
};

type PoolTraitsRow = PoolTraits & { protocol?: ProtocolName | string };

/** The pool's hook contract; null without one (no hooks, or the zero address). */
export function hookOf(pool: PoolTraitsRow): string | null {
  const hooks = pool.hooks ?? null;
  return hooks === null || /^0x0*$/.test(hooks) ? null : hooks;
}

/** Whether the pool's hook may return deltas, as its family judges it. */
export function hookMayRewriteAmounts(pool: PoolTraitsRow): boolean {
  if (!pool.protocol) return false;
  return familyOf(pool.protocol as ProtocolName).rewritesAmounts({
    hooks: pool.hooks ?? null,
    parameters: pool.parameters ?? null,
  });
}

/** A pair record's name, base and quote, hook and (only where it holds) hook_may_rewrite_amounts. */
export function poolLabels(
  reference: ReferenceTokens | undefined,
  pool: Parameters<typeof pairNaming>[1] & PoolTraitsRow,
): PairNaming & { hooks: string | null; hook_may_rewrite_amounts?: true } {
  const labels = { ...pairNaming(reference, pool), hooks: hookOf(pool) };
  return hookMayRewriteAmounts(pool) ? { ...labels, hook_may_rewrite_amounts: true } : labels;
}
