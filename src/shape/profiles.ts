import type { Hex, SwapEventLayout } from "../decode/types.js";
import {
  algebra,
  type ProtocolFamily,
  pancakeswapInfinityBin,
  pancakeswapInfinityCl,
  uniswapV2,
  uniswapV3,
  uniswapV4,
} from "../protocols/index.js";

/** A trading venue of a profile: one factory or manager, and one fee tier (and spacing) of it. */
export type ShapeVenue = {
  dex: number;
  /** Hundredths of a bip (V2: the DEX's swap fee). */
  fee: number;
  /** Tick spacing of concentrated-liquidity pools, bin step of Bin pools; 0 for V2. */
  tickSpacing: number;
};

export type ShapeDex = {
  name: string;
  family: ProtocolFamily;
  /** The factory, or the manager that holds the pools. */
  factory: Hex;
  /** V2 swap fee in hundredths of a bip. */
  fee?: number;
  /** Swap layout of the family's variant (PancakeSwap V3 logs two more fields). */
  swapEvent: SwapEventLayout;
  /** The contract that sends the swaps and liquidity changes (transaction `to`, event `sender`). */
  router: Hex;
  /** The vault that holds a manager's tokens, when it is not the manager (PancakeSwap Infinity). */
  vault?: Hex;
};

export type ShapeReferenceToken = {
  address: Hex;
  name: string;
  symbol: string;
  decimals: number;
  usd: number;
  role: "stablecoin" | "wrappedNative" | "wrappedBtc" | "other";
};

/**
 * The rhythm and venues of a real chain: block time, swaps per block, new pools per block, its
 * real DEX factories, managers and routers, and its real reference tokens (so that a
 * configuration written for mainnet points at the synthetic chain unchanged, RPC URL apart).
 */
export type ShapeProfile = {
  name: "ethereum" | "bnb" | "polygon" | "uniswap-v2";
  chainId: number;
  chainName: string;
  blockTimeMs: number;
  swapsPerBlock: number;
  /**
   * Share of the trading blocks that hold trades at all (default: every one); `swapsPerBlock` is
   * then the mean of those blocks. The others hold only the pool creations due in them, if any.
   */
  activeBlockShare?: number;
  /** Liquidity changes (Mint, Burn + Collect) per swap. */
  liquidityPerSwap: number;
  newPoolsPerBlock: number;
  gasLimit: number;
  dexes: ShapeDex[];
  venues: ShapeVenue[];
  /** Reference tokens first: they are token indexes 0…n−1. */
  referenceTokens: ShapeReferenceToken[];
  /** Hand-picked deep pools (reference index, reference index, venue), the first pool indexes. */
  bluechips: [number, number, number][];
  /** Confirmations and reorg window a config for this chain uses (as config/mainnet.example.json). */
  confirmations: number;
  reorgWindow: number;
  /** Depth of "finalized" below the head. */
  finalityDepth: number;
  defaults: { pools: number; tokens: number; historyBlocks: number };
};

const dex = (
  name: string,
  family: ProtocolFamily,
  factory: string,
  router: string,
  more: { fee?: number; swapEvent?: SwapEventLayout; vault?: string } = {},
): ShapeDex => ({
  name,
  family,
  factory: factory as Hex,
  ...(more.fee === undefined ? {} : { fee: more.fee }),
  swapEvent: more.swapEvent ?? "uniswap",
  router: router as Hex,
  ...(more.vault === undefined ? {} : { vault: more.vault as Hex }),
});
/** Venues as [dex, fee, tick spacing or bin step]. */
const venues = (...rows: [number, number, number][]): ShapeVenue[] =>
  rows.map(([d, fee, tickSpacing]) => ({ dex: d, fee, tickSpacing }));
const token = (
  address: string,
  name: string,
  symbol: string,
  decimals: number,
  usd: number,
  role: ShapeReferenceToken["role"] = "stablecoin",
): ShapeReferenceToken => ({ address: address as Hex, name, symbol, decimals, usd, role });

