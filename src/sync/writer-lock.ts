import pg from "pg";
import { WriterLockLostError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { sleep } from "../rpc/retry.js";
import type { Db, Queryable } from "../store/db.js";
import {
  claimWriterEpoch,
  fenceWriterEpoch,
  sessionPid,
  tryWriterLock,
  writerLockHeld,
} from "../store/writer-lock.js";

export type WriterLockOptions = {
  /** How often a standby tries to take the lock (pg_try_advisory_lock). */
  pollMs: number;
  /** How often the holder checks, on its lock connection, that the lock is still its own. */
  heartbeatMs: number;
  /** A heartbeat unanswered for this long means the connection is gone: writing stops at once. */
  heartbeatTimeoutMs: number;
  /**
   * Server side, on the lock session only: a client silent for this long (no heartbeat: killed
   * host, network cut) has its session ended (`idle_session_timeout`), and with it the lock.
   * Must be well above `heartbeatMs`; TCP keepalives and `tcp_user_timeout` usually end it sooner.
   */
  serverIdleTimeoutMs: number;
  /** Waits before connecting again after the lock connection failed (a database outage). */
  reconnectMs: number;
};

export const defaultWriterLockOptions: WriterLockOptions = {
  pollMs: 1000,
  heartbeatMs: 1000,
  heartbeatTimeoutMs: 3000,
  serverIdleTimeoutMs: 6000,
  reconnectMs: 2000,
};

/** The chain's writer, once its lock is held and its epoch claimed. */
export type Writer = {
  chainId: number;
  epoch: number;
  /** Backend pid of the lock connection (the holder pg_locks shows). */
  lockPid: number;
  /** Aborted the moment the lock connection fails or a heartbeat goes unanswered. */
  lost: AbortSignal;
  /**
   * Run first in every transaction that writes the chain: locks its sync_state row if, and only
   * if, this writer's epoch is current and its lock backend holds the lock; otherwise throws
   * WriterLockLostError and the transaction rolls back.
   */
  fence(client: Queryable): Promise<void>;
};

export type WriterLock = {
  /**
   * Waits, as a quiet standby, until this process holds the chain's lock. Resolves to the lock's
   * backend pid and its `lost` signal, or null when `signal` aborts first.
   */
  acquire(
    signal: AbortSignal,
    onStandby?: () => void,
  ): Promise<{ lockPid: number; lost: AbortSignal } | null>;
  /**
   * Claims a new epoch on the chain's sync_state row (which must exist): after this, commits of
   * any earlier writer are refused. Waits for such a commit in flight (row lock) to finish.
   */
  claim(db: Queryable): Promise<Writer>;
  /** True while waiting for another process's lock. */
  standby(): boolean;
  /** Drops the lock (closing its connection releases it) and stops any heartbeat. */
  release(): Promise<void>;
};

/**
 * One chain's writer lock: a session advisory lock on a dedicated connection (not from the
 * pool, so that it lives exactly as long as this process indexes the chain), with
 * - client side: TCP keepalive and a heartbeat query every `heartbeatMs`; an error, an end or a
 *   heartbeat slower than `heartbeatTimeoutMs` aborts `lost` and destroys the socket;
 * - server side, set for this session only at connection start: `tcp_keepalives_idle/interval/
 *   count` (2 s + 3 × 1 s) and `tcp_user_timeout` (5 s) so that a vanished peer is detected, and
 *   `idle_session_timeout` so that a client that stopped its heartbeats loses the session, and
 *   the lock, even if TCP says nothing. A SIGKILLed process's socket is closed by its kernel, so
 *   the server releases its lock at once.
 */
export function createWriterLock(args: {
  db: Db;
  chainId: number;
  logger: Logger;
  options?: Partial<WriterLockOptions>;
}): WriterLock {
  const { db, chainId } = args;
  const options: WriterLockOptions = { ...defaultWriterLockOptions, ...args.options };
  const logger = args.logger.child({ component: "writer-lock" });
  let client: pg.Client | null = null;
  let clientPid = -1;
  let heartbeat: NodeJS.Timeout | null = null;
  let held: { lockPid: number; lost: AbortController } | null = null;
  let waiting = false;

  const connect = async (): Promise<{ client: pg.Client; pid: number }> => {
    const server = [
      "-c tcp_keepalives_idle=2",
      "-c tcp_keepalives_interval=1",
      "-c tcp_keepalives_count=3",
      "-c tcp_user_timeout=5000",
      `-c idle_session_timeout=${options.serverIdleTimeoutMs}`,
    ].join(" ");
    const c = new pg.Client({
      ...db.options,
      application_name: `${db.options.application_name ?? "tokenmarket"}-writer-lock`,
      keepAlive: true,
      keepAliveInitialDelayMillis: 2000,
      connectionTimeoutMillis: options.heartbeatTimeoutMs * 2,
      options: server,
    });
    c.on("error", (error) => drop(c, `lock connection error: ${error.message}`));
    c.on("end", () => drop(c, "lock connection closed"));
    try {
      await c.connect();
      return { client: c, pid: await sessionPid(c) };
    } catch (error) {
      destroy(c);
      throw error;
    }
  };

  const destroy = (c: pg.Client) => {
    c.removeAllListeners("end");
    c.on("error", () => {});
    // end() would wait for the server's goodbye, which never comes over a cut network.
    c.connection.stream.destroy();
  };

  /** The lock connection is gone (or must be): stop the holder at once. */
  const drop = (c: pg.Client, reason: string) => {
    if (client !== c) return;
    client = null;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    destroy(c);
    if (held) {
      logger.warn({ chain_id: chainId, lock_pid: held.lockPid, reason }, "writer lock lost; writing stops");
      held.lost.abort(new WriterLockLostError(`chain ${chainId}: writer lock lost (${reason})`));
    }
  };

  const startHeartbeat = (c: pg.Client, pid: number) => {
    let inFlight = false;
    heartbeat = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      const timer = setTimeout(
        () => drop(c, `heartbeat unanswered for ${options.heartbeatTimeoutMs} ms`),
        options.heartbeatTimeoutMs,
      );
      writerLockHeld(c, chainId, pid).then(
        (stillHeld) => {
          clearTimeout(timer);
          inFlight = false;
          if (!stillHeld) drop(c, "the lock is no longer granted to this session");
        },
        (error: unknown) => {
          clearTimeout(timer);
          drop(c, `heartbeat failed: ${(error as Error).message}`);
        },
      );
    }, options.heartbeatMs);
    heartbeat.unref();
  };

  const acquire = async (signal: AbortSignal, onStandby?: () => void) => {
    if (held && !held.lost.signal.aborted) return { lockPid: held.lockPid, lost: held.lost.signal };
    held = null;
    const startedAt = Date.now();
    let announced = false;
    waiting = true;
    try {
      while (!signal.aborted) {
        let c = client;
        let pid = -1;
        try {
          if (!c) {
            ({ client: c, pid } = await connect());
            client = c;
            clientPid = pid;
          } else {
            pid = clientPid;
          }
          const locked = await tryWriterLock(c, chainId);
          if (locked && client === c) {
            held = { lockPid: pid, lost: new AbortController() };
            startHeartbeat(c, pid);
            logger.info(
              { chain_id: chainId, lock_pid: pid, waited_ms: Date.now() - startedAt },
              `writer lock taken for chain ${chainId}`,
            );
            return { lockPid: pid, lost: held.lost.signal };
          }
          if (!announced) {
            announced = true;
            onStandby?.();
            logger.info({ chain_id: chainId }, `standby for chain ${chainId}: another indexer holds it`);
          }
          await sleep(options.pollMs, signal).catch(() => {});
        } catch (error) {
          if (c) drop(c, (error as Error).message);
          if (signal.aborted) break;
          // A database outage: the standby (or would-be writer) keeps trying, without an error.
          logger.warn(
            { chain_id: chainId, error: (error as Error).message, retry_in_ms: options.reconnectMs },
            "writer lock connection failed; trying again",
          );
          await sleep(options.reconnectMs, signal).catch(() => {});
        }
      }
      return null;
    } finally {
      waiting = false;
    }
  };

  const claim = async (q: Queryable): Promise<Writer> => {
    const h = held;
    if (!h || h.lost.signal.aborted)
      throw new WriterLockLostError(`chain ${chainId}: the writer lock is not held`);
    const epoch = await claimWriterEpoch(q, chainId, h.lockPid);
    if (epoch === undefined)
      throw new WriterLockLostError(`chain ${chainId}: the writer lock was lost before the claim`);
    logger.info({ chain_id: chainId, epoch, lock_pid: h.lockPid }, "writer epoch claimed");
    const lockPid = h.lockPid;
    return {
      chainId,
      epoch,
      lockPid,
      lost: h.lost.signal,
      fence: async (client) => {
        if (h.lost.signal.aborted) throw h.lost.signal.reason;
        if (!(await fenceWriterEpoch(client, chainId, lockPid, epoch))) {
          throw new WriterLockLostError(
            `chain ${chainId}: writer epoch ${epoch} no longer holds the chain; the write is rolled back`,
          );
        }
      },
    };
  };

  return {
    acquire,
    claim,
    standby: () => waiting,
    release: async () => {
      const c = client;
      const h = held;
      held = null;
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = null;
      client = null;
      h?.lost.abort(new WriterLockLostError(`chain ${chainId}: writer lock released`));
      if (!c) return;
      c.removeAllListeners("end");
      c.on("error", () => {});
      // Closing the session releases the lock; a dead connection is destroyed instead.
      await Promise.race([c.end(), sleep(options.heartbeatTimeoutMs)]).catch(() => {});
      c.connection.stream.destroy();
    },
  };
}
