import { Worker } from "node:worker_threads";
import { backoffDelayMs } from "../internal/backoff.js";
import { WriterLockLostError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { sleep } from "../rpc/retry.js";
import type { Db, Queryable } from "../store/db.js";
import { claimWriterEpoch, fenceWriterEpoch, WRITER_LOCK_NAMESPACE } from "../store/writer-lock.js";
import {
  type LockThreadData,
  type LockThreadMessage,
  lockThreadUrl,
  type WriterLockOptions,
} from "./writer-lock-thread.js";

export type { WriterLockOptions } from "./writer-lock-thread.js";

/**
 * The connection settings of the pool, as plain values a worker thread can be given (the pool's
 * type parsers and any function stay behind: the lock session needs none).
 */
function connectionOf(db: Db, role: string): LockThreadData["connection"] {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(db.options)) {
    if (["string", "number", "boolean"].includes(typeof value)) out[key] = value;
    else if (key === "ssl" && value && typeof value === "object") {
      // Callbacks (checkServerIdentity…) cannot cross to the thread: the rest of the TLS settings
      // do, so the lock session is never opened in clear where the pool's are not.
      out[key] = Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v !== "function"));
    }
  }
  out.application_name = `${db.options.application_name ?? "tokenmarket"}-${role}`;
  return out;
}

