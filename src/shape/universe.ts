import type { Hex } from "../decode/types.js";
import type { ProtocolFamily, ProtocolName } from "../protocols/index.js";
import { type ShapePool, type ShapePoolState, SWAP_HOOK_FLAGS } from "../protocols/shape.js";
import { hash32, hex8, Kind, unit } from "./hash.js";
import type { ShapeProfile, ShapeReferenceToken } from "./profiles.js";

/**
 * The static world of a synthetic chain: tokens and pools, each a pure function of (seed,
 * profile, index), never stored. Addresses encode their index (see `addressCodec`), so an
 * address is turned back into its token or pool without any table, and a million pools cost no
 * memory until they trade.
 */

/** What a token's contract answers; `revert` = the call reverts. */
export type TokenMeta = {
  index: number;
  address: Hex;
  name: { kind: "string" | "bytes32" | "revert"; value: string };
  symbol: { kind: "string" | "bytes32" | "revert"; value: string };
  /** What decimals() answers, or null when it reverts. */
  decimals: number | null;
  /** The decimals the token's amounts really have (used for sizes even when decimals() reverts). */
  unitDecimals: number;
  totalSupply: bigint;
  usd: number;
};

/** A pool's changing state (see `ShapePoolState`). */
export type PoolDyn = ShapePoolState;

export type PoolInfo = {
  index: number;
  /** The pool's contract address, or its 32-byte PoolId inside a manager. */
  address: Hex;
  /** Its family's name (`pools.protocol`). */
  protocol: ProtocolName;
  family: ProtocolFamily;
  dex: number;
  venue: number;
  fee: number;
  /** Tick spacing (concentrated liquidity) or bin step (Bin pools); 0 for a V2 pair. */
  tickSpacing: number;
  token0: number;
  token1: number;
  createdBlock: number;
  /** The state after the creation transaction. */
  initial: PoolDyn;
  tickLower: number;
  tickUpper: number;
  /** What the family's generator knows of the pool. */
  shape: ShapePool;
};

export type UniverseOptions = {
  seed: number;
  pools: number;
  tokens: number;
  /** Pools created per block in the creation era (blocks 1…G). */
  creationsPerBlock: number;
};

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as Hex;

/** Bases of the combination table: mostly the wrapped native coin, then stablecoins and BTC. */
const COMBOS = 31; // prime, so that a token's pools cycle through every combination (see poolInfo)

/**
 * Address of the `index`-th thing of `kind`: four hash words, then the index XOR a hash of the
 * first word. Looks random; decodes back with `decode` and a check of the hash words.
 */
function addressCodec(seed: number) {
  const encode = (kind: number, index: number): Hex => {
    const w0 = hash32(seed, kind, index, 0);
    const w4 = (index ^ hash32(seed, Kind.tag, kind, w0)) >>> 0;
    return `0x${hex8(w0)}${hex8(hash32(seed, kind, index, 1))}${hex8(hash32(seed, kind, index, 2))}${hex8(
      hash32(seed, kind, index, 3),
    )}${hex8(w4)}` as Hex;
  };
  const decode = (kind: number, address: string): number | null => {
    if (address.length !== 42) return null;
    const a = address.toLowerCase();
    const w0 = Number.parseInt(a.slice(2, 10), 16);
    const w4 = Number.parseInt(a.slice(34, 42), 16);
    if (Number.isNaN(w0) || Number.isNaN(w4)) return null;
    const index = (w4 ^ hash32(seed, Kind.tag, kind, w0)) >>> 0;
    return encode(kind, index) === a ? index : null;
  };
  /** Addresses are hashed once and kept (bounded: cleared when full); hex building is the hot spot. */
  const cached = (kind: number) => {
    const cache = new Map<number, Hex>();
    return (i: number): Hex => {
      let a = cache.get(i);
      if (a === undefined) {
        a = encode(kind, i);
        if (cache.size >= 300_000) cache.clear();
        cache.set(i, a);
      }
      return a;
    };
  };
  return { encode, decode, cached };
}

const DECIMALS: readonly [number, number][] = [
  [0.75, 18],
  [0.83, 6],
  [0.89, 9],
  [0.94, 8],
  [0.96, 0],
  [0.98, 12],
  [0.99, 2],
  [1, 24],
];
const NAMES = [
  "Pepe",
  "Shiba",
  "Moon",
  "Safe",
  "Doge",
  "Floki",
  "Inu",
  "Rocket",
  "Based",
  "Turbo",
  "Frog",
  "Cat",
];
const UNICODE = ["🦄 Unicorn", "ドージコイン", "Ξther Clone", "Ünïcödé Tøken", "币安狗", "🚀🚀🚀"];

