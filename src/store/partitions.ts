/**
 * The partitions of the time-partitioned tables (migration 011: `swaps`, `candles_1m`,
 * `token_usd_candles_5m`), `retained_from` and `pool_last_swaps`: reading the partitions from the
 * catalog, creating a period's partition (moving its rows out of the DEFAULT partition), dropping
 * an expired one, and what the reads need to know about what was dropped.
 *
 * DDL takes locks that readers queue behind, so every statement here runs with a short
 * `lock_timeout`: a lock not granted in time is a `LockNotAvailable` error and the caller tries
 * again later, rather than an API stalled behind a long transaction.
 */
import { type Db, type DbClient, iso, type Queryable, withTransaction } from "./db.js";
import {
  defaultPartitionName,
  type Period,
  partitionName,
  RANGE_TABLES,
  type RangeTable,
} from "./partition-plan.js";

/** SQLSTATE lock_not_available: a lock_timeout expired. */
const LOCK_NOT_AVAILABLE = "55P03";

/** True when `error` is a lock_timeout that expired (try again later). */
export const isLockTimeout = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;

/** A partition of a range-partitioned table with its bounds (ms). */
export type Partition = Period & { table: RangeTable; name: string };

/** What the catalog says of the range tables: their period partitions and how many rows their DEFAULT holds. */
export type PartitionCatalog = { partitions: Partition[]; partitioned: Set<RangeTable["parent"]> };

/**
 * The partitions of the range tables, from the catalog. Tables that are not partitioned (a database
 * before migration 011) are left out of `partitioned`; partitions with other bounds than plain
 * [from, to) times (MINVALUE, a DEFAULT) are not listed.
 */
export async function loadPartitions(db: Queryable): Promise<PartitionCatalog> {
  const { rows } = await db.query<{ parent: string; name: string; lower: Date | null; upper: Date | null }>(
    `SELECT p.relname AS parent, c.relname AS name, m[1]::timestamptz AS lower, m[2]::timestamptz AS upper
     FROM unnest($1::text[]) AS t(parent)
     JOIN pg_class p ON p.oid = to_regclass(t.parent) AND p.relkind = 'p'
     LEFT JOIN pg_inherits i ON i.inhparent = p.oid
     LEFT JOIN pg_class c ON c.oid = i.inhrelid
     LEFT JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid), '^FOR VALUES FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)$') AS m ON true`,
    [RANGE_TABLES.map((t) => t.parent)],
  );
  const byParent = new Map(RANGE_TABLES.map((t) => [t.parent as string, t]));
  const partitions: Partition[] = [];
  const partitioned = new Set<RangeTable["parent"]>();
  for (const r of rows) {
    const table = byParent.get(r.parent);
    if (!table) continue;
    partitioned.add(table.parent);
    if (r.lower === null || r.upper === null) continue;
    partitions.push({ table, name: r.name, from: r.lower.getTime(), to: r.upper.getTime() });
  }
  return { partitions: partitions.sort((a, b) => a.from - b.from), partitioned };
}

/** The names of `names` that exist as tables. */
export async function existingTables(db: Queryable, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const { rows } = await db.query<{ name: string }>(
    "SELECT n AS name FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL",
    [[...names]],
  );
  return new Set(rows.map((r) => r.name));
}

/** The starts (ms) of the periods of `table` that rows in its DEFAULT partition belong to. */
export async function periodsInDefault(db: Queryable, table: RangeTable): Promise<number[]> {
  const { rows } = await db.query<{ start: Date }>(
    `SELECT DISTINCT date_bin($1::interval, ${table.key}, timestamptz '1970-01-05 00:00:00+00') AS start
     FROM ${defaultPartitionName(table)} ORDER BY 1`,
    [`${table.widthMs / 1000} seconds`],
  );
  return rows.map((r) => r.start.getTime());
}

/**
 * Creates the partition of `table` for `period` and attaches it: the rows of the period that the
 * DEFAULT partition holds are moved into it first. A new table attached (rather than CREATE TABLE
 * … PARTITION OF) locks the parent only against other DDL, so inserts and reads go on; the DEFAULT
 * partition is locked for the check that it holds no row of the period. False when the partition
 * exists already.
 */
export async function createPartition(
  db: Db,
  table: RangeTable,
  period: Period,
  lockTimeoutMs: number,
): Promise<boolean> {
  const name = partitionName(table, period.from);
  return withTransaction(db, async (client) => {
    await setLockTimeout(client, lockTimeoutMs);
    // Serialises the upkeep of several processes (an indexer and its standby).
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [PARTITIONS_LOCK, 0]);
    if ((await existingTables(client, [name])).size > 0) return false;
    const from = iso(period.from);
    const to = iso(period.to);
    await client.query(
      `CREATE TABLE ${name} (LIKE ${table.parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`,
    );
    await client.query(
      `WITH moved AS (
         DELETE FROM ${defaultPartitionName(table)} WHERE ${table.key} >= $1 AND ${table.key} < $2 RETURNING *
       )
       INSERT INTO ${name} SELECT * FROM moved`,
      [from, to],
    );
    // Literals: the bounds of ATTACH PARTITION cannot be parameters.
    await client.query(
      `ALTER TABLE ${table.parent} ATTACH PARTITION ${name} FOR VALUES FROM (${client.escapeLiteral(from)}) TO (${client.escapeLiteral(to)})`,
    );
    return true;
  });
}

