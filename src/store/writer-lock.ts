/**
 * The SQL of a chain's writer lock (the logic, connection and heartbeat are in
 * `src/sync/writer-lock.ts`): the session advisory lock, the `pg_locks` check that it is still
 * granted, and `sync_state`'s writer columns (`writer_epoch`, `writer_lock_pid`, `writer_since`,
 * migration 004) with the fence every write transaction runs first.
 */
import type pg from "pg";
import type { Queryable } from "./db.js";

/**
 * The first key of every chain's writer lock, `pg_advisory_lock(WRITER_LOCK_NAMESPACE, chain_id)`
 * ("tkm1"); the migrator's single-key lock (727001) lives in another key space, so they never meet.
 */
export const WRITER_LOCK_NAMESPACE = 0x746b6d31;

/**
 * The lock's dedicated session: a plain client, not one of the pool's, so that the session (and
 * with it the lock) lives exactly as long as its holder wants.
 */
export type LockSession = pg.Client;

/** The lock of chain `$1` is granted to backend `$2` in this database. */
const HELD = `EXISTS (SELECT 1 FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ${WRITER_LOCK_NAMESPACE} AND l.objid = $1 AND l.objsubid = 2 AND l.pid = $2 AND l.granted)`;

/**
 * The lock session's statements, for the thread that owns the session (src/sync/writer-lock.ts
 * runs it in a worker thread of its own, which takes them as text): its backend pid, one try of
 * the lock (`$1` namespace, `$2` chain), and the heartbeat's check (`$1` chain, `$2` backend pid).
 */
export const LOCK_SESSION_SQL = {
  pid: "SELECT pg_backend_pid() AS pid",
  tryLock: "SELECT pg_try_advisory_lock($1, $2) AS locked",
  held: `SELECT ${HELD} AS held`,
} as const;

/** The backend pid of the session: the holder `pg_locks` shows once it has the lock. */
export async function sessionPid(session: LockSession): Promise<number> {
  const { rows } = await session.query<{ pid: number }>(LOCK_SESSION_SQL.pid);
  return (rows[0] as { pid: number }).pid;
}

/** Tries once, without waiting, to take the chain's writer lock for the session; true when taken. */
export async function tryWriterLock(session: LockSession, chainId: number): Promise<boolean> {
  const { rows } = await session.query<{ locked: boolean }>(LOCK_SESSION_SQL.tryLock, [
    WRITER_LOCK_NAMESPACE,
    chainId,
  ]);
  return rows[0]?.locked === true;
}

/** True while the chain's writer lock is granted to backend `lockPid` (the heartbeat's question). */
export async function writerLockHeld(
  session: LockSession,
  chainId: number,
  lockPid: number,
): Promise<boolean> {
  const { rows } = await session.query<{ held: boolean }>(LOCK_SESSION_SQL.held, [chainId, lockPid]);
  return rows[0]?.held === true;
}

/**
 * Claims a new writer epoch on the chain's sync_state row, if backend `lockPid` holds the chain's
 * lock; waits for a commit in flight of an earlier writer (row lock). Undefined when the lock is
 * not (or no longer) held there, or the row does not exist.
 */
export async function claimWriterEpoch(
  q: Queryable,
  chainId: number,
  lockPid: number,
): Promise<number | undefined> {
  const { rows } = await q.query<{ epoch: number }>(
    `UPDATE sync_state SET writer_epoch = nextval('writer_epochs'), writer_lock_pid = $2, writer_since = now()
     WHERE chain_id = $1 AND ${HELD} RETURNING writer_epoch AS epoch`,
    [chainId, lockPid],
  );
  return rows[0]?.epoch;
}

/**
 * The fence, run first in a transaction that writes the chain: locks the chain's sync_state row
 * if, and only if, `epoch` is still its writer epoch and backend `lockPid` still holds the lock.
 * False when not: the caller must not write.
 */
export async function fenceWriterEpoch(
  client: Queryable,
  chainId: number,
  lockPid: number,
  epoch: number,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `SELECT 1 FROM sync_state WHERE chain_id = $1 AND writer_epoch = $3 AND ${HELD} FOR NO KEY UPDATE`,
    [chainId, lockPid, epoch],
  );
  return rowCount === 1;
}