/** A non-reference token's contract, with the real world's oddities, each on a few per cent of the tokens. */
function oddTokenMeta(seed: number, i: number, address: Hex, unitDecimals: number, usd: number): TokenMeta {
  const word = NAMES[hash32(seed, Kind.tokenMeta, i, 3) % NAMES.length] as string;
  const word2 = NAMES[hash32(seed, Kind.tokenMeta, i, 4) % NAMES.length] as string;
  const symbol = `${word.slice(0, 3)}${word2.slice(0, 2)}${i % 1000}`.toUpperCase();
  let name: TokenMeta["name"] = { kind: "string", value: `${word} ${word2} ${i}` };
  let sym: TokenMeta["symbol"] = { kind: "string", value: symbol };
  let decimals: number | null = unitDecimals;
  let totalSupply =
    BigInt(Math.floor(1e6 + unit(seed, Kind.tokenMeta, i, 5) * 1e12)) * 10n ** BigInt(unitDecimals);
  const odd = unit(seed, Kind.tokenMeta, i, 6);
  if (odd < 0.02) {
    name = { kind: "bytes32", value: `${word} ${word2}` };
    sym = { kind: "bytes32", value: symbol };
  } else if (odd < 0.03) {
    decimals = null;
  } else if (odd < 0.04) {
    name = { kind: "string", value: "" };
  } else if (odd < 0.06) {
    name = { kind: "string", value: UNICODE[i % UNICODE.length] as string };
    sym = { kind: "string", value: i % 2 === 0 ? "🦄" : "ドージ" };
  } else if (odd < 0.07) {
    totalSupply = 0n;
  } else if (odd < 0.08) {
    // A 77-digit supply (the "infinite" mints of scam tokens); still below 2^256.
    totalSupply = 10n ** 76n + BigInt(hash32(seed, Kind.tokenMeta, i, 7));
  } else if (odd < 0.085) {
    name = { kind: "revert", value: "" };
    sym = { kind: "revert", value: "" };
  }
  return { index: i, address, name, symbol: sym, decimals, unitDecimals, totalSupply, usd };
}

/** 60 % wrapped native, 30 % stablecoins, 10 % BTC: the real world's pairing. */
function combinationBases(refs: readonly ShapeReferenceToken[]): number[] {
  const wrapped = refs.findIndex((t) => t.role === "wrappedNative");
  const stables = refs.map((t, i) => (t.role === "stablecoin" ? i : -1)).filter((i) => i >= 0);
  const btc = refs.findIndex((t) => t.role === "wrappedBtc");
  return Array.from({ length: COMBOS }, (_, k) => {
    const u = k / COMBOS;
    return u < 0.6 || btc < 0 ? wrapped : u < 0.9 ? (stables[k % stables.length] as number) : btc;
  });
}

export type Universe = ReturnType<typeof createUniverse>;

