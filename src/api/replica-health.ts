/**
 * The replicas' health as the read router sees it: every interval, each replica's replay status
 * against the primary's WAL position gives its lag, and its state follows: "ok" (takes reads),
 * "lagging" (beyond `replicaMaxLagSeconds`, or lag unknown) or "down" (unreachable, or a health
 * query slower than HEALTH_TIMEOUT_MS). Changes of state are logged.
 */
import type { Logger } from "../internal/logger.js";
import { createPoller } from "../internal/poller.js";
import { currentWalLsn, type ReplayStatus, replayStatus } from "../store/replication.js";
import type { ReadTarget, ReplicaState } from "./read-target.js";

/** A health query slower than this counts the replica as down. */
const HEALTH_TIMEOUT_MS = 1000;

/**
 * A replica's lag in seconds from its replay status at `now` (ms): 0 when it is not a standby or
 * has replayed the primary's position (`caughtUp`: it is caught up now); else the shorter of the
 * time since its last replayed commit and the time since it was last caught up (`caughtUpAt`), so
 * that an idle primary never makes a caught-up replica look late; null when neither is known.
 */
export function replicaLag(
  status: ReplayStatus,
  caughtUpAt: number | undefined,
  now: number,
): { lag: number | null; caughtUp: boolean } {
  if (!status.standby || (status.behind !== null && Number(status.behind) <= 0))
    return { lag: 0, caughtUp: true };
  const candidates = [status.age, caughtUpAt === undefined ? null : (now - caughtUpAt) / 1000].filter(
    (v): v is number => v !== null && Number.isFinite(v),
  );
  return { lag: candidates.length > 0 ? Math.max(0, Math.min(...candidates)) : null, caughtUp: false };
}

/** The state of a replica that answered its health query: down when its sync watch cannot read it. */
export function replicaState(reachable: boolean, lag: number | null, maxLag: number): ReplicaState {
  if (!reachable) return "down";
  return lag === null || lag > maxLag ? "lagging" : "ok";
}

export type ReplicaHealth = {
  /** Sets a replica's state and lag, logging a change of state. */
  set(t: ReadTarget, state: ReplicaState, lagSeconds: number | null, error?: unknown): void;
  /** Checks every replica now (one check at a time: a call during one joins it). */
  check(): Promise<void>;
  /** Checks at once, then every `intervalMs` until stop(). */
  start(): void;
  stop(): void;
};

export function createReplicaHealth(args: {
  primary: ReadTarget;
  replicas: readonly ReadTarget[];
  maxLag: number;
  intervalMs: number;
  log: Logger;
}): ReplicaHealth {
  const { primary, replicas, maxLag, log } = args;
  const caughtUpAt = new Map<ReadTarget, number>();

  const set: ReplicaHealth["set"] = (t, state, lagSeconds, error) => {
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
          const status = await withTimeout(replayStatus(r.db, primaryLsn), HEALTH_TIMEOUT_MS);
          const now = Date.now();
          const { lag, caughtUp } = replicaLag(status, caughtUpAt.get(r), now);
          if (caughtUp) caughtUpAt.set(r, now);
          set(r, replicaState(r.sync.reachable(), lag, maxLag), lag);
        } catch (error) {
          set(r, "down", null, error);
        }
      }),
    );
  };

  const poller = createPoller(checkReplicas, args.intervalMs);
  return { set, check: poller.run, start: poller.start, stop: poller.stop };
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
