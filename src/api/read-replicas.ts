import { Gauge, type Registry } from "prom-client";
import type { Config } from "../config/schema.js";
import { HttpError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { CommitNotice } from "../store/commit-notify.js";
import { createDb, type Db, type DbClient } from "../store/db.js";
import { currentWalLsn, replayStatus, withReadSnapshot } from "../store/replication.js";
import { type CommitListener, createCommitListener } from "./commit-listener.js";
import { type ChainSync, createSyncWatch, type SyncWatch } from "./sync-watch.js";
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

export type ReadStatus = {
  /** Where data reads go: the replicas (possibly with a share to the primary) or the primary alone. */
  source: "replicas" | "primary";
  replicas: { host: string; state: ReplicaState; lag_seconds: number | null }[];
};

export type ReadRouter = {
  /**
   * The process's view, for the answer cache and the freshness headers of cache hits: per chain,
   * the state of the reading database that is furthest behind, so that an answer cached at a
   * block is never served while a database in use holds an older one. Starting and stopping it
   * starts and stops everything here (polls, replica health, the commit listener).
   */
  view: SyncWatch;
  primary: ReadTarget;
  replicas: readonly ReadTarget[];
  /** Runs `fn` in one read-only REPEATABLE READ snapshot of a chosen database; see createReadRouter. */
  read<T>(fn: (client: DbClient, snapshot: Snapshot) => Promise<T>): Promise<T>;
  /**
   * Like `read`, but only on a database that holds `chainId` at `block` or later: a usable replica
   * that has replayed it (as its last poll saw), else the primary. A replica whose snapshot turns
   * out to be older is left for the primary. The stream's reads after a commit notification.
   */
  readFresh<T>(
    chainId: number,
    block: number,
    fn: (client: DbClient, snapshot: Snapshot) => Promise<T>,
  ): Promise<T>;
  /**
   * Calls `listener` with every commit notification (after the router's own handling) and once
   * each time the LISTEN connection is back after a drop (notifications sent meanwhile are lost).
   * Returns the function that removes it.
   */
  watchCommits(listener: CommitWatcher): () => void;
  /** The database a request without a snapshot should use. */
  pick(): ReadTarget;
  status(): ReadStatus;
  /** True while commit notifications arrive (else the periodic poll alone keeps the view fresh). */
  listening(): boolean;
  /** Handles one commit notification (the listener calls it; tests may too). */
  onCommit(notice: CommitNotice): void;
};

/** What `watchCommits` reports. */
export type CommitWatcher = {
  commit(notice: CommitNotice): void;
  reconnect(): void;
};

/** How often a replica that has not replayed a notified commit yet is re-read, and for how long. */
const CHASE_MS = 20;
const CHASE_FOR_MS = 2000;
/** A health query slower than this counts the replica as down. */
const HEALTH_TIMEOUT_MS = 1000;

/**
 * Routes the API's reads over the primary and the configured replicas.
 *
 * - Choice: weighted random among the replicas that are up and within `replicaMaxLagSeconds` (and
 *   the primary with `primaryReadWeight`); when none is usable, the primary.
 * - Lag: every poll compares the replica's replayed WAL position with the primary's current one;
 *   when it is behind, the lag is the time since it was last caught up (or since its last replayed
 *   commit, whichever is shorter), so an idle primary never makes a caught-up replica look late.
 * - Snapshot: an answer's queries and the `sync_state` it is labelled with come from one
 *   snapshot of one database, so the freshness headers say what the answering database holds
 *   and the cache files the answer under that version, never under a newer one.
 * - Failure: a replica that fails a read (connection lost, shut down, recovery conflict) is
 *   marked down until its next health check and the read is retried on the primary.
 * - Notifications: the indexers' commits arrive on a LISTEN connection to the primary; each
 *   database's `sync_state` is then re-read at once, and re-read every 20 ms (for up to 2 s) on
 *   a replica that has not replayed the notified block yet. The periodic poll stays as the fallback.
 */
export function createReadRouter(options: {
  config: Config;
  db: Db;
  logger: Logger;
  intervalMs?: number;
  /** Listen for commit notifications (default true). */
  listen?: boolean;
}): ReadRouter {
  const { config, logger } = options;
  const intervalMs = options.intervalMs ?? 250;
  const maxLag = config.database.replicaMaxLagSeconds;
  const log = logger.child({ component: "reads" });

  const target = (name: string, role: ReadTarget["role"], db: Db, weight: number): ReadTarget => ({
    name,
    role,
    db,
    weight,
    sync: createSyncWatch({ db, logger: log.child({ database: name }), intervalMs }),
    state: "ok",
    lagSeconds: role === "primary" ? 0 : null,
  });
  const primary = target("primary", "primary", options.db, config.database.primaryReadWeight);
  const replicas = config.database.replicas.map((r) =>
    target(
      hostOf(r.url),
      "replica",
      createDb({
        url: r.url,
        max: 10,
        applicationName: "tokenmarket-api",
        timeouts: { connectTimeoutMs: 2000 },
      }),
      r.weight,
    ),
  );
  const targets = [primary, ...replicas];
  const caughtUpAt = new Map<ReadTarget, number>();

  const usableReplicas = () => replicas.filter((r) => r.state === "ok" && r.weight > 0);
  /** The databases answers may come from now. */
  const inUse = () => {
    const usable: ReadTarget[] = usableReplicas();
    if (usable.length === 0 || primary.weight > 0) usable.push(primary);
    return usable;
  };

  const pick = (): ReadTarget => {
    const usable = usableReplicas();
    if (usable.length === 0) return primary;
    return pickWeighted(primary.weight > 0 ? [...usable, primary] : usable);
  };

  const setState = (t: ReadTarget, state: ReplicaState, lagSeconds: number | null, error?: unknown) => {
    if (t.state !== state) {
      const fields = { replica: t.name, lag_seconds: lagSeconds, max_lag_seconds: maxLag };
      if (state === "ok") log.info(fields, "replica usable again");
      else log.warn({ ...fields, err: error }, `replica ${state}; reads skip it`);
    }
    t.state = state;
    t.lagSeconds = lagSeconds;
  };

  const checkReplicas = async () => {
    if (replicas.length === 0) return;
    let primaryLsn: string | null = null;
    try {
      primaryLsn = await currentWalLsn(primary.db);
    } catch {
      // Primary unreachable: replicas are judged by their replay time alone.
    }
    await Promise.all(
      replicas.map(async (r) => {
        try {
          const { standby, behind, age } = await withTimeout(
            replayStatus(r.db, primaryLsn),
            HEALTH_TIMEOUT_MS,
          );
          const now = Date.now();
          let lag: number | null;
          if (!standby || (behind !== null && Number(behind) <= 0)) {
            caughtUpAt.set(r, now);
            lag = 0;
          } else {
            const since = caughtUpAt.get(r);
            const candidates = [age, since === undefined ? null : (now - since) / 1000].filter(
              (v): v is number => v !== null && Number.isFinite(v),
            );
            lag = candidates.length > 0 ? Math.max(0, Math.min(...candidates)) : null;
          }
          const reachable = r.sync.reachable();
          if (!reachable) setState(r, "down", lag);
          else setState(r, lag === null || lag > maxLag ? "lagging" : "ok", lag);
        } catch (error) {
          setState(r, "down", null, error);
        }
      }),
    );
  };

  // Commit notifications: the newest notified block per chain, and whether it went backwards.
  const notified = new Map<number, { block: number; rollback: boolean }>();
  const chasing = new Set<ReadTarget>();
  let running = false;

  const holds = (t: ReadTarget) => {
    for (const [chainId, n] of notified) {
      const b = t.sync.blockOf(chainId);
      if (n.rollback ? b !== n.block : b < n.block) return false;
    }
    return true;
  };

  const chase = (t: ReadTarget) => {
    if (chasing.has(t)) return;
    chasing.add(t);
    const deadline = Date.now() + CHASE_FOR_MS;
    const step = async () => {
      await t.sync.refresh();
      if (running && !holds(t) && Date.now() < deadline) setTimeout(() => void step(), CHASE_MS).unref();
      else chasing.delete(t);
    };
    void step();
  };

  const watchers = new Set<CommitWatcher>();
  const onCommit = (notice: CommitNotice) => {
    const previous = notified.get(notice.chainId);
    notified.set(notice.chainId, {
      block: notice.block,
      rollback: previous !== undefined && notice.block < previous.block,
    });
    for (const t of targets) chase(t);
    for (const w of watchers) w.commit(notice);
  };

  const listener: CommitListener | undefined =
    options.listen === false
      ? undefined
      : createCommitListener({
          db: primary.db,
          logger: log,
          onCommit,
          // Commits made while the connection was down were not heard: read everything again.
          onReconnect: () => {
            void refresh();
            for (const w of watchers) w.reconnect();
          },
        });

  let healthTimer: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;
  const check = () => {
    checking ??= checkReplicas().finally(() => {
      checking = undefined;
    });
    return checking;
  };
  const healthLoop = async () => {
    await check();
    if (running) {
      healthTimer = setTimeout(() => void healthLoop(), intervalMs);
      healthTimer.unref();
    }
  };

  const refresh = async () => {
    await Promise.all(targets.map((t) => t.sync.refresh()));
    await check();
  };

  /** The state of the database in use that is furthest behind on `chainId`. */
  const viewOf = (chainId: number): ChainSync | undefined => {
    let lowest: ChainSync | undefined;
    let missing = false;
    for (const t of inUse()) {
      const s = t.sync.get(chainId);
      if (!s) missing = true;
      else if (!lowest || s.indexedBlock < lowest.indexedBlock) lowest = s;
    }
    return missing ? undefined : lowest;
  };

  const view: SyncWatch = {
    get: viewOf,
    all() {
      const ids = new Set<number>();
      for (const t of inUse()) for (const s of t.sync.all()) ids.add(s.chainId);
      return [...ids].map(viewOf).filter((s): s is ChainSync => s !== undefined);
    },
    blockOf: (chainId) => viewOf(chainId)?.indexedBlock ?? -1,
    headers: (chainIds) => freshnessHeaders(viewOf, chainIds),
    reachable: () => inUse().some((t) => t.sync.reachable()),
    // The primary's: where the indexer writes (readiness weighs its outages).
    reachableSince: () => primary.sync.reachableSince(),
    refresh,
    start() {
      if (running) return;
      running = true;
      for (const t of targets) t.sync.start();
      void healthLoop();
      listener?.start();
    },
    stop() {
      running = false;
      if (healthTimer) clearTimeout(healthTimer);
      for (const t of targets) t.sync.stop();
      void listener?.stop();
      for (const r of replicas) void r.db.end().catch(() => {});
    },
  };

  const inSnapshot = <T>(t: ReadTarget, fn: (client: DbClient, snapshot: Snapshot) => Promise<T>) =>
    withReadSnapshot(t.db, (client, rows) => {
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
      const snapshot: Snapshot = {
        target: t.name,
        blockOf: (chainId) => states.get(chainId)?.indexedBlock ?? -1,
        headers: (chainIds) => freshnessHeaders((id) => states.get(id), chainIds),
        offCanonical: (chainIds) => offCanonicalOf((id) => states.get(id), chainIds),
      };
      return fn(client, snapshot);
    });

  return {
    view,
    primary,
    replicas,
    pick,
    async read(fn) {
      const t = pick();
      try {
        return await inSnapshot(t, fn);
      } catch (error) {
        if (t.role !== "replica" || !isUnavailable(error)) throw error;
        setState(t, "down", null, error);
        return inSnapshot(primary, fn);
      }
    },
    async readFresh<T>(
      chainId: number,
      block: number,
      fn: (client: DbClient, snapshot: Snapshot) => Promise<T>,
    ): Promise<T> {
      const fresh = usableReplicas().filter((r) => r.sync.blockOf(chainId) >= block);
      const candidates = primary.weight > 0 || fresh.length === 0 ? [...fresh, primary] : fresh;
      const t = pickWeighted(candidates);
      if (t.role === "primary") return inSnapshot(primary, fn);
      try {
        const result: { value: T } | null = await inSnapshot(t, async (client, snapshot) =>
          snapshot.blockOf(chainId) < block ? null : { value: await fn(client, snapshot) },
        );
        if (result) return result.value;
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        setState(t, "down", null, error);
      }
      return inSnapshot(primary, fn);
    },
    watchCommits(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    status() {
      return {
        source: usableReplicas().length > 0 ? "replicas" : "primary",
        replicas: replicas.map((r) => ({
          host: r.name,
          state: r.state,
          lag_seconds: r.lagSeconds === null ? null : Math.round(r.lagSeconds * 1000) / 1000,
        })),
      };
    },
    listening: () => listener?.listening() ?? false,
    onCommit,
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
function freshnessHeaders(
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

/** True for failures of the database rather than of the query: worth the primary's try. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof HttpError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    // 08: connection exception; 57P0x: shut down / starting; 53300: too many connections;
    // 40001 on a standby: cancelled by a recovery conflict; E…: a socket error (ECONNREFUSED…).
    return /^(08|57P0|53300$|40001$|E[A-Z]+$)/.test(code);
  }
  return /connect|terminat|timeout/i.test(error instanceof Error ? error.message : String(error));
}

/** One of `candidates` (not empty) at random by weight; the last one when every weight is 0. */
function pickWeighted(candidates: readonly ReadTarget[]): ReadTarget {
  const total = candidates.reduce((sum, t) => sum + t.weight, 0);
  let r = Math.random() * total;
  for (const t of candidates) {
    r -= t.weight;
    if (r < 0) return t;
  }
  return candidates[candidates.length - 1] as ReadTarget;
}

function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return "replica";
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Prometheus gauges of the read routing, read at scrape time: each replica's state and lag, whether
 * reads fell back to the primary, and whether commit notifications arrive.
 */
export function registerReadMetrics(registry: Registry, reads: ReadRouter): void {
  new Gauge({
    name: "tokenmarket_db_replica_up",
    help: "1 when the replica takes reads (up and within the lag bound), else 0; by replica and state.",
    labelNames: ["replica", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of reads.replicas) this.set({ replica: r.name, state: r.state }, r.state === "ok" ? 1 : 0);
    },
  });
  new Gauge({
    name: "tokenmarket_db_replica_lag_seconds",
    help: "Seconds of replay the replica is behind the primary (0 when caught up).",
    labelNames: ["replica"],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of reads.replicas) if (r.lagSeconds !== null) this.set({ replica: r.name }, r.lagSeconds);
    },
  });
  new Gauge({
    name: "tokenmarket_db_reads_from_primary",
    help: "1 when data reads go to the primary alone (no replica configured or usable).",
    registers: [registry],
    collect() {
      this.set(reads.status().source === "primary" ? 1 : 0);
    },
  });
  new Gauge({
    name: "tokenmarket_db_commit_listener_up",
    help: "1 while the LISTEN connection for the indexers' commit notifications is up.",
    registers: [registry],
    collect() {
      this.set(reads.listening() ? 1 : 0);
    },
  });
}