/**
 * Drops an expired partition and records where the table's history now starts. For `swaps`, the
 * swaps of each pool's latest block of swaps in it are kept in `pool_last_swaps` first (a
 * rollback may need a pool's state from before the retained swaps). Partitions must be dropped
 * oldest first.
 */
export async function dropPartition(db: Db, partition: Partition, lockTimeoutMs: number): Promise<void> {
  await withTransaction(db, async (client) => {
    await setLockTimeout(client, lockTimeoutMs);
    await client.query("SELECT pg_advisory_xact_lock($1, $2)", [PARTITIONS_LOCK, 0]);
    if ((await existingTables(client, [partition.name])).size === 0) return;
    if (partition.table.parent === "swaps") await keepLastSwaps(client, partition.name);
    await client.query(`DROP TABLE ${partition.name}`);
    await client.query(
      `INSERT INTO retained_from (relation, since) VALUES ($1, $2)
       ON CONFLICT (relation) DO UPDATE SET since = greatest(retained_from.since, EXCLUDED.since)`,
      [partition.table.parent, iso(partition.to)],
    );
  });
}

/** Any fixed number: the advisory lock that serialises the partitions' DDL. */
const PARTITIONS_LOCK = 727_011;

async function setLockTimeout(client: DbClient, ms: number): Promise<void> {
  await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(ms))}`);
}

/**
 * Keeps, per pool, the swaps of its latest block of swaps in the partition about to be dropped,
 * replacing what `pool_last_swaps` held for the pool (older).
 */
async function keepLastSwaps(client: DbClient, partition: string): Promise<void> {
  await client.query(
    `INSERT INTO pool_last_swaps
     SELECT s.* FROM ${partition} s
     JOIN (SELECT chain_id, pool, max(block_number) AS block_number FROM ${partition} GROUP BY chain_id, pool) l
       ON l.chain_id = s.chain_id AND l.pool = s.pool AND l.block_number = s.block_number
     ON CONFLICT DO NOTHING`,
  );
  await client.query(
    `DELETE FROM pool_last_swaps k
     USING (SELECT chain_id, pool, max(block_number) AS block_number FROM pool_last_swaps GROUP BY chain_id, pool) l
     WHERE k.chain_id = l.chain_id AND k.pool = l.pool AND k.block_number < l.block_number`,
  );
}

/** Deletes the kept swaps above `block` (a rollback: none normally, they are older than the retention). */
export async function deleteLastSwapsAbove(client: Queryable, chainId: number, block: number): Promise<void> {
  await client.query("DELETE FROM pool_last_swaps WHERE chain_id = $1 AND block_number > $2", [
    chainId,
    block,
  ]);
}

/** The statement of loadRetainedFrom; an answer's read snapshot runs it with its first one. */
export const RETAINED_FROM_SQL = "SELECT relation, since FROM retained_from";
type RetainedFromRow = { relation: RangeTable["parent"]; since: Date };

/**
 * retained_from as read by a connection's current read snapshot (withReadSnapshot, in the round
 * trip that takes the snapshot), until that snapshot ends: loadRetainedFrom answers from it
 * instead of another round trip (candles rolled up from minutes, trades pages).
 */
const snapshotRetainedFrom = new WeakMap<object, readonly RetainedFromRow[]>();

/** Remembers (rows) or forgets (null) what `client`'s read snapshot holds in retained_from. */
export function holdRetainedFrom(client: object, rows: readonly RetainedFromRow[] | null): void {
  if (rows === null) snapshotRetainedFrom.delete(client);
  else snapshotRetainedFrom.set(client, rows);
}

/** Where each retained table's history starts (ms): rows before it were dropped. Absent: nothing dropped. */
export async function loadRetainedFrom(db: Queryable): Promise<Map<RangeTable["parent"], number>> {
  const rows = snapshotRetainedFrom.get(db) ?? (await db.query<RetainedFromRow>(RETAINED_FROM_SQL)).rows;
  return new Map(rows.map((r) => [r.relation, r.since.getTime()]));
}

/**
 * Bytes on disk of each table of `roots` with all its partitions and indexes
 * (pg_total_relation_size over its partition tree), by root.
 */
export async function partitionTreeBytes(
  db: Queryable,
  roots: readonly string[],
): Promise<Map<string, number>> {
  const { rows } = await db.query<{ root: string; bytes: string }>(
    `SELECT t.root, sum(pg_total_relation_size(p.relid))::text AS bytes
     FROM unnest($1::text[]) AS t(root)
     CROSS JOIN LATERAL pg_partition_tree(t.root::regclass) p
     GROUP BY t.root`,
    [[...roots]],
  );
  return new Map(rows.map((r) => [r.root, Number(r.bytes)]));
}

/**
 * Vacuums and analyses a table outside any transaction: a DEFAULT partition whose rows were moved
 * out keeps their dead space (and misleading statistics) until then.
 */
export async function vacuumTable(db: Db, name: string): Promise<void> {
  await db.query(`VACUUM (ANALYZE) ${name}`);
}
