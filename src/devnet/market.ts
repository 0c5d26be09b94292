/**
 * The devnet's market: which tokens exist, at what price, in which pools, with how much
 * liquidity, and how lively each pool trades. Pure data; deploy.ts builds it on chain and
 * simulator.ts trades on it. Each odd case the indexer and the pricing must survive has its token:
 *
 * - KIBL is reachable only through WETH (its pools are all against WETH): USD needs two hops.
 * - FAKEUSDC is a look-alike: symbol "USDC", name "USD Coin", 6 decimals, priced nowhere near $1,
 *   in one pool below the liquidity floor; it must never price anything.
 * - MKR answers name()/symbol() as bytes32, like mainnet MKR.
 * - NODEC's decimals() reverts; it trades against WETH.
 * - LINK has one deep pool (V3, millions) and one thin pool (V2, ~$40k, above a $10k floor).
 * - DUST's only pool holds ~$2k, below a $10k floor: its USD price stays unknown.
 * - FROG trades only on a Uniswap V4 pool against the native coin (ETH, not WETH): its USD price
 *   goes through the native coin, which must price as WETH does.
 * - V4 pools: one against native ETH, one with a hook that only observes swaps, one with a hook
 *   allowed to return deltas (whose pool must never set a USD price).
 * - An Algebra Integral pool (LINK/USDT): Algebra's own Swap and Burn layouts (with the plugin's
 *   fee), its factory's `Pool` event. It trades on a random stream of its own (see planner.ts):
 *   the other pools' history does not depend on it.
 */
import type { DevnetFamilyName } from "./families/index.js";
import market from "./market.json" with { type: "json" };
import type { HookKind } from "./v4.js";

export type TokenKey =
  | "WETH"
  | "USDC"
  | "USDT"
  | "DAI"
  | "WBTC"
  | "LINK"
  | "UNI"
  | "MKR"
  | "KIBL"
  | "FAKEUSDC"
  | "NODEC"
  | "DUST"
  | "FROG";

/** How a token's contract answers its metadata calls. */
export type TokenMetadataKind = "weth9" | "string" | "bytes32" | "reverting-decimals";

export type TokenSpec = {
  key: TokenKey;
  name: string;
  symbol: string;
  /** The unit of its amounts; for "reverting-decimals" the one the simulator assumes (the chain does not say). */
  decimals: number;
  metadata: TokenMetadataKind;
  /** USD price at deployment (before the seed's jitter). */
  priceUsd: number;
  /** Standard deviation of the daily log return of its own moves. */
  dailyVolatility: number;
  /** How much of ETH's move it follows (0: none; stablecoins do not move). */
  ethBeta: number;
};

export const tokenSpecs: readonly TokenSpec[] = [
  {
    key: "WETH",
    name: "Wrapped Ether",
    symbol: "WETH",
    decimals: 18,
    metadata: "weth9",
    priceUsd: 3000,
    dailyVolatility: 0.035,
    ethBeta: 0,
  },
  {
    key: "USDC",
    name: "USD Coin",
    symbol: "USDC",
    decimals: 6,
    metadata: "string",
    priceUsd: 1,
    dailyVolatility: 0,
    ethBeta: 0,
  },
  {
    key: "USDT",
    name: "Tether USD",
    symbol: "USDT",
    decimals: 6,
    metadata: "string",
    priceUsd: 1,
    dailyVolatility: 0,
    ethBeta: 0,
  },
  {
    key: "DAI",
    name: "Dai Stablecoin",
    symbol: "DAI",
    decimals: 18,
    metadata: "string",
    priceUsd: 1,
    dailyVolatility: 0,
    ethBeta: 0,
  },
  {
    key: "WBTC",
    name: "Wrapped BTC",
    symbol: "WBTC",
    decimals: 8,
    metadata: "string",
    priceUsd: 60_000,
    dailyVolatility: 0.022,
    ethBeta: 0.6,
  },
  {
    key: "LINK",
    name: "ChainLink Token",
    symbol: "LINK",
    decimals: 18,
    metadata: "string",
    priceUsd: 15,
    dailyVolatility: 0.03,
    ethBeta: 1.1,
  },
  {
    key: "UNI",
    name: "Uniswap",
    symbol: "UNI",
    decimals: 18,
    metadata: "string",
    priceUsd: 8.5,
    dailyVolatility: 0.035,
    ethBeta: 1.1,
  },
  {
    key: "MKR",
    name: "Maker",
    symbol: "MKR",
    decimals: 18,
    metadata: "bytes32",
    priceUsd: 2200,
    dailyVolatility: 0.03,
    ethBeta: 0.8,
  },
  {
    key: "KIBL",
    name: "Kibble",
    symbol: "KIBL",
    decimals: 9,
    metadata: "string",
    priceUsd: 0.0042,
    dailyVolatility: 0.08,
    ethBeta: 1.3,
  },
  {
    key: "FAKEUSDC",
    name: "USD Coin",
    symbol: "USDC",
    decimals: 6,
    metadata: "string",
    priceUsd: 0.25,
    dailyVolatility: 0.05,
    ethBeta: 0,
  },
  {
    key: "NODEC",
    name: "No Decimals",
    symbol: "NODEC",
    decimals: 18,
    metadata: "reverting-decimals",
    priceUsd: 0.8,
    dailyVolatility: 0.04,
    ethBeta: 0.5,
  },
  {
    key: "DUST",
    name: "Dust Finance",
    symbol: "DUST",
    decimals: 12,
    metadata: "string",
    priceUsd: 0.013,
    dailyVolatility: 0.05,
    ethBeta: 0.7,
  },
  // Last: a token added here takes the next deployer nonce, so every earlier address stays.
  {
    key: "FROG",
    name: "Frog Coin",
    symbol: "FROG",
    decimals: 18,
    metadata: "string",
    priceUsd: 0.00035,
    dailyVolatility: 0.09,
    ethBeta: 1.4,
  },
];

