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

const v2Fee = 3000;

export const poolSpecs: readonly PoolSpec[] = [
  // V3: the majors, deep, with concentrated positions around the price.
  {
    key: "v3:WETH/USDC:500",
    protocol: "v3",
    base: "WETH",
    quote: "USDC",
    fee: 500,
    fullRangeUsd: 6_000_000,
    ranges: [{ usd: 12_000_000, widthPct: 15 }],
    activity: 10,
    tradeUsd: 8000,
  },
  {
    key: "v3:WETH/USDC:3000",
    protocol: "v3",
    base: "WETH",
    quote: "USDC",
    fee: 3000,
    fullRangeUsd: 4_000_000,
    activity: 4,
    tradeUsd: 5000,
  },
  {
    key: "v3:WETH/USDT:500",
    protocol: "v3",
    base: "WETH",
    quote: "USDT",
    fee: 500,
    fullRangeUsd: 3_000_000,
    ranges: [{ usd: 5_000_000, widthPct: 15 }],
    activity: 5,
    tradeUsd: 6000,
  },
  {
    key: "v3:WBTC/WETH:3000",
    protocol: "v3",
    base: "WBTC",
    quote: "WETH",
    fee: 3000,
    fullRangeUsd: 5_000_000,
    ranges: [{ usd: 5_000_000, widthPct: 20 }],
    activity: 4,
    tradeUsd: 8000,
  },
  {
    key: "v3:WBTC/USDC:3000",
    protocol: "v3",
    base: "WBTC",
    quote: "USDC",
    fee: 3000,
    fullRangeUsd: 3_000_000,
    activity: 2,
    tradeUsd: 5000,
  },
  {
    key: "v3:USDC/USDT:100",
    protocol: "v3",
    base: "USDC",
    quote: "USDT",
    fee: 100,
    fullRangeUsd: 1_000_000,
    ranges: [{ usd: 5_000_000, widthPct: 0.5 }],
    activity: 3,
    tradeUsd: 20_000,
  },
  {
    key: "v3:DAI/USDC:100",
    protocol: "v3",
    base: "DAI",
    quote: "USDC",
    fee: 100,
    fullRangeUsd: 1_000_000,
    ranges: [{ usd: 3_000_000, widthPct: 0.5 }],
    activity: 2,
    tradeUsd: 15_000,
  },
  {
    key: "v3:LINK/WETH:3000",
    protocol: "v3",
    base: "LINK",
    quote: "WETH",
    fee: 3000,
    fullRangeUsd: 4_000_000,
    activity: 3,
    tradeUsd: 3000,
  },
  {
    key: "v3:UNI/WETH:3000",
    protocol: "v3",
    base: "UNI",
    quote: "WETH",
    fee: 3000,
    fullRangeUsd: 2_000_000,
    ranges: [{ usd: 1_500_000, widthPct: 25 }],
    activity: 2,
    tradeUsd: 2500,
  },
  {
    key: "v3:MKR/DAI:3000",
    protocol: "v3",
    base: "MKR",
    quote: "DAI",
    fee: 3000,
    fullRangeUsd: 1_200_000,
    activity: 1,
    tradeUsd: 3000,
  },
  {
    key: "v3:KIBL/WETH:10000",
    protocol: "v3",
    base: "KIBL",
    quote: "WETH",
    fee: 10_000,
    fullRangeUsd: 600_000,
    activity: 2,
    tradeUsd: 800,
  },
  {
    key: "v3:DUST/USDC:10000",
    protocol: "v3",
    base: "DUST",
    quote: "USDC",
    fee: 10_000,
    fullRangeUsd: 2_000,
    activity: 0.1,
    tradeUsd: 20,
  },
  // V2 pairs (0.3 %).
  {
    key: "v2:WETH/USDC",
    protocol: "v2",
    base: "WETH",
    quote: "USDC",
    fee: v2Fee,
    fullRangeUsd: 8_000_000,
    activity: 6,
    tradeUsd: 4000,
  },
  {
    key: "v2:WETH/USDT",
    protocol: "v2",
    base: "WETH",
    quote: "USDT",
    fee: v2Fee,
    fullRangeUsd: 3_000_000,
    activity: 3,
    tradeUsd: 3000,
  },
  {
    key: "v2:WETH/DAI",
    protocol: "v2",
    base: "WETH",
    quote: "DAI",
    fee: v2Fee,
    fullRangeUsd: 2_500_000,
    activity: 2,
    tradeUsd: 2500,
  },
  {
    key: "v2:WBTC/WETH",
    protocol: "v2",
    base: "WBTC",
    quote: "WETH",
    fee: v2Fee,
    fullRangeUsd: 2_000_000,
    activity: 1.5,
    tradeUsd: 4000,
  },
  {
    key: "v2:LINK/USDC",
    protocol: "v2",
    base: "LINK",
    quote: "USDC",
    fee: v2Fee,
    fullRangeUsd: 40_000,
    activity: 0.8,
    tradeUsd: 150,
  },
  {
    key: "v2:UNI/WETH",
    protocol: "v2",
    base: "UNI",
    quote: "WETH",
    fee: v2Fee,
    fullRangeUsd: 1_200_000,
    activity: 1.5,
    tradeUsd: 1500,
  },
  {
    key: "v2:MKR/WETH",
    protocol: "v2",
    base: "MKR",
    quote: "WETH",
    fee: v2Fee,
    fullRangeUsd: 1_600_000,
    activity: 1,
    tradeUsd: 2500,
  },
  {
    key: "v2:KIBL/WETH",
    protocol: "v2",
    base: "KIBL",
    quote: "WETH",
    fee: v2Fee,
    fullRangeUsd: 250_000,
    activity: 1.5,
    tradeUsd: 400,
  },
  {
    key: "v2:FAKEUSDC/WETH",
    protocol: "v2",
    base: "FAKEUSDC",
    quote: "WETH",
    fee: v2Fee,
    fullRangeUsd: 5_000,
    activity: 0.15,
    tradeUsd: 40,
  },
  {
    key: "v2:NODEC/WETH",
    protocol: "v2",
    base: "NODEC",
    quote: "WETH",
    fee: v2Fee,
    fullRangeUsd: 60_000,
    activity: 0.5,
    tradeUsd: 200,
  },
  // Uniswap V4 (one PoolManager holds them all), full-range liquidity.
  {
    key: "v4:ETH/USDC:3000",
    protocol: "v4",
    base: "WETH",
    quote: "USDC",
    native: true,
    fee: 3000,
    tickSpacing: 60,
    fullRangeUsd: 3_000_000,
    activity: 3,
    tradeUsd: 3000,
  },
  {
    key: "v4:FROG/ETH:10000",
    protocol: "v4",
    base: "FROG",
    quote: "WETH",
    native: true,
    fee: 10_000,
    tickSpacing: 200,
    fullRangeUsd: 400_000,
    activity: 1.5,
    tradeUsd: 500,
  },
  {
    key: "v4:LINK/WETH:3000:hook",
    protocol: "v4",
    base: "LINK",
    quote: "WETH",
    hooks: "swap",
    fee: 3000,
    tickSpacing: 60,
    fullRangeUsd: 1_500_000,
    activity: 1.5,
    tradeUsd: 2000,
  },
  {
    key: "v4:UNI/USDC:3000:delta-hook",
    protocol: "v4",
    base: "UNI",
    quote: "USDC",
    hooks: "return-delta",
    fee: 3000,
    tickSpacing: 60,
    fullRangeUsd: 300_000,
    activity: 1,
    tradeUsd: 1000,
  },
  // Algebra Integral: the fee is the pool's own (the factory's default, 0.05 %, without a plugin
  // that changes it), full-range liquidity. Last: its trades draw from their own random stream.
  {
    key: "algebra:LINK/USDT",
    protocol: "algebra",
    base: "LINK",
    quote: "USDT",
    fee: 500,
    tickSpacing: 60,
    fullRangeUsd: 1_500_000,
    // Low: each of its trades is a transaction added to the history the demo writes at its start.
    activity: 0.75,
    tradeUsd: 1500,
  },
];

