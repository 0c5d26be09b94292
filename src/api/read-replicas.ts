import { Gauge, type Registry } from "prom-client";
import type { Config } from "../config/schema.js";
import { HttpError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { metricsIn } from "../internal/metrics.js";
import type { CommitNotice } from "../store/commit-notify.js";
import { createDb, type Db, type DbClient, type Deadline } from "../store/db.js";
import { withReadSnapshot } from "../store/replication.js";
import { createCommitChase } from "./commit-chase.js";
import { type CommitListener, createCommitListener } from "./commit-listener.js";
import {
  freshnessHeaders,
  lowestOf,
  pickWeighted,
  type ReadTarget,
  type ReplicaState,
  type Snapshot,
  snapshotOf,
} from "./read-target.js";
import { createReplicaHealth } from "./replica-health.js";
import { type ChainSync, createSyncWatch, type SyncWatch } from "./sync-watch.js";

export { offCanonicalOf, type ReadTarget, type ReplicaState, type Snapshot } from "./read-target.js";

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
  /**
   * Runs `fn` in one read-only REPEATABLE READ snapshot of a chosen database; see createReadRouter.
   * With a `deadline`, every wait of the read (a retry on the primary included) ends by then.
   */
  read<T>(fn: (client: DbClient, snapshot: Snapshot) => Promise<T>, deadline?: Deadline): Promise<T>;
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
  let running = false;

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

  // Replica lag and state (replica-health.ts); commit notifications chased on every database (commit-chase.ts).
  const health = createReplicaHealth({ primary, replicas, maxLag, intervalMs, log });
  const chase = createCommitChase(targets, () => running);
  const watchers = new Set<CommitWatcher>();
  const onCommit = (notice: CommitNotice) => {
    chase.onCommit(notice);
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

  const refresh = async () => {
    await Promise.all(targets.map((t) => t.sync.refresh()));
    await health.check();
  };

  /** The state of the database in use that is furthest behind on `chainId`. */
  const viewOf = (chainId: number): ChainSync | undefined => lowestOf(inUse(), chainId);

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
      health.start();
      listener?.start();
    },
    stop() {
      running = false;
      health.stop();
      for (const t of targets) t.sync.stop();
      void listener?.stop();
      for (const r of replicas) void r.db.end().catch(() => {});
    },
  };

  const inSnapshot = <T>(
    t: ReadTarget,
    fn: (client: DbClient, snapshot: Snapshot) => Promise<T>,
    deadline?: Deadline,
  ) => withReadSnapshot(t.db, (client, rows) => fn(client, snapshotOf(t.name, rows)), deadline);

  return {
    view,
    primary,
    replicas,
    pick,
    async read(fn, deadline) {
      const t = pick();
      try {
        return await inSnapshot(t, fn, deadline);
      } catch (error) {
        if (t.role !== "replica" || !isUnavailable(error)) throw error;
        health.set(t, "down", null, error);
        return inSnapshot(primary, fn, deadline);
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
        health.set(t, "down", null, error);
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

function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}`;
  } catch {
    return "replica";
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
  const { readGauge } = metricsIn(registry);
  readGauge(
    "tokenmarket_db_reads_from_primary",
    "1 when data reads go to the primary alone (no replica configured or usable).",
    () => (reads.status().source === "primary" ? 1 : 0),
  );
  readGauge(
    "tokenmarket_db_commit_listener_up",
    "1 while the LISTEN connection for the indexers' commit notifications is up.",
    () => (reads.listening() ? 1 : 0),
  );
}
