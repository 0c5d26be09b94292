import type { Hex } from "../decode/types.js";

/** A trading venue of a profile: one factory, and for V3 one fee tier of it. */
export type ShapeVenue = {
  dex: number;
  /** Hundredths of a bip (V2: the DEX's swap fee). */
  fee: number;
  /** V3 only; 0 for V2. */
  tickSpacing: number;
};

export type ShapeDex = {
  name: string;
  protocol: "v2" | "v3";
  factory: Hex;
  /** V2 swap fee in hundredths of a bip. */
  fee?: number;
  /** V3 Swap layout: PancakeSwap V3 logs two more fields. */
  swapEvent: "uniswap" | "pancake";
  /** The contract that sends the swaps and liquidity changes (transaction `to`, event `sender`). */
  router: Hex;
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
 * real DEX factories and routers, and its real reference tokens (so that a configuration written
 * for mainnet points at the synthetic chain unchanged, RPC URL apart).
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
    {
      name: "Uniswap V2",
      protocol: "v2",
      factory: "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
      fee: 3000,
      swapEvent: "uniswap",
      router: "0x7a250d5630b4cf539739df2c5dacb4c659f2488d",
    },
    {
      name: "Uniswap V3",
      protocol: "v3",
      factory: "0x1f98431c8ad98523631ae4a59f267346ea31f984",
      swapEvent: "uniswap",
      router: "0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad",
    },
    {
      name: "SushiSwap",
      protocol: "v2",
      factory: "0xc0aee478e3658e2610c5f7a4a2e1777ce9e4f2ac",
      fee: 3000,
      swapEvent: "uniswap",
      router: "0xd9e1ce17f2641f24ae83637ab66a2cca9c378b9f",
    },
  ],
  venues: [
    { dex: 0, fee: 3000, tickSpacing: 0 },
    { dex: 1, fee: 3000, tickSpacing: 60 },
    { dex: 1, fee: 500, tickSpacing: 10 },
    { dex: 1, fee: 10000, tickSpacing: 200 },
    { dex: 2, fee: 3000, tickSpacing: 0 },
    { dex: 1, fee: 100, tickSpacing: 1 },
  ],
  referenceTokens: [
    {
      address: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
      name: "Wrapped Ether",
      symbol: "WETH",
      decimals: 18,
      usd: 3000,
      role: "wrappedNative",
    },
    {
      address: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
      name: "USD Coin",
      symbol: "USDC",
      decimals: 6,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
      name: "Tether USD",
      symbol: "USDT",
      decimals: 6,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x6b175474e89094c44da98b954eedeac495271d0f",
      name: "Dai Stablecoin",
      symbol: "DAI",
      decimals: 18,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599",
      name: "Wrapped BTC",
      symbol: "WBTC",
      decimals: 8,
      usd: 60_000,
      role: "wrappedBtc",
    },
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
  ],
  confirmations: 2,
  reorgWindow: 65,
  finalityDepth: 64,
  defaults: { pools: 400_000, tokens: 200_000, historyBlocks: 7_200 },
};

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
    {
      name: "PancakeSwap V2",
      protocol: "v2",
      factory: "0xca143ce32fe78f1f7019d7d551a6402fc5350c73",
      fee: 2500,
      swapEvent: "uniswap",
      router: "0x10ed43c718714eb63d5aa57b78b54704e256024e",
    },
    {
      name: "PancakeSwap V3",
      protocol: "v3",
      factory: "0x0bfbcf9fa4f9c56b0f40a671ad40e0805a091865",
      swapEvent: "pancake",
      router: "0x13f4ea83d0bd40e75c8222255bc855a974568dd4",
    },
  ],
  venues: [
    { dex: 0, fee: 2500, tickSpacing: 0 },
    { dex: 1, fee: 2500, tickSpacing: 50 },
    { dex: 1, fee: 500, tickSpacing: 10 },
    { dex: 1, fee: 10000, tickSpacing: 200 },
    { dex: 1, fee: 100, tickSpacing: 1 },
  ],
  referenceTokens: [
    {
      address: "0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c",
      name: "Wrapped BNB",
      symbol: "WBNB",
      decimals: 18,
      usd: 600,
      role: "wrappedNative",
    },
    {
      address: "0x55d398326f99059ff775485246999027b3197955",
      name: "Tether USD",
      symbol: "USDT",
      decimals: 18,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d",
      name: "USD Coin",
      symbol: "USDC",
      decimals: 18,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0xe9e7cea3dedca5984780bafc599bd69add087d56",
      name: "BUSD Token",
      symbol: "BUSD",
      decimals: 18,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x7130d2a12b9bcbfae4f2634d864a1ee1ce3ead9c",
      name: "BTCB Token",
      symbol: "BTCB",
      decimals: 18,
      usd: 60_000,
      role: "wrappedBtc",
    },
    {
      address: "0x2170ed0880ac9a755fd29b2688956bd959f933f8",
      name: "Ethereum Token",
      symbol: "ETH",
      decimals: 18,
      usd: 3000,
      role: "other",
    },
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
    {
      name: "QuickSwap",
      protocol: "v2",
      factory: "0x5757371414417b8c6caad45baef941abc7d3ab32",
      fee: 3000,
      swapEvent: "uniswap",
      router: "0xa5e0829caced8ffdd4de3c43696c57f7d7a678ff",
    },
    {
      name: "Uniswap V3",
      protocol: "v3",
      factory: "0x1f98431c8ad98523631ae4a59f267346ea31f984",
      swapEvent: "uniswap",
      router: "0xec7be89e9d109e7e3fec59c222cf297125fefda2",
    },
  ],
  venues: [
    { dex: 0, fee: 3000, tickSpacing: 0 },
    { dex: 1, fee: 3000, tickSpacing: 60 },
    { dex: 1, fee: 500, tickSpacing: 10 },
    { dex: 1, fee: 10000, tickSpacing: 200 },
    { dex: 1, fee: 100, tickSpacing: 1 },
  ],
  referenceTokens: [
    {
      address: "0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270",
      name: "Wrapped Polygon Ecosystem Token",
      symbol: "WPOL",
      decimals: 18,
      usd: 0.5,
      role: "wrappedNative",
    },
    {
      address: "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359",
      name: "USD Coin",
      symbol: "USDC",
      decimals: 6,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x2791bca1f2de4661ed88a30c99a7a9449aa84174",
      name: "USD Coin (PoS)",
      symbol: "USDC.e",
      decimals: 6,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0xc2132d05d31c914a87c6611c10748aeb04b58e8f",
      name: "(PoS) Tether USD",
      symbol: "USDT",
      decimals: 6,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x8f3cf7ad23cd3cadbd9735aff958023239c6a063",
      name: "(PoS) Dai Stablecoin",
      symbol: "DAI",
      decimals: 18,
      usd: 1,
      role: "stablecoin",
    },
    {
      address: "0x1bfd67037b42cf73acf2047067bd4f2c47d9bfd6",
      name: "(PoS) Wrapped BTC",
      symbol: "WBTC",
      decimals: 8,
      usd: 60_000,
      role: "wrappedBtc",
    },
    {
      address: "0x7ceb23fd6bc0add59e62ac25578270cff1b9f619",
      name: "Wrapped Ether",
      symbol: "WETH",
      decimals: 18,
      usd: 3000,
      role: "other",
    },
  ],
  bluechips: [
    [0, 1, 2],
    [6, 1, 2],
    [0, 3, 0],
    [5, 6, 1],
    [1, 3, 4],
    [0, 6, 1],
    [2, 1, 4],
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
const uniswapV2: ShapeProfile = {
  name: "uniswap-v2",
  chainId: 1,
  chainName: "Ethereum, Uniswap V2",
  blockTimeMs: 12_000,
  swapsPerBlock: 10,
  activeBlockShare: 0.05,
  liquidityPerSwap: 0.04,
  newPoolsPerBlock: 0.002,
  gasLimit: 36_000_000,
  dexes: [ethereum.dexes[0] as ShapeDex],
  venues: [{ dex: 0, fee: 3000, tickSpacing: 0 }],
  referenceTokens: ethereum.referenceTokens,
  // USDC/WETH, WETH/USDT, DAI/WETH, WBTC/WETH, USDC/USDT: every pool of one factory is another pair.
  bluechips: [
    [1, 0, 0],
    [0, 2, 0],
    [3, 0, 0],
    [4, 0, 0],
    [1, 2, 0],
  ],
  confirmations: 2,
  reorgWindow: 65,
  finalityDepth: 64,
  // Fewer pools than tokens: with one venue, a token pairs once with its base (no pair twice).
  // Blocks 0 and 1 (genesis, the creation era) and 41,798 trading blocks: 41,800 blocks.
  defaults: { pools: 400, tokens: 1000, historyBlocks: 41_798 },
};

export const shapeProfiles = { ethereum, bnb, polygon, "uniswap-v2": uniswapV2 } as const;
export type ShapeProfileName = keyof typeof shapeProfiles;

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
      protocol: d.protocol,
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