/** Multi-hop routes traders take now and then (through the routers, one transaction). */
export type RouteSpec = {
  protocol: Protocol;
  /** Token path; V3 routes name the fee tier of each hop in `fees`. */
  path: readonly TokenKey[];
  fees?: readonly number[];
  activity: number;
  tradeUsd: number;
};

export const routeSpecs: readonly RouteSpec[] = [
  { protocol: "v2", path: ["USDC", "WETH", "KIBL"], activity: 0.8, tradeUsd: 600 },
  { protocol: "v3", path: ["USDC", "WETH", "KIBL"], fees: [500, 10_000], activity: 0.8, tradeUsd: 600 },
  { protocol: "v2", path: ["DAI", "WETH", "MKR"], activity: 0.3, tradeUsd: 2000 },
  { protocol: "v3", path: ["WBTC", "WETH", "USDC"], fees: [3000, 500], activity: 0.5, tradeUsd: 8000 },
  { protocol: "v3", path: ["LINK", "WETH", "USDT"], fees: [3000, 500], activity: 0.4, tradeUsd: 2000 },
];

/** V3 tick spacing of each fee tier (100 is enabled by the deployment, as on mainnet since 2021). */
export const tickSpacingByFee: Readonly<Record<number, number>> = { 100: 1, 500: 10, 3000: 60, 10000: 200 };

export function tokenSpec(key: TokenKey): TokenSpec {
  const spec = tokenSpecs.find((t) => t.key === key);
  if (spec === undefined) throw new Error(`unknown devnet token ${key}`);
  return spec;
}
