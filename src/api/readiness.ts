import type { Config } from "../config/schema.js";
import { formatDuration } from "../internal/duration.js";
import type { ChainHealthReport } from "../model/index.js";
import type { SyncWatch } from "./sync-watch.js";
import { toIso } from "./times.js";

/**
 * What the API needs of the running indexer of a chain: its health report (src/sync's ChainStatus
 * fits; a report read back from the database lacks the rest).
 */
export type IndexerChainHealth = Omit<ChainHealthReport, "etaSeconds"> & {
  etaSeconds?: number | null;
  /** The node's answers contradict each other: since when, how many in a row, the last one. */
  inconsistent?: { since: Date; count: number; message: string } | null;
  /** While the indexer scans the factories for pools older than the start block (0…1 done). */
  factoryScan?: { fraction: number; poolsFound: number } | null;
};

/**
 * Inconsistent answers in a row before a chain is not ready: one is an ordinary race with a new
 * block at the head and heals on the next try; several in a row are a node (or a load balancer)
 * that keeps contradicting itself.
 */
export const INCONSISTENT_NOT_READY_AFTER = 3;

/** How long the `X-Indexing-Stopped` judgement is reused across data answers (ms). */
const STALLED_REUSE_MS = 250;

/**
 * The running indexer: the one in this process (`tokenmarket start`), or as the indexers report
 * themselves in the database (`tokenmarket serve`, where a stale report is the phase "absent").
 */
export type IndexerHealth = { status(): IndexerChainHealth[] };

export type ChainReadiness = {
  chainId: number;
  ready: boolean;
  /** Why the chain is not ready, in words; null when it is. */
  reason: string | null;
  indexedBlock: number | null;
  headBlock: number | null;
  lagBlocks: number | null;
  maxLagBlocks: number;
  /** Seconds since the node last answered the head (null without an indexer in this process). */
  headAgeSeconds: number | null;
  /** "running", "node-unreachable", "stopped" (fatal), or "unknown" (no indexer in this process). */
  indexer: "running" | "node-unreachable" | "stopped" | "unknown";
  /** Since when indexing of the chain has not progressed (stopped or node unreachable); null otherwise. */
  stalledSince: Date | null;
  /** Share (0…1) of the factory scan done while the indexer scans for older pools; null otherwise. */
  factoryScan: number | null;
};

/**
 * The embedded Postgres as its supervisor sees it (src/embedded-postgres: restarted with backoff
 * when it exits on its own), for a process that started it.
 */
export type DatabaseServerHealth = () => {
  state: "running" | "restarting" | "stopped";
  exits: number;
  lastExit: { at: Date; code: number | null; signal: string | null } | null;
  downSince: Date | null;
};

/** The embedded Postgres down for longer than this: /healthz fails, for a supervisor to restart us. */
export const DATABASE_SERVER_DOWN_LIMIT_MS = 60_000;

export type DatabaseServerReadiness = {
  state: "running" | "restarting" | "stopped";
  exits: number;
  /** Seconds it has been down; null while it runs. */
  downSeconds: number | null;
  /** Why it makes the service not ready (and, past DATABASE_SERVER_DOWN_LIMIT_MS, not live); null when it runs. */
  reason: string | null;
};

/** What the supervision of the embedded Postgres says, in the health answers' terms. */
export function judgeDatabaseServer(
  health: ReturnType<DatabaseServerHealth>,
  nowMs: number,
): DatabaseServerReadiness {
  const downSeconds =
    health.downSince === null ? null : Math.max(0, (nowMs - health.downSince.getTime()) / 1000);
  let reason: string | null = null;
  if (health.state === "restarting") {
    const exit = health.lastExit;
    const how = exit?.signal ? `killed by ${exit.signal}` : `exit code ${exit?.code ?? "unknown"}`;
    reason = `the embedded Postgres exited unexpectedly (${how}) ${Math.round(downSeconds ?? 0)} s ago and is being restarted`;
  } else if (health.state === "stopped") {
    reason = "the embedded Postgres is stopped";
  }
  return {
    state: health.state,
    exits: health.exits,
    downSeconds: downSeconds === null ? null : Math.round(downSeconds * 10) / 10,
    reason,
  };
}

