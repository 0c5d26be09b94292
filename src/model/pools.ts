/** Plain types of pools and tokens as the indexer finds them and the store keeps them. */
import type { Hex } from "./chain.js";

/**
 * The name of a pool's DEX family (`pools.protocol`), one of those src/protocols/index.ts
 * registers. Plain text here, so that neither the model nor the store lists the families; the
 * configuration's schema and the API's answers take the registry's names.
 */
export type ProtocolName = string;
/** The same as `ProtocolName`. */
export type Protocol = ProtocolName;

/** A pool's state after its latest ingested event (or its base state before any). */
export type PoolState = {
  /** Token balances held by the pool (V2: reserves from Sync; V3: tracked). Null: unknown. */
  reserve0: bigint | null;
  reserve1: bigint | null;
  sqrtPriceX96: bigint | null;
  /** V3 active liquidity. */
  liquidity: bigint | null;
  tick: number | null;
  /** Position of the event that produced this state; the base state has a null logIndex. */
  block: number | null;
  logIndex: number | null;
};

/** What a factory's creation event (PairCreated, PoolCreated, Initialize) says of a pool. */
export type PoolCreationFields = {
  factory: Hex;
  token0: Hex;
  token1: Hex;
  /** V3: the pool's fee in hundredths of a bip; V2: null (the DEX's configured fee applies). */
  fee: number | null;
  tickSpacing: number | null;
  /** A pool inside a manager (Uniswap V4): its hook contract (zero address: none); absent for other pools. */
  hooks?: Hex | null;
  /** A pool inside a PancakeSwap Infinity manager: its packed parameters; absent for other pools. */
  parameters?: Hex | null;
};

/** A pool as its factory created it: what is stored once and never changes. The base of every pool type. */
export type PoolInfo = PoolCreationFields & {
  address: Hex;
  dex: string;
  protocol: Protocol;
  createdBlock: number;
  createdLogIndex: number;
};

/** A pool with its base state: what is inserted when the pool is first stored (its latest state is the events'). */
export type NewPool = PoolInfo & {
  /** State before the first indexed event; null while unknown (a pool older than the range, not read yet). */
  base: PoolState | null;
};

/** A stored pool with its base and latest state: what the indexer loads back at start. */
export type StoredPool = NewPool & { state: PoolState };

/** Metadata of a token; null fields: the contract did not answer (missing function, revert). */
export type Token = {
  address: Hex;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  totalSupply: bigint | null;
};
