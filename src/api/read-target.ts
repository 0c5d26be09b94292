/**
 * The databases the API reads from (the primary, streaming replicas) and what a read in one
 * snapshot of one of them knows of the chains: the read router's (read-replicas.ts) pieces share these.
 */
import type { Db } from "../store/db.js";
import type { SnapshotSyncState } from "../store/replication.js";
import type { ChainSync, SyncWatch } from "./sync-watch.js";
import { toIso } from "./times.js";

export type ReplicaState = "ok" | "lagging" | "down";

/** One database the API can read from: the primary or a streaming replica. */
export type ReadTarget = {
  /** "primary", or the replica's host:port (never its credentials). */
  name: string;
  role: "primary" | "replica";
  db: Db;
  weight: number;
  /** `sync_state` as this database holds it (polled, and re-read at once on a commit notification). */
  sync: SyncWatch;
  /** The primary is always "ok" here: when it is down, nothing is. */
  state: ReplicaState;
  /** Seconds of replay behind the primary; 0 when caught up; null when unknown. */
  lagSeconds: number | null;
};

/** The sync state read inside an answer's snapshot: what the answering database holds. */
export type Snapshot = {
  /** Which database answered. */
  target: string;
  blockOf(chainId: number): number;
  headers(chainIds: Iterable<number>): Record<string, string> | undefined;
  /** Why the data of one of `chainIds` is off the canonical chain in this snapshot, or undefined. */
  offCanonical(chainIds: Iterable<number>): string | undefined;
};

/** The snapshot of `target` whose `sync_state` rows are `rows`. */
export function snapshotOf(target: string, rows: readonly SnapshotSyncState[]): Snapshot {
  const states = new Map<number, ChainSync>();
  for (const row of rows) {
    states.set(row.chainId, {
      chainId: row.chainId,
      indexedBlock: row.indexedBlock,
      indexedAt: row.indexedBlockTime,
      indexedHash: null,
      headBlock: null,
      headAt: null,
      offCanonical: row.offCanonical,
    });
  }
  return {
    target,
    blockOf: (chainId) => states.get(chainId)?.indexedBlock ?? -1,
    headers: (chainIds) => freshnessHeaders((id) => states.get(id), chainIds),
    offCanonical: (chainIds) => offCanonicalOf((id) => states.get(id), chainIds),
  };
}

/** The off-canonical reason of the first of `chainIds` that has one (see SyncWatch's ChainSync), or undefined. */
export function offCanonicalOf(
  stateOf: (chainId: number) => ChainSync | undefined,
  chainIds: Iterable<number>,
): string | undefined {
  for (const chainId of chainIds) {
    const reason = stateOf(chainId)?.offCanonical;
    if (reason) return reason;
  }
  return undefined;
}

/** `x-indexed-block` / `x-indexed-at` for the chains that have a state (the others are left out). */
export function freshnessHeaders(
  stateOf: (chainId: number) => ChainSync | undefined,
  chainIds: Iterable<number>,
): { "x-indexed-block": string; "x-indexed-at": string } | undefined {
  const blocks: string[] = [];
  const times: string[] = [];
  for (const chainId of new Set(chainIds)) {
    const state = stateOf(chainId);
    if (!state) continue;
    blocks.push(`${chainId}=${state.indexedBlock}`);
    if (state.indexedAt) times.push(`${chainId}=${toIso(state.indexedAt)}`);
  }
  if (blocks.length === 0) return undefined;
  return { "x-indexed-block": blocks.join(","), "x-indexed-at": times.join(",") };
}

/** One of `candidates` (not empty) at random by weight; the last one when every weight is 0. */
export function pickWeighted(candidates: readonly ReadTarget[], random = Math.random): ReadTarget {
  const total = candidates.reduce((sum, t) => sum + t.weight, 0);
  let r = random() * total;
  for (const t of candidates) {
    r -= t.weight;
    if (r < 0) return t;
  }
  return candidates[candidates.length - 1] as ReadTarget;
}

/** The state of `chainId` on the database of `targets` furthest behind; undefined when one has none. */
export function lowestOf(targets: readonly ReadTarget[], chainId: number): ChainSync | undefined {
  let lowest: ChainSync | undefined;
  for (const t of targets) {
    const s = t.sync.get(chainId);
    if (!s) return undefined;
    if (!lowest || s.indexedBlock < lowest.indexedBlock) lowest = s;
  }
  return lowest;
}
