/**
 * Plain types of a chain's ingestion state, shared by the indexer (src/sync), the store and the
 * API. This folder is the lowest layer: it imports nothing but src/internal.
 */

/** Lowercase 0x-hex address or hash. */
export type Hex = `0x${string}`;

/** Every block up to `block` is fully ingested; hash and time of that block (null where unknown). */
export type Checkpoint = { block: number; hash: Hex | null; time: Date | null };

/** The progress figures the indexer records with each checkpoint (null: keep the stored ones). */
export type SyncFigures = {
  headBlock: number | null;
  headBlockTime: Date | null;
  blocksPerSecond: number | null;
  swapsPerSecond: number | null;
};

/** A canonical block as stored for reorg detection; `timestamp` in seconds. */
export type BlockRow = { number: number; hash: Hex; parentHash: Hex; timestamp: number };

/** How far a factory's creation events were scanned below the indexed range, and up to where they must be. */
export type FactoryScan = { scannedBlock: number; targetBlock: number };

/** How far a chain's indexing has come: the figures the indexer keeps live and records with each checkpoint. */
export type ChainProgress = {
  chainId: number;
  name: string;
  indexedBlockTime: Date | null;
  headBlock: number | null;
  headBlockTime: Date | null;
  /** headBlock − indexedBlock (null while the head is unknown). */
  lagBlocks: number | null;
  /** Seconds between the head's and the indexed block's timestamps. */
  lagSeconds: number | null;
  blocksPerSecond: number | null;
  swapsPerSecond: number | null;
};

/** Indexing progress of one chain, as the indexer last recorded it (table sync_state). */
export type ChainSyncStatus = ChainProgress & {
  /** Every block up to this one is fully ingested. */
  indexedBlock: number;
  indexedBlockHash: string | null;
  updatedAt: Date;
};

/** What a chain's indexer reports of its own health (its phase, the node's last answer, its last error). */
export type ChainHealthReport = {
  chainId: number;
  phase: string;
  headBlock: number | null;
  /** When the node last answered the head (before the first answer: when the indexer started). */
  headSeenAt: Date;
  /** When the chain stopped for good (a fatal error); null while it runs or retries. */
  stoppedAt: Date | null;
  /** The last error, while the chain retries or after it stopped. */
  error: string | null;
  /** During the backfill: seconds until the head is reached at the recent rate. */
  etaSeconds: number | null;
};

/** How far the indexed block is behind the head, in blocks and in seconds of block time; null while either is unknown. */
export function lagOf(s: {
  headBlock: number | null;
  headBlockTime: Date | null;
  indexedBlock: number | null;
  indexedBlockTime: Date | null;
}): { lagBlocks: number | null; lagSeconds: number | null } {
  return {
    lagBlocks:
      s.headBlock !== null && s.indexedBlock !== null ? Math.max(0, s.headBlock - s.indexedBlock) : null,
    lagSeconds:
      s.headBlockTime && s.indexedBlockTime
        ? Math.max(0, (s.headBlockTime.getTime() - s.indexedBlockTime.getTime()) / 1000)
        : null,
  };
}

/**
 * The chain's native coin where a pool trades it as such (Uniswap V4 currencies): the zero
 * address. It is a token of its own, `0x0000000000000000000000000000000000000000:<chainId>`.
 */
export const NATIVE_COIN = "0x0000000000000000000000000000000000000000" as Hex;

/** Symbol and name of the native coin of the chains whose coin is known here. */
const NATIVE_COINS: Readonly<Record<number, { symbol: string; name: string }>> = {
  1: { symbol: "ETH", name: "Ether" },
  56: { symbol: "BNB", name: "BNB" },
  137: { symbol: "POL", name: "POL" },
};

/**
 * The native coin as a token: the chain's native symbol and name (the configured symbol where one
 * is set; ETH / Ether where the chain is not known here), 18 decimals, no supply.
 */
export function nativeCoin(
  chainId: number,
  symbol?: string,
): { address: Hex; name: string; symbol: string; decimals: number; totalSupply: null } {
  const known = NATIVE_COINS[chainId];
  const coinSymbol = symbol ?? known?.symbol ?? "ETH";
  const name =
    known && known.symbol === coinSymbol ? known.name : coinSymbol === "ETH" ? "Ether" : coinSymbol;
  return { address: NATIVE_COIN, name, symbol: coinSymbol, decimals: 18, totalSupply: null };
}