export function createUniverse(profile: ShapeProfile, options: UniverseOptions) {
  const { seed } = options;
  const refs = profile.referenceTokens;
  const R = refs.length;
  const tokenCount = Math.max(options.tokens, R + 1);
  const others = tokenCount - R;
  const F = profile.bluechips.length;
  const initialPools = Math.max(options.pools, F);
  const creationEraBlocks = Math.ceil(initialPools / options.creationsPerBlock);
  const refByAddress = new Map(refs.map((t, i) => [t.address, i]));
  const bases = combinationBases(refs);
  const codec = addressCodec(seed);

  const tokenAddressOf = codec.cached(Kind.token);
  const traderAddress = codec.cached(Kind.trader);
  const tokenAddress = (i: number): Hex => (i < R ? (refs[i]?.address as Hex) : tokenAddressOf(i));
  const tokenIndex = (address: string): number | null => {
    const a = address.toLowerCase();
    const ref = refByAddress.get(a as Hex);
    if (ref !== undefined) return ref;
    const i = codec.decode(Kind.token, a);
    return i !== null && i >= R && i < tokenCount ? i : null;
  };

  const tokenUsd = (i: number): number =>
    i < R ? (refs[i]?.usd as number) : 10 ** (-6 + 9 * unit(seed, Kind.tokenMeta, i, 1));
  const tokenUnitDecimals = (i: number): number => {
    if (i < R) return refs[i]?.decimals as number;
    const u = unit(seed, Kind.tokenMeta, i, 2);
    return (DECIMALS.find(([below]) => u < below) ?? [1, 24])[1];
  };
  const tokenMeta = (i: number): TokenMeta => {
    const address = tokenAddress(i);
    const unitDecimals = tokenUnitDecimals(i);
    const usd = tokenUsd(i);
    const ref = refs[i];
    if (!ref) return oddTokenMeta(seed, i, address, unitDecimals, usd);
    return {
      index: i,
      address,
      name: { kind: "string", value: ref.name },
      symbol: { kind: "string", value: ref.symbol },
      decimals: ref.decimals,
      unitDecimals,
      totalSupply: BigInt(Math.round(1e9 / Math.max(usd, 1e-3))) * 10n ** BigInt(unitDecimals),
      usd,
    };
  };

  /** Pools existing at the end of block n (creation era: creationsPerBlock a block; then newPoolsPerBlock). */
  const poolsAt = (n: number): number => {
    if (n <= 0) return 0;
    if (n <= creationEraBlocks) return Math.min(n * options.creationsPerBlock, initialPools);
    return initialPools + Math.floor((n - creationEraBlocks) * profile.newPoolsPerBlock + 1e-9);
  };
  const poolCreatedBlock = (i: number): number => {
    if (i < initialPools) return 1 + Math.floor(i / options.creationsPerBlock);
    let n = creationEraBlocks + Math.max(1, Math.ceil((i - initialPools + 1) / profile.newPoolsPerBlock) - 1);
    while (poolsAt(n) <= i) n++;
    while (n > creationEraBlocks + 1 && poolsAt(n - 1) > i) n--;
    return n;
  };
  const poolAddress = codec.cached(Kind.pool);
  const poolIndex = (address: string): number | null => codec.decode(Kind.pool, address);

  /**
   * Pool i: the hand-picked deep pools first; then j = i − F pairs the non-reference token
   * R + (j mod others) with a (base, venue) combination that advances with every wrap, so that no
   * factory ever has the same pair twice (up to COMBOS × others pools) and the busiest (lowest)
   * pools cover every venue.
   */
  const pairOf = (i: number): [number, number, number] => {
    if (i < F) return profile.bluechips[i] as [number, number, number];
    const j = i - F;
    const combo = (Math.floor(j / others) + j) % COMBOS;
    const venue = (combo + Math.floor(combo / profile.venues.length)) % profile.venues.length;
    return [R + (j % others), bases[combo] as number, venue];
  };
  /** What the pool is meant to hold: depth falls as a power of its rank, from 300 M USD to a few thousand. */
  const reservesOf = (i: number, t0: number, t1: number): [bigint, bigint] => {
    const depthUsd =
      i < F
        ? 3e8 / (1 + i)
        : Math.max(2_000, (2e7 / (1 + (i - F)) ** 0.6) * 10 ** (unit(seed, Kind.poolMeta, i, 1) - 0.5));
    const reserve = (t: number) => {
      const raw = (depthUsd / 2 / tokenUsd(t)) * 10 ** tokenUnitDecimals(t);
      const big = BigInt(Math.floor(Math.min(raw, 2 ** 100)));
      // Enough units that swaps of a fraction of a per cent still move whole units.
      return big < 1_000_000_000n ? 1_000_000_000n + BigInt(hash32(seed, Kind.poolMeta, i, t) % 1000) : big;
    };
    return [reserve(t0), reserve(t1)];
  };

  /**
   * A token's pools of its first wrap are distinct pairs; later ones may pair it again with the
   * same base on the same venue (several combinations share a base): those get a hook of their
   * own, so that no two pools inside a manager share a key (a PoolId).
   */
  const hookAddress = codec.cached(Kind.hook);
  const hooksOf = (i: number): Hex =>
    i < F + others
      ? ZERO_ADDRESS
      : (`${hookAddress(i).slice(0, -4)}${SWAP_HOOK_FLAGS.toString(16).padStart(4, "0")}` as Hex);

  const poolCache = new Map<number, PoolInfo>();
  const poolInfo = (i: number): PoolInfo => {
    const cached = poolCache.get(i);
    if (cached) return cached;
    const [a, b, venue] = pairOf(i);
    const v = profile.venues[venue] as ShapeProfile["venues"][number];
    const dex = profile.dexes[v.dex] as ShapeProfile["dexes"][number];
    const { family } = dex;
    // token0 < token1 by address, as the factories sort them.
    const [t0, t1] = tokenAddress(a) < tokenAddress(b) ? [a, b] : [b, a];
    const [r0, r1] = reservesOf(i, t0, t1);
    const { state, tickLower, tickUpper } = family.shape.initial(r0, r1, v.tickSpacing);
    const [token0, token1] = [tokenAddress(t0), tokenAddress(t1)];
    const key = {
      token0,
      token1,
      fee: v.fee,
      spacing: v.tickSpacing,
      manager: dex.factory,
      hooks: hooksOf(i),
    };
    const address = family.shape.poolId?.(key) ?? poolAddress(i);
    const info: PoolInfo = {
      index: i,
      address,
      protocol: family.name,
      family,
      dex: v.dex,
      venue,
      fee: v.fee,
      tickSpacing: v.tickSpacing,
      token0: t0,
      token1: t1,
      createdBlock: poolCreatedBlock(i),
      initial: state,
      tickLower,
      tickUpper,
      shape: {
        index: i,
        id: address,
        token0,
        token1,
        fee: v.fee,
        spacing: v.tickSpacing,
        tickLower,
        tickUpper,
        factory: dex.factory,
        hooks: key.hooks,
        holder: family.poolsInFactory ? (dex.vault ?? dex.factory) : address,
        layout: dex.swapEvent,
      },
    };
    if (poolCache.size >= 200_000) poolCache.clear();
    poolCache.set(i, info);
    return info;
  };

  return {
    profile,
    seed,
    tokenCount,
    initialPools,
    creationEraBlocks,
    referenceCount: R,
    encodeAddress: codec.encode,
    decodeAddress: codec.decode,
    tokenAddress,
    tokenIndex,
    tokenMeta,
    poolsAt,
    poolCreatedBlock,
    poolAddress,
    poolIndex,
    poolInfo,
    traderAddress,
  };
}