export const defaultWriterLockOptions: WriterLockOptions = {
  pollMs: 1000,
  heartbeatMs: 1000,
  heartbeatTimeoutMs: 3000,
  serverIdleTimeoutMs: 6000,
  reconnectMs: 250,
  reconnectMaxMs: 2000,
  stallMs: 120_000,
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

/** The writer a chain's indexer holds, if any (`current`), and what it needs of it. */
export type WriterSlot = {
  current: Writer | null;
  /** The writer's fence; refused with WriterLockLostError while there is none. */
  fence(client: Queryable): Promise<void>;
  /** Throws WriterLockLostError when there is no writer or its lock was lost. */
  throwIfLost(): void;
  /** True when there is no writer or its lock was lost. */
  lost(): boolean;
};

export function createWriterSlot(chainId: number): WriterSlot {
  const slot: WriterSlot = {
    current: null,
    fence: (client) =>
      slot.current
        ? slot.current.fence(client)
        : Promise.reject(new WriterLockLostError(`chain ${chainId}: no writer lock`)),
    throwIfLost: () => {
      if (slot.lost()) throw new WriterLockLostError(`chain ${chainId}: writer lock lost`);
    },
    lost: () => slot.current?.lost.aborted !== false,
  };
  return slot;
}

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
 * pool, so that it lives exactly as long as this process indexes the chain), owned by a worker
 * thread of its own (writer-lock-thread.ts: the indexer's long synchronous computations must not
 * silence the heartbeat), with
 * - client side: TCP keepalive and a heartbeat query every `heartbeatMs`; an error, an end or a
 *   heartbeat slower than `heartbeatTimeoutMs` aborts `lost` (as soon as this thread runs) and
 *   destroys the socket; so does the indexer's thread not running for `stallMs`;
 * - server side, set for this session only at connection start: `tcp_keepalives_idle/interval/
 *   count` (2 s + 3 × 1 s) and `tcp_user_timeout` (5 s) so that a vanished peer is detected, and
 *   `idle_session_timeout` so that a client that stopped its heartbeats loses the session, and
 *   the lock, even if TCP says nothing. A SIGKILLed process's socket is closed by its kernel, so
 *   the server releases its lock at once.
 * Writes stay safe while this thread is busy and has not yet seen a `lost`: every write
 * transaction's fence checks in the database that the lock's backend still holds it.
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
  let thread: Worker | null = null;
  /** Lock threads that failed in a row (each restarted after a longer wait). */
  let threadFailures = 0;
  let alive: NodeJS.Timeout | null = null;
  let held: { lockPid: number; lost: AbortController } | null = null;
  let waiting = false;
  /** The acquire in progress: told of the thread's answers. */
  let listener: ((message: LockThreadMessage) => void) | null = null;
  let onReleased: (() => void) | null = null;

  const lose = (reason: string) => {
    if (alive) clearInterval(alive);
    alive = null;
    const h = held;
    if (!h || h.lost.signal.aborted) return;
    logger.warn({ chain_id: chainId, lock_pid: h.lockPid, reason }, "writer lock lost; writing stops");
    h.lost.abort(new WriterLockLostError(`chain ${chainId}: writer lock lost (${reason})`));
  };

  const start = (): Worker => {
    if (thread) return thread;

    const workerData: LockThreadData = {
      lockThread: true,
      connection: connectionOf(db, "writer-lock"),
      chainId,
      namespace: WRITER_LOCK_NAMESPACE,
      options,
    };
    const t = new Worker(lockThreadUrl(import.meta.url), { workerData });
    // The lock must not keep a stopping process alive; release() ends the thread anyway.
    t.unref();
    t.on("message", (message: LockThreadMessage) => {
      if (message.type === "lost") lose(message.reason);
      else if (message.type === "released") onReleased?.();
      else listener?.(message);
    });
    t.on("error", (error) => {
      logger.error({ chain_id: chainId, error: error.message }, "writer lock thread failed");
      thread = null;
      lose(`lock thread failed: ${error.message}`);
      threadFailures++;
      listener?.({
        type: "connectFailed",
        error: error.message,
        retryInMs: backoffDelayMs(threadFailures, [options.reconnectMs, options.reconnectMaxMs]),
      });
    });
    t.on("exit", () => {
      if (thread === t) thread = null;
      lose("lock thread exited");
    });
    thread = t;
    return t;
  };

  const acquire = async (signal: AbortSignal, onStandby?: () => void) => {
    if (held && !held.lost.signal.aborted) return { lockPid: held.lockPid, lost: held.lost.signal };
    held = null;
    const startedAt = Date.now();
    waiting = true;
    try {
      return await new Promise<{ lockPid: number; lost: AbortSignal } | null>((resolve) => {
        const t = start();
        const onAbort = () => {
          listener = null;
          thread?.postMessage({ type: "cancel" });
          resolve(null);
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        listener = (message) => {
          if (message.type === "standby") {
            onStandby?.();
            logger.info({ chain_id: chainId }, `standby for chain ${chainId}: another indexer holds it`);
          } else if (message.type === "connectFailed") {
            // A database outage: the standby (or would-be writer) keeps trying, without an error.
            logger.warn(
              { chain_id: chainId, error: message.error, retry_in_ms: message.retryInMs },
              "writer lock connection failed; trying again",
            );
            if (!thread) {
              // The thread itself is gone: a new one, after the wait it was told.
              setTimeout(() => {
                if (listener) start().postMessage({ type: "acquire" });
              }, message.retryInMs).unref();
            }
          } else if (message.type === "held") {
            threadFailures = 0;
            listener = null;
            signal.removeEventListener("abort", onAbort);
            held = { lockPid: message.pid, lost: new AbortController() };
            // The indexer's thread says it runs; silent for `stallMs`, the lock thread lets go.
            alive = setInterval(() => thread?.postMessage({ type: "alive" }), options.heartbeatMs);
            alive.unref();
            logger.info(
              { chain_id: chainId, lock_pid: message.pid, waited_ms: Date.now() - startedAt },
              `writer lock taken for chain ${chainId}`,
            );
            resolve({ lockPid: message.pid, lost: held.lost.signal });
          }
        };
        t.postMessage({ type: "acquire" });
      });
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
      const h = held;
      held = null;
      if (alive) clearInterval(alive);
      alive = null;
      listener = null;
      h?.lost.abort(new WriterLockLostError(`chain ${chainId}: writer lock released`));
      const t = thread;
      thread = null;
      if (!t) return;
      // The thread ends the session (which releases the lock), then is stopped.
      await Promise.race([
        new Promise<void>((resolve) => {
          onReleased = resolve;
          t.postMessage({ type: "release" });
        }),
        sleep(options.heartbeatTimeoutMs * 2),
      ]);
      onReleased = null;
      await t.terminate();
    },
  };
}