/** A pool's DEX family, by its registry name (the devnet runs the families of ./families/). */
export type Protocol = DevnetFamilyName;

export type PoolSpec = {
  /** "v3:WETH/USDC:500", "v2:LINK/USDC". */
  key: string;
  protocol: Protocol;
  /** Listed base/quote as people name the pair; token0/token1 follow the addresses. */
  base: TokenKey;
  quote: TokenKey;
  /** Hundredths of a bip: 100, 500, 3000, 10000; V2 pairs charge 3000. */
  fee: number;
  /** USD value of both sides deposited over the full price range (all of a V2 pair's liquidity). */
  fullRangeUsd: number;
  /** V3 positions concentrated around the initial price: ±`widthPct` percent. */
  ranges?: readonly { usd: number; widthPct: number }[];
  /** Relative share of the random trades. */
  activity: number;
  /** Median size of a random trade, USD. */
  tradeUsd: number;
  /** V4: the WETH side of the pair is the native coin (currency address zero) instead. */
  native?: boolean;
  /** V4: the pool's hook (see v4.ts), none when absent. */
  hooks?: HookKind;
  /** V4: the pool's tick spacing (V3's follows the fee tier; Algebra's is its factory's default, 60). */
  tickSpacing?: number;
};

/**
 * The demo market's pools and routes are data (market.json), each naming its DEX family by the
 * family's registry name; the families in ./families/ deploy and trade them. Pools, in order:
 * the V3 majors (deep, with concentrated positions around the price), the V2 pairs (0.3 %), the
 * Uniswap V4 pools (one PoolManager holds them all; full-range liquidity; one with the native
 * coin, hooks with and without return deltas), and last the Algebra Integral pool (its fee the
 * factory's default, 0.05 %, without a plugin that changes it; full-range liquidity), whose trades
 * draw from their own random stream. The order is part of the seeded history: keep it.
 */
export const poolSpecs: readonly PoolSpec[] = market.pools.map((pool) => {
  // JSON types its names as plain strings: the token names are checked here, at load (a family
  // name where it is used: devnetFamilyOf throws for an unknown one).
  checkTokens(pool.key, [pool.base, pool.quote]);
  return pool as PoolSpec;
});

/** Multi-hop routes traders take now and then (through the routers, one transaction). */
export type RouteSpec = {
  protocol: Protocol;
  /** Token path; V3 routes name the fee tier of each hop in `fees`. */
  path: readonly TokenKey[];
  fees?: readonly number[];
  activity: number;
  tradeUsd: number;
};

export const routeSpecs: readonly RouteSpec[] = market.routes.map((route) => {
  checkTokens(`route ${route.path.join(">")}`, route.path);
  return route as RouteSpec;
});

/** Throws when `keys` name a token the market does not have. */
function checkTokens(what: string, keys: readonly string[]): void {
  const unknown = keys.filter((key) => !tokenSpecs.some((t) => t.key === key));
  if (unknown.length > 0) throw new Error(`market.json: ${what} names unknown tokens ${unknown.join(", ")}`);
}

/** V3 tick spacing of each fee tier (100 is enabled by the deployment, as on mainnet since 2021). */
export const tickSpacingByFee: Readonly<Record<number, number>> = { 100: 1, 500: 10, 3000: 60, 10000: 200 };

export function tokenSpec(key: TokenKey): TokenSpec {
  const spec = tokenSpecs.find((t) => t.key === key);
  if (spec === undefined) throw new Error(`unknown devnet token ${key}`);
  return spec;
}
