/**
 * The thread that owns a chain's writer-lock session (src/sync/writer-lock.ts).
 *
 * Why a thread of its own: the lock is a session advisory lock whose session the server ends
 * after `idle_session_timeout` without a heartbeat. On the indexer's thread, any synchronous stretch
 * longer than that (pricing a backfill batch of 50 blocks over 20,000 pools took 14–20 s in one
 * call) silenced the heartbeat: the server ended the session, the lock was lost, the chain
 * restarted, reloaded its market and stalled again — a live service thrashing on its own lock.
 * Here the heartbeat has an event loop that nothing else uses, so the lock survives the indexer's
 * long computations and still goes within seconds with a dead connection or network. A hung
 * indexer is still noticed: the indexer's thread says it is alive every heartbeat, and after
 * `stallMs` without that word the session is ended (a standby takes over).
 *
 * This module is the thread's code: writer-lock.ts starts it as a worker (lockThreadUrl), which
 * runs it when it is loaded on a thread that is not the main one. It runs the statements of
 * src/store/writer-lock.ts (`LOCK_SESSION_SQL`) on a connection of its own. Messages:
 *
 * - in: `acquire` (take the lock, polling while another session holds it), `cancel` (stop
 *   trying), `alive` (the indexer's thread is running), `release` (end the session);
 * - out: `standby` (once per acquire), `held` { pid }, `lost` { reason }, `connectFailed`
 *   { error, retryInMs }, `released`.
 */
import { isMainThread, type MessagePort, parentPort, workerData } from "node:worker_threads";
import pg from "pg";
import { LOCK_SESSION_SQL } from "../store/writer-lock.js";

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
  /**
   * Waits before connecting again after the lock connection failed (a database outage): doubled
   * at each failure in a row, up to `reconnectMaxMs`. The cap bounds how long after the database
   * is back the chain stays without its writer (and /readyz not ready): kept at a few seconds.
   */
  reconnectMs: number;
  reconnectMaxMs: number;
  /**
   * The indexer's thread silent this long (a hang, not a computation: pricing a large batch takes
   * seconds to tens of seconds in one synchronous call) ends the lock session, so that a standby
   * takes over from a hung process.
   */
  stallMs: number;
};

/** What the thread is started with. */
export type LockThreadData = {
  /** Marks the worker as this lock's thread (the module runs its work only then). */
  lockThread: true;
  /** The pool's connection settings as plain values (see connectionOf in writer-lock.ts). */
  connection: pg.ClientConfig;
  chainId: number;
  namespace: number;
  options: WriterLockOptions;
};

/** What the thread is told. */
export type LockThreadCommand =
  | { type: "acquire" }
  | { type: "cancel" }
  | { type: "alive" }
  | { type: "release" };

/** What the thread tells. */
export type LockThreadMessage =
  | { type: "standby" }
  | { type: "held"; pid: number }
  | { type: "lost"; reason: string }
  | { type: "connectFailed"; error: string; retryInMs: number }
  | { type: "released" };

/**
 * The URL a Worker runs this module from, started from the module at `from` (an import.meta.url
 * beside this file): this very file, .js in a compiled build. From the sources (.ts, under tsx),
 * a worker does not get tsx's loader from the process (Node 20 runs `--import` hooks on the main
 * thread only): it starts from a one-line module that registers tsx, then imports this one.
 */
export function lockThreadUrl(from: string): URL {
  if (!from.endsWith(".ts")) return new URL("./writer-lock-thread.js", from);
  const thread = new URL("./writer-lock-thread.ts", from).href;
  const boot = `import { register } from ${JSON.stringify(import.meta.resolve("tsx/esm/api"))}; register(); await import(${JSON.stringify(thread)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`);
}

