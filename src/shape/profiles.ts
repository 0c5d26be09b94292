import type { Hex, SwapEventLayout } from "../decode/types.js";
import { familyOf, type ProtocolFamily } from "../protocols/index.js";
import tables from "./profiles.json" with { type: "json" };

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

/**
 * A profile as data (profiles.json): its rhythm, DEXes, venues, reference tokens and deep pools
 * (real addresses).
 */
type ProfileTables = Omit<ShapeProfile, "name" | "dexes" | "venues" | "referenceTokens" | "bluechips"> & {
  name: string;
  dexes: {
    name: string;
    family: string;
    factory: string;
    router: string;
    fee?: number;
    swapEvent?: string;
    vault?: string;
  }[];
  /** [dex, fee, tick spacing or bin step]. */
  venues: number[][];
  /** [address, name, symbol, decimals, USD, role]. */
  referenceTokens: (string | number)[][];
  bluechips: number[][];
};

/**
 * A profile from its tables; each DEX's family from the registry.
 * In every profile the V2 and V3 venues come first and the other families' after them, so that
 * the profile restricted to V2 and V3 (`withFamilies`) is the chain it was before they came.
 */
function profileOf(tables: ProfileTables): ShapeProfile {
  return {
    ...tables,
    name: tables.name as ShapeProfile["name"],
    dexes: tables.dexes.map((d) => ({
      name: d.name,
      family: familyOf(d.family),
      factory: d.factory as Hex,
      ...(d.fee === undefined ? {} : { fee: d.fee }),
      swapEvent: (d.swapEvent ?? "uniswap") as SwapEventLayout,
      router: d.router as Hex,
      ...(d.vault === undefined ? {} : { vault: d.vault as Hex }),
    })),
    venues: tables.venues.map(([dex, fee, tickSpacing]) => ({
      dex: dex as number,
      fee: fee as number,
      tickSpacing: tickSpacing as number,
    })),
    referenceTokens: tables.referenceTokens.map(([address, name, symbol, decimals, usd, role]) => ({
      address: address as Hex,
      name: name as string,
      symbol: symbol as string,
      decimals: decimals as number,
      usd: usd as number,
      role: role as ShapeReferenceToken["role"],
    })),
    bluechips: tables.bluechips as [number, number, number][],
  };
}

const ethereum = profileOf(tables.ethereum);
const bnb = profileOf(tables.bnb);
const polygon = profileOf(tables.polygon);

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
  venues: [{ dex: 0, fee: 3000, tickSpacing: 0 }],
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
