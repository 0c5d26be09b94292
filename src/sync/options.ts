import type { RpcOptions } from "../rpc/client.js";
import type { WriterLockOptions } from "./writer-lock.js";

/** Tuning of the indexer. Per-chain settings (ranges, confirmations, window) are in the chain's configuration. */
export type IndexerOptions = {
  /** Keep following the head after the backfill; false stops each chain once it has caught up (runs that end). */
  follow: boolean;
  /** The first eth_getLogs range, in blocks; it then doubles while ranges work, up to the chain's maxBlockRange. */
  initialBlockRange: number;
  /** A range that brought more logs than this makes the next one smaller (bounds a batch's memory and transaction). */
  targetLogsPerBatch: number;
  /**
   * Backfill ranges fetched ahead of the commits (fetch-ahead.ts), at most; fetching also pauses
   * while those hold `targetLogsPerBatch` logs. 1: one range ahead.
   */
  fetchAheadRanges: number;
  /**
   * Fetched ranges committed together in one transaction, at most (up to `targetLogsPerBatch`
   * logs): fewer commits amortise each commit's fixed work in a backfill, at the price of coarser
   * progress. Default 1: one range a commit, as the crash tests' kill points expect.
   */
  rangesPerCommit: number;
  /** Known pools plus factories up to this many are named in eth_getLogs' address filter; above, topics only. */
  addressFilterLimit: number;
  /** Upper bound of the ranges of the factory scan below startBlock (creation logs are sparse). */
  factoryScanMaxRange: number;
  /** totalSupply of each token is read again after this long (while following the head). */
  supplyRefreshMs: number;
  /** Tokens refreshed per round. */
  supplyRefreshBatch: number;
  /** An info line per chain at most this often during the backfill. */
  progressLogIntervalMs: number;
  /** A progress bar per chain during the backfill; only ever shown when stdout is a TTY. */
  progressBar: boolean;
  /**
   * Waits between restarts of a failed chain: doubling from the first to the second, reset by a
   * successful round. Capped at a few seconds so that indexing resumes promptly after an outage.
   */
  restartDelayMs: [number, number];
  /** How often each chain's status is written to `indexer_health` for API processes without an indexer. */
  healthReportMs: number;
  /**
   * Waits after an inconsistent answer of the node (an unlinked header, a log in another block
   * than its header, a head going back): doubling from the first to the second, reset by the
   * first consistent answer. Never a tight loop on a node that keeps contradicting itself.
   */
  inconsistentDelayMs: [number, number];
  /** After this many inconsistent answers in a row, the next RPC URL of the chain is tried. */
  inconsistentFailoverAfter: number;
  /**
   * Block hashes kept per chain (at least the chain's `reorgWindow`): a reorg up to this deep,
   * below the indexed block, is walked back and rolled back by itself; a deeper one stops the
   * chain. About 150 bytes a block in `block_hashes` (4,096: about 0.6 MB a chain).
   */
  keptBlockHashes: number;
  rpc: Partial<RpcOptions>;
  /** The per-chain writer lock: standby polling, heartbeat, server-side session timeout. */
  writerLock: Partial<WriterLockOptions>;
};

export const defaultIndexerOptions: IndexerOptions = {
  follow: true,
  initialBlockRange: 100,
  targetLogsPerBatch: 20_000,
  fetchAheadRanges: 4,
  rangesPerCommit: 1,
  addressFilterLimit: 1000,
  factoryScanMaxRange: 100_000,
  supplyRefreshMs: 3_600_000,
  supplyRefreshBatch: 500,
  progressLogIntervalMs: 10_000,
  progressBar: true,
  restartDelayMs: [500, 4000],
  healthReportMs: 2000,
  inconsistentDelayMs: [250, 4000],
  inconsistentFailoverAfter: 5,
  keptBlockHashes: 4096,
  // RPC retries back off to at most 4 s (not the client's default 20 s) for the same reason.
  rpc: { maxDelayMs: 4000 },
  writerLock: {},
};