/** The thread's work: the lock session of one chain, driven by `port`'s commands. */
export function runLockThread(port: MessagePort, data: LockThreadData): void {
  const { connection, chainId, namespace, options } = data;
  const sql = LOCK_SESSION_SQL;
  let client: pg.Client | null = null;
  let pid = -1;
  let held = false;
  let heartbeat: NodeJS.Timeout | null = null;
  let acquiring = 0;
  let lastAlive = Date.now();

  const post = (message: LockThreadMessage) => port.postMessage(message);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

  const destroy = (c: pg.Client) => {
    c.removeAllListeners("end");
    c.on("error", () => {});
    // end() would wait for the server's goodbye, which never comes over a cut network.
    c.connection.stream.destroy();
  };

  // The session is gone (or must be): the holder stops at once.
  const drop = (c: pg.Client, reason: string) => {
    if (client !== c) return;
    client = null;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    destroy(c);
    if (held) {
      held = false;
      post({ type: "lost", reason });
    }
  };

  const connect = async (): Promise<{ c: pg.Client; p: number }> => {
    const server = [
      "-c tcp_keepalives_idle=2",
      "-c tcp_keepalives_interval=1",
      "-c tcp_keepalives_count=3",
      "-c tcp_user_timeout=5000",
      `-c idle_session_timeout=${options.serverIdleTimeoutMs}`,
    ].join(" ");
    const c = new pg.Client({
      ...connection,
      keepAlive: true,
      keepAliveInitialDelayMillis: 2000,
      connectionTimeoutMillis: options.heartbeatTimeoutMs * 2,
      options: server,
    });
    c.on("error", (error) => drop(c, `lock connection error: ${error.message}`));
    c.on("end", () => drop(c, "lock connection closed"));
    try {
      await c.connect();
      const { rows } = await c.query<{ pid: number }>(sql.pid);
      return { c, p: (rows[0] as { pid: number }).pid };
    } catch (error) {
      destroy(c);
      throw error;
    }
  };

  const startHeartbeat = (c: pg.Client) => {
    let inFlight = false;
    lastAlive = Date.now();
    heartbeat = setInterval(() => {
      const silent = Date.now() - lastAlive;
      if (silent > options.stallMs) {
        drop(c, `the indexer's thread has not run for ${silent} ms`);
        return;
      }
      if (inFlight) return;
      inFlight = true;
      const timer = setTimeout(
        () => drop(c, `heartbeat unanswered for ${options.heartbeatTimeoutMs} ms`),
        options.heartbeatTimeoutMs,
      );
      c.query<{ held: boolean }>(sql.held, [chainId, pid]).then(
        ({ rows }) => {
          clearTimeout(timer);
          inFlight = false;
          if (rows[0]?.held !== true) drop(c, "the lock is no longer granted to this session");
        },
        (error: unknown) => {
          clearTimeout(timer);
          drop(c, `heartbeat failed: ${messageOf(error)}`);
        },
      );
    }, options.heartbeatMs);
  };

  const acquire = async (round: number) => {
    let announced = false;
    let failures = 0;
    while (acquiring === round) {
      let c = client;
      try {
        if (!c) {
          const opened = await connect();
          c = opened.c;
          client = c;
          pid = opened.p;
        }
        const { rows } = await c.query<{ locked: boolean }>(sql.tryLock, [namespace, chainId]);
        if (acquiring !== round) {
          // Cancelled while asking: a lock taken meanwhile is given back with the session.
          if (rows[0]?.locked === true) drop(c, "cancelled");
          return;
        }
        if (rows[0]?.locked === true && client === c) {
          held = true;
          acquiring = 0;
          startHeartbeat(c);
          post({ type: "held", pid });
          return;
        }
        failures = 0;
        if (!announced) {
          announced = true;
          post({ type: "standby" });
        }
        await sleep(options.pollMs);
      } catch (error) {
        if (c) drop(c, messageOf(error));
        if (acquiring !== round) return;
        // A database outage: the standby (or would-be writer) keeps trying, each wait twice the
        // last up to reconnectMaxMs.
        failures++;
        const retryInMs = Math.min(options.reconnectMaxMs, options.reconnectMs * 2 ** (failures - 1));
        post({ type: "connectFailed", error: messageOf(error), retryInMs });
        await sleep(retryInMs);
      }
    }
  };

  const release = async () => {
    acquiring = 0;
    held = false;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    const c = client;
    client = null;
    if (c) {
      c.removeAllListeners("end");
      c.on("error", () => {});
      // Closing the session releases the lock; a dead connection is destroyed instead.
      await Promise.race([c.end(), sleep(options.heartbeatTimeoutMs)]).catch(() => {});
      c.connection.stream.destroy();
    }
    post({ type: "released" });
  };

  let rounds = 0;
  port.on("message", (message: LockThreadCommand) => {
    if (message.type === "alive") lastAlive = Date.now();
    else if (message.type === "acquire") {
      if (acquiring !== 0 || held) return;
      acquiring = ++rounds;
      void acquire(acquiring);
    } else if (message.type === "cancel") acquiring = 0;
    else if (message.type === "release") void release();
  });
}

// Loaded as the lock's worker (not when the main thread imports this module's types or URL).
if (!isMainThread && parentPort && (workerData as { lockThread?: unknown } | null)?.lockThread === true) {
  runLockThread(parentPort, workerData as LockThreadData);
}