/** Whether the embedded Postgres has been down so long that the process should be restarted. */
export function databaseServerFailing(server: DatabaseServerReadiness): boolean {
  return server.state === "restarting" && (server.downSeconds ?? 0) * 1000 > DATABASE_SERVER_DOWN_LIMIT_MS;
}

export type Readiness = {
  /** Per configured chain, in configuration order. */
  chains(): ChainReadiness[];
  /** The embedded Postgres this process started and supervises; null without one. */
  databaseServer(): DatabaseServerReadiness | null;
  /** `X-Indexing-Stopped` for the chains of an answer whose indexing has stopped, or undefined. */
  stoppedHeader(chainIds: Iterable<number>): string | undefined;
};

/**
 * Readiness from reality, per chain: the indexer's own state (a fatal stop, the age of the head
 * last seen at the node) when it runs in this process, and the lag from the database's sync
 * state. A chain is not ready when its indexer has stopped, when its node has not answered for
 * longer than the chain's `maxHeadAgeMs`, when its node keeps answering inconsistently (unlinked
 * headers…), or when it lags more than `maxLagBlocks`.
 */
export function createReadiness(options: {
  config: Config;
  sync: SyncWatch;
  indexer?: IndexerHealth;
  databaseServer?: DatabaseServerHealth;
  now?: () => number;
}): Readiness {
  const { config, sync, indexer } = options;
  const now = options.now ?? Date.now;

  let stalled: { at: number; since: Map<number, string> } | undefined;

  const chains = (): ChainReadiness[] => {
    const health = new Map((indexer?.status() ?? []).map((s) => [s.chainId, s]));
    const at = now();
    return config.chains.map((chain) => {
      const stored = sync.get(chain.id);
      // A chain that ended normally (stop(), or caught up without following) reports no live state.
      const reported = health.get(chain.id);
      const live = reported?.phase === "stopped" ? undefined : reported;
      // The head the indexer saw last is fresher than the one it stored (stored only on change).
      const headBlock = Math.max(live?.headBlock ?? -1, stored?.headBlock ?? -1);
      const indexedBlock = stored?.indexedBlock ?? null;
      const headAgeSeconds = live ? Math.max(0, (at - live.headSeenAt.getTime()) / 1000) : null;
      // The node is judged on time the database was up: while it is down the indexer cannot ask
      // the node (it waits for its writer lock and its checkpoint), and after it is back the
      // indexer needs a moment (a reconnect capped at 2 s) before it asks again. So a stale head
      // during or just after a database outage names the database, never the node.
      const dbUpSince = sync.reachableSince();
      const nodeSilentSeconds =
        live && dbUpSince
          ? Math.max(0, (at - Math.max(live.headSeenAt.getTime(), dbUpSince.getTime())) / 1000)
          : null;
      // A lag is only as good as its head: from a node silent for longer than maxHeadAgeMs (one
      // that stopped answering, a provider throttling every request) it is unknown, not the last
      // figure (that node is then the reason, below).
      const headFresh = nodeSilentSeconds === null || nodeSilentSeconds * 1000 <= chain.maxHeadAgeMs;
      const lagBlocks =
        indexedBlock !== null && headBlock >= 0 && headFresh ? Math.max(0, headBlock - indexedBlock) : null;
      let state: ChainReadiness["indexer"] = live ? "running" : "unknown";
      let reason: string | null = null;
      let stalledSince: Date | null = null;
      if (live && (live.phase === "failed" || live.stoppedAt)) {
        state = "stopped";
        stalledSince = live.stoppedAt ?? live.headSeenAt;
        reason = `indexing of chain ${chain.id} has stopped since ${toIso(stalledSince)} on a fatal error: ${live.error ?? "unknown"}; an operator must act`;
      } else if (stored?.offCanonical) {
        reason = `the indexed data of chain ${chain.id} is off the node's canonical chain: ${stored.offCanonical}`;
      } else if (live?.phase === "absent") {
        state = "unknown";
        reason = live.error ?? `no indexer is running for chain ${chain.id}`;
      } else if (live && nodeSilentSeconds !== null && nodeSilentSeconds * 1000 > chain.maxHeadAgeMs) {
        state = "node-unreachable";
        stalledSince = live.headSeenAt;
        reason = `the node of chain ${chain.id} has not answered for ${Math.round(nodeSilentSeconds)} s (bound ${chain.maxHeadAgeMs / 1000} s)${live.error ? `: ${live.error}` : ""}`;
      } else if (live?.inconsistent && live.inconsistent.count >= INCONSISTENT_NOT_READY_AFTER) {
        const { since, count, message } = live.inconsistent;
        reason = `the node of chain ${chain.id} has answered inconsistently ${count} times in a row since ${toIso(since)} (retrying with backoff): ${message}`;
      } else if (live?.phase === "scanning-factories" && live.factoryScan) {
        const { fraction, poolsFound } = live.factoryScan;
        reason = `chain ${chain.id} is scanning factories ${Math.floor(fraction * 100)}% (${poolsFound} pools created before the start block found so far)`;
      } else if (indexedBlock === null || indexedBlock === chain.startBlock - 1) {
        // Near a young chain's genesis the lag alone is small with nothing indexed: not ready either.
        // While the node fails (before maxHeadAgeMs says it is unreachable), its error says why.
        reason = `nothing indexed on chain ${chain.id} yet${live?.error ? `: ${live.error}` : ""}`;
      } else if (lagBlocks === null) {
        // Data without a head: replayed recordings, or an indexer that has not reached its node yet.
        reason = `chain ${chain.id} holds data up to block ${indexedBlock}, but no indexer has reported the node's head${live?.error ? `: ${live.error}` : ""}`;
      } else if (lagBlocks > chain.maxLagBlocks) {
        const eta = live?.phase === "backfill" && live.etaSeconds != null ? live.etaSeconds : null;
        reason =
          eta === null
            ? `chain ${chain.id} lags ${lagBlocks} blocks behind the head (limit ${chain.maxLagBlocks})`
            : `chain ${chain.id} is backfilling: ${lagBlocks} blocks behind the head, about ${formatDuration(eta)} to go`;
      }
      return {
        chainId: chain.id,
        ready: reason === null,
        reason,
        indexedBlock,
        headBlock: headBlock >= 0 ? headBlock : null,
        lagBlocks,
        maxLagBlocks: chain.maxLagBlocks,
        headAgeSeconds: headAgeSeconds === null ? null : Math.round(headAgeSeconds * 10) / 10,
        indexer: state,
        stalledSince,
        factoryScan: live?.phase === "scanning-factories" ? (live.factoryScan?.fraction ?? null) : null,
      };
    });
  };

  const databaseServer = (): DatabaseServerReadiness | null => {
    const health = options.databaseServer?.();
    return health ? judgeDatabaseServer(health, now()) : null;
  };

  return {
    chains,
    databaseServer,
    stoppedHeader(chainIds) {
      if (!indexer) return undefined;
      // Every data answer asks: the judgement is reused for a moment rather than recomputed
      // (the indexer's status of every chain) per request; /readyz itself always judges afresh.
      const at = now();
      if (!stalled || at - stalled.at >= STALLED_REUSE_MS) {
        stalled = {
          at,
          since: new Map(
            chains()
              .filter((c) => c.stalledSince !== null)
              .map((c) => [c.chainId, toIso(c.stalledSince as Date)] as const),
          ),
        };
      }
      if (stalled.since.size === 0) return undefined;
      const parts: string[] = [];
      for (const id of new Set(chainIds)) {
        const since = stalled.since.get(id);
        if (since !== undefined) parts.push(`${id}=${since}`);
      }
      return parts.length > 0 ? parts.join(",") : undefined;
    },
  };
}
