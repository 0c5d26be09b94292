/**
 * Reads over a primary and its streaming replicas (the routing, health and lag logic are in
 * `src/api/read-replicas.ts`): WAL positions and replay status, and the read-only snapshot an
 * API answer is read in, opened together with `sync_state` so the answer is labelled with what
 * the answering database holds.
 */
import type pg from "pg";
import { checkOut, type Db, type DbClient, type Deadline, type Queryable } from "./db.js";
import { holdRetainedFrom, RETAINED_FROM_SQL } from "./partitions.js";

type SyncStateRow = {
  chain_id: number;
  indexed_block: number;
  indexed_block_time: Date | null;
  off_canonical: string | null;
};

/** The primary's current WAL position (text, e.g. `0/3000148`). */
export async function currentWalLsn(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
  return rows[0]?.lsn as string;
}

/** A database's replay as a standby sees it. */
export type ReplayStatus = {
  /** In recovery (a standby); false on a primary, or a standby that was promoted. */
  standby: boolean;
  /**
   * Bytes of WAL between `primaryLsn` and the last replayed position, as text (≤ 0: caught up);
   * null when the primary's position is unknown or nothing was replayed.
   */
  behind: string | null;
  /** Seconds since the last replayed transaction committed on the primary; null when none yet. */
  age: number | null;
};

/** The replay status of the database behind `db`, measured against the primary's `primaryLsn`. */
export async function replayStatus(db: Queryable, primaryLsn: string | null): Promise<ReplayStatus> {
  const { rows } = await db.query<ReplayStatus>(
    `SELECT pg_is_in_recovery() AS standby,
       pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::float8::text AS behind,
       extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 AS age`,
    [primaryLsn],
  );
  return rows[0] ?? { standby: false, behind: null, age: null };
}

/** A chain's checkpoint as the snapshot sees it, and its off-canonical mark (setOffCanonical). */
export type SnapshotSyncState = {
  chainId: number;
  indexedBlock: number;
  indexedBlockTime: Date | null;
  offCanonical: string | null;
};

/**
 * Runs `fn` in one read-only REPEATABLE READ transaction of a connection of `db`, with the
 * `sync_state` of every chain read by the statement that takes the snapshot (one round trip), so
 * both see the same data; `retained_from` is read in that round trip too, for loadRetainedFrom. Committed when `fn` resolves (its value returned without waiting for
 * the COMMIT), rolled back when it throws; a connection that cannot commit or even roll back is
 * dropped, not pooled. Without parallel workers (SET LOCAL, in the
 * same round trip): the answers' statements are index walks of a few milliseconds, and starting
 * a worker alone took 5–8 ms (search over 200,000 tokens: 14 ms with one, 6 without). With a
 * `deadline`, every wait of the read ends by then (checkOut).
 */
export async function withReadSnapshot<T>(
  db: Db,
  fn: (client: DbClient, states: SnapshotSyncState[]) => Promise<T>,
  deadline?: Deadline,
): Promise<T> {
  const checkedOut = await checkOut(db, deadline);
  const { client } = checkedOut;
  let broken: Error | undefined;
  let handedOff = false;
  try {
    const results = (await client.query(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT chain_id, indexed_block, indexed_block_time, off_canonical FROM sync_state; ${RETAINED_FROM_SQL}; SET LOCAL max_parallel_workers_per_gather = 0`,
    )) as unknown as pg.QueryResult[];
    const states = ((results[1]?.rows ?? []) as SyncStateRow[]).map((row) => ({
      chainId: row.chain_id,
      indexedBlock: row.indexed_block,
      indexedBlockTime: row.indexed_block_time,
      offCanonical: row.off_canonical,
    }));
    holdRetainedFrom(client, results[2]?.rows ?? []);
    let value: T;
    try {
      value = await fn(client, states);
    } finally {
      holdRetainedFrom(client, null);
    }
    // The value does not wait for COMMIT's round trip (a read-only snapshot has nothing to make
    // durable): the connection goes back to the pool once it has committed, or is dropped when
    // it could not; anything sent on it later queues behind the COMMIT.
    handedOff = true;
    client.query("COMMIT").then(
      () => checkedOut.release(),
      (e: unknown) => checkedOut.release(e instanceof Error ? e : new Error(String(e))),
    );
    return value;
  } catch (error) {
    await client.query("ROLLBACK").catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw error;
  } finally {
    if (!handedOff) checkedOut.release(broken);
  }
}
