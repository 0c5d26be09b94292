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
 * The code is a CommonJS string run with `new Worker(code, { eval: true })`: the same text under
 * tsx and in a compiled build, no loader needed. It requires only `pg` (its resolved path comes
 * in `workerData`) and runs the statements of src/store/writer-lock.ts (`LOCK_SESSION_SQL`),
 * which come in `workerData` too. Messages:
 *
 * - in: `acquire` (take the lock, polling while another session holds it), `cancel` (stop
 *   trying), `alive` (the indexer's thread is running), `release` (end the session);
 * - out: `standby` (once per acquire), `held` { pid }, `lost` { reason }, `connectFailed`
 *   { error, retryInMs }, `released`.
 */
export const WRITER_LOCK_THREAD = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const pg = require(workerData.pgPath);
const { connection, chainId, namespace, sql, options } = workerData;

let client = null;
let pid = -1;
let held = false;
let heartbeat = null;
let acquiring = 0;
let lastAlive = Date.now();

const post = (message) => parentPort.postMessage(message);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const destroy = (c) => {
  c.removeAllListeners("end");
  c.on("error", () => {});
  // end() would wait for the server's goodbye, which never comes over a cut network.
  c.connection.stream.destroy();
};

// The session is gone (or must be): the holder stops at once.
const drop = (c, reason) => {
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

const connect = async () => {
  const server = [
    "-c tcp_keepalives_idle=2",
    "-c tcp_keepalives_interval=1",
    "-c tcp_keepalives_count=3",
    "-c tcp_user_timeout=5000",
    "-c idle_session_timeout=" + options.serverIdleTimeoutMs,
  ].join(" ");
  const c = new pg.Client({
    ...connection,
    keepAlive: true,
    keepAliveInitialDelayMillis: 2000,
    connectionTimeoutMillis: options.heartbeatTimeoutMs * 2,
    options: server,
  });
  c.on("error", (error) => drop(c, "lock connection error: " + error.message));
  c.on("end", () => drop(c, "lock connection closed"));
  try {
    await c.connect();
    const { rows } = await c.query(sql.pid);
    return { c, p: rows[0].pid };
  } catch (error) {
    destroy(c);
    throw error;
  }
};

const startHeartbeat = (c) => {
  let inFlight = false;
  lastAlive = Date.now();
  heartbeat = setInterval(() => {
    const silent = Date.now() - lastAlive;
    if (silent > options.stallMs) {
      drop(c, "the indexer's thread has not run for " + silent + " ms");
      return;
    }
    if (inFlight) return;
    inFlight = true;
    const timer = setTimeout(
      () => drop(c, "heartbeat unanswered for " + options.heartbeatTimeoutMs + " ms"),
      options.heartbeatTimeoutMs,
    );
    c.query(sql.held, [chainId, pid]).then(
      ({ rows }) => {
        clearTimeout(timer);
        inFlight = false;
        if (rows[0]?.held !== true) drop(c, "the lock is no longer granted to this session");
      },
      (error) => {
        clearTimeout(timer);
        drop(c, "heartbeat failed: " + error.message);
      },
    );
  }, options.heartbeatMs);
};

const acquire = async (round) => {
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
      const { rows } = await c.query(sql.tryLock, [namespace, chainId]);
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
      if (c) drop(c, error.message);
      if (acquiring !== round) return;
      // A database outage: the standby (or would-be writer) keeps trying, each wait twice the
      // last up to reconnectMaxMs.
      failures++;
      const retryInMs = Math.min(options.reconnectMaxMs, options.reconnectMs * 2 ** (failures - 1));
      post({ type: "connectFailed", error: error.message, retryInMs });
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
parentPort.on("message", (message) => {
  if (message.type === "alive") lastAlive = Date.now();
  else if (message.type === "acquire") {
    if (acquiring !== 0 || held) return;
    acquiring = ++rounds;
    void acquire(acquiring);
  } else if (message.type === "cancel") acquiring = 0;
  else if (message.type === "release") void release();
});
`;
