import type { Logger } from "../internal/logger.js";
import { createPoller } from "../internal/poller.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Queryable } from "../store/db.js";
import { toIso } from "./times.js";

/** What the indexer has ingested on one chain, from `sync_state`. */
export type ChainSync = {
  chainId: number;
  indexedBlock: number;
  indexedAt: Date | null;
  /** The indexed block's hash (null when unknown, as in an answer's snapshot). */
  indexedHash: string | null;
  headBlock: number | null;
  headAt: Date | null;
  /** Why the chain's indexed data is known to be off the node's canonical chain (a reorg being rolled back), or null. */
  offCanonical: string | null;
};

export type SyncWatch = {
  /** The latest polled state of a chain, or undefined when nothing is indexed on it yet. */
  get(chainId: number): ChainSync | undefined;
  all(): ChainSync[];
  /** The indexed block of a chain (-1 when none): the version answers cached for it are tied to. */
  blockOf(chainId: number): number;
  /** Freshness headers for the chains an answer involves (chains with nothing indexed are left out). */
  headers(chainIds: Iterable<number>): { "x-indexed-block": string; "x-indexed-at": string } | undefined;
  /** True while the last poll reached the database. */
  reachable(): boolean;
  /** Since when the polls have reached the database; null while they do not. */
  reachableSince(): Date | null;
  /** Polls now (also used by tests to skip the wait for the next tick). */
  refresh(): Promise<void>;
  start(): void;
  stop(): void;
};

/**
 * Watches `sync_state` with a cheap poll (getSyncStatus: one small query every `intervalMs`, 250 ms
 * by default). Answers cached in memory are tied to the indexed blocks seen here, so they are
 * dropped within one poll of the indexer ingesting a new block; the freshness headers come from
 * the same snapshot.
 */
export function createSyncWatch(options: { db: Queryable; logger: Logger; intervalMs?: number }): SyncWatch {
  const intervalMs = options.intervalMs ?? 250;
  let chains = new Map<number, ChainSync>();
  let ok = true;
  let okSince = new Date();

  const poll = async () => {
    try {
      const next = new Map<number, ChainSync>();
      for (const status of await getSyncStatus(options.db)) {
        next.set(status.chainId, {
          chainId: status.chainId,
          indexedBlock: status.indexedBlock,
          indexedAt: status.indexedBlockTime,
          indexedHash: status.indexedBlockHash,
          headBlock: status.headBlock,
          headAt: status.headBlockTime,
          offCanonical: status.offCanonical,
        });
      }
      chains = next;
      if (!ok) {
        options.logger.info("database reachable again");
        okSince = new Date();
      }
      ok = true;
    } catch (error) {
      if (ok)
        options.logger.warn({ err: error }, "cannot read sync_state; answers keep the last known freshness");
      ok = false;
    }
  };

  const poller = createPoller(poll, intervalMs);

  return {
    get: (chainId) => chains.get(chainId),
    all: () => [...chains.values()],
    blockOf: (chainId) => chains.get(chainId)?.indexedBlock ?? -1,
    headers(chainIds) {
      const blocks: string[] = [];
      const times: string[] = [];
      for (const chainId of new Set(chainIds)) {
        const state = chains.get(chainId);
        if (!state) continue;
        blocks.push(`${chainId}=${state.indexedBlock}`);
        if (state.indexedAt) times.push(`${chainId}=${toIso(state.indexedAt)}`);
      }
      if (blocks.length === 0) return undefined;
      return { "x-indexed-block": blocks.join(","), "x-indexed-at": times.join(",") };
    },
    reachable: () => ok,
    reachableSince: () => (ok ? okSince : null),
    refresh: poller.run,
    start: poller.start,
    stop: poller.stop,
  };
}