// In every profile, the V2 and V3 venues come first and the other families' after them, so that
// the profile restricted to V2 and V3 (`withFamilies`) is the chain it was before they came.
const ethereum: ShapeProfile = {
  name: "ethereum",
  chainId: 1,
  chainName: "Ethereum",
  blockTimeMs: 12_000,
  swapsPerBlock: 150,
  liquidityPerSwap: 0.04,
  newPoolsPerBlock: 0.05,
  gasLimit: 36_000_000,
  dexes: [
    dex(
      "Uniswap V2",
      uniswapV2,
      "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
      "0x7a250d5630b4cf539739df2c5dacb4c659f2488d",
      {
        fee: 3000,
      },
    ),
    dex(
      "Uniswap V3",
      uniswapV3,
      "0x1f98431c8ad98523631ae4a59f267346ea31f984",
      "0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad",
    ),
    dex(
      "SushiSwap",
      uniswapV2,
      "0xc0aee478e3658e2610c5f7a4a2e1777ce9e4f2ac",
      "0xd9e1ce17f2641f24ae83637ab66a2cca9c378b9f",
      {
        fee: 3000,
      },
    ),
    dex(
      "Uniswap V4",
      uniswapV4,
      "0x000000000004444c5dc75cb358380d2e3de08a90",
      "0x66a9893cc07d91d95644aedd05d03f95e1dba8af",
    ),
  ],
  venues: venues(
    [0, 3000, 0],
    [1, 3000, 60],
    [1, 500, 10],
    [1, 10000, 200],
    [2, 3000, 0],
    [1, 100, 1],
    [3, 3000, 60],
    [3, 500, 10],
  ),
  referenceTokens: [
    token("0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "Wrapped Ether", "WETH", 18, 3000, "wrappedNative"),
    token("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "USD Coin", "USDC", 6, 1),
    token("0xdac17f958d2ee523a2206206994597c13d831ec7", "Tether USD", "USDT", 6, 1),
    token("0x6b175474e89094c44da98b954eedeac495271d0f", "Dai Stablecoin", "DAI", 18, 1),
    token("0x2260fac5e5542a773aa44fbcfedf7c193bc2c599", "Wrapped BTC", "WBTC", 8, 60_000, "wrappedBtc"),
  ],
  bluechips: [
    [1, 0, 2],
    [0, 2, 2],
    [1, 0, 0],
    [4, 0, 1],
    [3, 1, 5],
    [1, 2, 5],
    [0, 2, 0],
    [3, 0, 0],
    [4, 0, 4],
    [1, 0, 4],
    [1, 0, 7],
  ],
  confirmations: 2,
  reorgWindow: 65,
  finalityDepth: 64,
  defaults: { pools: 400_000, tokens: 200_000, historyBlocks: 7_200 },
};

const PANCAKE_INFINITY_VAULT = "0x238a358808379702088667322f80ac48bad5e6c4";
const PANCAKE_INFINITY_ROUTER = "0xd9c500dff816a1da21a48a732d3498bf09dc9aeb";
const bnb: ShapeProfile = {
  name: "bnb",
  chainId: 56,
  chainName: "BNB Chain",
  blockTimeMs: 750,
  swapsPerBlock: 100,
  liquidityPerSwap: 0.04,
  newPoolsPerBlock: 0.02,
  gasLimit: 140_000_000,
  dexes: [
    dex(
      "PancakeSwap V2",
      uniswapV2,
      "0xca143ce32fe78f1f7019d7d551a6402fc5350c73",
      "0x10ed43c718714eb63d5aa57b78b54704e256024e",
      {
        fee: 2500,
      },
    ),
    dex(
      "PancakeSwap V3",
      uniswapV3,
      "0x0bfbcf9fa4f9c56b0f40a671ad40e0805a091865",
      "0x13f4ea83d0bd40e75c8222255bc855a974568dd4",
      {
        swapEvent: "pancake",
      },
    ),
    dex(
      "PancakeSwap Infinity CL",
      pancakeswapInfinityCl,
      "0xa0ffb9c1ce1fe56963b0321b32e7a0302114058b",
      PANCAKE_INFINITY_ROUTER,
      {
        vault: PANCAKE_INFINITY_VAULT,
      },
    ),
    dex(
      "PancakeSwap Infinity Bin",
      pancakeswapInfinityBin,
      "0xc697d2898e0d09264376196696c51d7abbbaa4a9",
      PANCAKE_INFINITY_ROUTER,
      {
        vault: PANCAKE_INFINITY_VAULT,
      },
    ),
    dex(
      "Uniswap V4",
      uniswapV4,
      "0x28e2ea090877bf75740558f6bfb36a5ffee9e9df",
      "0x1906c1d672b88cd1b9ac7593301ca990f94eae07",
    ),
    dex(
      "THENA Fusion",
      algebra,
      "0x306f06c147f064a010530292a1eb6737c3e378e4",
      "0x327dd3208f0bcf590a66110acb6e5e6941a4efa0",
    ),
  ],
  venues: venues(
    [0, 2500, 0],
    [1, 2500, 50],
    [1, 500, 10],
    [1, 10000, 200],
    [1, 100, 1],
    [2, 500, 10],
    [2, 2500, 50],
    [3, 1000, 10],
    [3, 2500, 25],
    [4, 3000, 60],
    [5, 500, 60],
  ),
  referenceTokens: [
    token("0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c", "Wrapped BNB", "WBNB", 18, 600, "wrappedNative"),
    token("0x55d398326f99059ff775485246999027b3197955", "Tether USD", "USDT", 18, 1),
    token("0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d", "USD Coin", "USDC", 18, 1),
    token("0xe9e7cea3dedca5984780bafc599bd69add087d56", "BUSD Token", "BUSD", 18, 1),
    token("0x7130d2a12b9bcbfae4f2634d864a1ee1ce3ead9c", "BTCB Token", "BTCB", 18, 60_000, "wrappedBtc"),
    token("0x2170ed0880ac9a755fd29b2688956bd959f933f8", "Ethereum Token", "ETH", 18, 3000, "other"),
  ],
  bluechips: [
    [0, 1, 0],
    [0, 1, 2],
    [1, 2, 4],
    [4, 0, 0],
    [5, 0, 1],
    [0, 3, 0],
    [1, 3, 4],
    [0, 2, 1],
    [0, 1, 5],
    [0, 1, 8],
    [0, 1, 9],
    [0, 1, 10],
  ],
  confirmations: 3,
  reorgWindow: 30,
  finalityDepth: 15,
  defaults: { pools: 500_000, tokens: 250_000, historyBlocks: 20_000 },
};

const polygon: ShapeProfile = {
  name: "polygon",
  chainId: 137,
  chainName: "Polygon",
  blockTimeMs: 2_000,
  swapsPerBlock: 60,
  liquidityPerSwap: 0.04,
  newPoolsPerBlock: 0.02,
  gasLimit: 45_000_000,
  dexes: [
    dex(
      "QuickSwap",
      uniswapV2,
      "0x5757371414417b8c6caad45baef941abc7d3ab32",
      "0xa5e0829caced8ffdd4de3c43696c57f7d7a678ff",
      {
        fee: 3000,
      },
    ),
    dex(
      "Uniswap V3",
      uniswapV3,
      "0x1f98431c8ad98523631ae4a59f267346ea31f984",
      "0xec7be89e9d109e7e3fec59c222cf297125fefda2",
    ),
    dex(
      "QuickSwap V3",
      algebra,
      "0x411b0facc3489691f28ad58c47006af5e3ab3a28",
      "0xf5b509bb0909a69b1c207e495f687a596c168e12",
    ),
    dex(
      "Uniswap V4",
      uniswapV4,
      "0x67366782805870060151383f4bbff9dab53e5cd6",
      "0x1095692a6237d83c6a72f3f5efedb9a670c49223",
    ),
  ],
  venues: venues(
    [0, 3000, 0],
    [1, 3000, 60],
    [1, 500, 10],
    [1, 10000, 200],
    [1, 100, 1],
    [2, 500, 60],
    [3, 3000, 60],
    [3, 500, 10],
  ),
  referenceTokens: [
    token(
      "0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270",
      "Wrapped Polygon Ecosystem Token",
      "WPOL",
      18,
      0.5,
      "wrappedNative",
    ),
    token("0x3c499c542cef5e3811e1192ce70d8cc03d5c3359", "USD Coin", "USDC", 6, 1),
    token("0x2791bca1f2de4661ed88a30c99a7a9449aa84174", "USD Coin (PoS)", "USDC.e", 6, 1),
    token("0xc2132d05d31c914a87c6611c10748aeb04b58e8f", "(PoS) Tether USD", "USDT", 6, 1),
    token("0x8f3cf7ad23cd3cadbd9735aff958023239c6a063", "(PoS) Dai Stablecoin", "DAI", 18, 1),
    token("0x1bfd67037b42cf73acf2047067bd4f2c47d9bfd6", "(PoS) Wrapped BTC", "WBTC", 8, 60_000, "wrappedBtc"),
    token("0x7ceb23fd6bc0add59e62ac25578270cff1b9f619", "Wrapped Ether", "WETH", 18, 3000, "other"),
  ],
  bluechips: [
    [0, 1, 2],
    [6, 1, 2],
    [0, 3, 0],
    [5, 6, 1],
    [1, 3, 4],
    [0, 6, 1],
    [2, 1, 4],
    [0, 1, 5],
    [6, 1, 6],
  ],
  confirmations: 5,
  reorgWindow: 200,
  finalityDepth: 128,
  defaults: { pools: 200_000, tokens: 100_000, historyBlocks: 20_000 },
};

/**
 * The peer benchmark's chain (BENCHMARKS.md, "Ingestion: JSON-RPC calls per swap"): Ethereum's
 * Uniswap V2 alone, 41,800 blocks of which about one in twenty trades, 10 swaps each on average
 * (≈ 20,000 swaps), most blocks empty, as an indexer of a few Uniswap V2 pairs sees mainnet.
 */
const uniswapV2Only: ShapeProfile = {
  ...ethereum,
  name: "uniswap-v2",
  chainName: "Ethereum, Uniswap V2",
  swapsPerBlock: 10,
  activeBlockShare: 0.05,
  newPoolsPerBlock: 0.002,
  dexes: [ethereum.dexes[0] as ShapeDex],
  venues: venues([0, 3000, 0]),
  // USDC/WETH, WETH/USDT, DAI/WETH, WBTC/WETH, USDC/USDT: every pool of one factory is another pair.
  bluechips: [
    [1, 0, 0],
    [0, 2, 0],
    [3, 0, 0],
    [4, 0, 0],
    [1, 2, 0],
  ],
  // Fewer pools than tokens: with one venue, a token pairs once with its base (no pair twice).
  // Blocks 0 and 1 (genesis, the creation era) and 41,798 trading blocks: 41,800 blocks.
  defaults: { pools: 400, tokens: 1000, historyBlocks: 41_798 },
};

export const shapeProfiles = { ethereum, bnb, polygon, "uniswap-v2": uniswapV2Only } as const;
export type ShapeProfileName = keyof typeof shapeProfiles;

/**
 * The profile with only the DEXes of these families (by name, as `pools.protocol`): its venues
 * and deep pools on them, renumbered. Restricted to V2 and V3, a profile is the chain it was
 * before the other families came (their venues and deep pools come after).
 */
export function withFamilies(profile: ShapeProfile, families: readonly string[]): ShapeProfile {
  const kept = profile.dexes.flatMap((d, i) => (families.includes(d.family.name) ? [i] : []));
  if (kept.length === 0) throw new Error(`no DEX of the families ${families.join(", ")} in ${profile.name}`);
  const venueIndex = new Map<number, number>();
  const keptVenues: ShapeVenue[] = [];
  profile.venues.forEach((v, i) => {
    if (!kept.includes(v.dex)) return;
    venueIndex.set(i, keptVenues.length);
    keptVenues.push({ ...v, dex: kept.indexOf(v.dex) });
  });
  return {
    ...profile,
    dexes: kept.map((i) => profile.dexes[i] as ShapeDex),
    venues: keptVenues,
    bluechips: profile.bluechips.flatMap(([a, b, v]) => {
      const at = venueIndex.get(v);
      return at === undefined ? [] : [[a, b, at] as [number, number, number]];
    }),
  };
}

/** The indexer's configuration of a profile's chain, pointing at a synthetic node's URL. */
export function shapeChainConfig(profile: ShapeProfile, rpcUrl: string) {
  const byRole = (role: ShapeReferenceToken["role"]) =>
    profile.referenceTokens.filter((t) => t.role === role).map((t) => t.address);
  return {
    id: profile.chainId,
    name: `${profile.chainName} (synthetic)`,
    rpc: [rpcUrl],
    confirmations: profile.confirmations,
    startBlock: 0,
    reorgWindow: profile.reorgWindow,
    maxBlockRange: 2000,
    dexes: profile.dexes.map((d) => ({
      name: d.name,
      protocol: d.family.name,
      factory: d.factory,
      ...(d.fee === undefined ? {} : { fee: d.fee }),
      swapEvent: d.swapEvent,
    })),
    referenceTokens: {
      stablecoins: byRole("stablecoin"),
      wrappedNative: byRole("wrappedNative")[0] as Hex,
      wrappedBtc: byRole("wrappedBtc"),
      others: byRole("other"),
    },
  };
}
