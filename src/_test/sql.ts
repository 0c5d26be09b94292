/**
 * Test-only SQL: the statements tests and their helpers run that production never does (the
 * test databases' administration, whole-table dumps and snapshots that compare two indexes, the
 * read-back of stored swaps against the receipts). Production SQL lives in src/store; test
 * helpers use its functions wherever they run the same statement. Short assertion queries may
 * stay inside *.test.ts files.
 */
import type pg from "pg";
import type { Queryable } from "../store/db.js";
import type { RawAmountsRow } from "../store/swaps.js";

// ---------------------------------------------------------------------------------------------
// Test databases (run on a one-off admin client: CREATE/DROP DATABASE cannot run in a transaction)

/** Creates a database, as a copy of `template` when given. */
export async function createDatabase(admin: pg.Client, name: string, template?: string): Promise<void> {
  await admin.query(
    template === undefined
      ? `CREATE DATABASE ${admin.escapeIdentifier(name)}`
      : `CREATE DATABASE ${admin.escapeIdentifier(name)} TEMPLATE ${admin.escapeIdentifier(template)}`,
  );
}

/** Makes a database the template of the test databases: nobody may connect to it any more. */
export async function markTemplate(admin: pg.Client, name: string): Promise<void> {
  await admin.query(
    `ALTER DATABASE ${admin.escapeIdentifier(name)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`,
  );
}

export async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
}

/** Drops every database whose name starts with `prefix`, templates included. */
export async function dropDatabasesStartingWith(admin: pg.Client, prefix: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE starts_with(datname, $1)",
    [prefix],
  );
  for (const { datname } of rows) {
    const name = admin.escapeIdentifier(datname);
    await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`);
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
  }
}

// ---------------------------------------------------------------------------------------------
// Dumps and snapshots

/** Rows of a chain-keyed table as JSON text: `columns` of the chains' rows in `orderBy` order. */
export async function dumpTable(
  db: Queryable,
  table: string,
  view: { columns: string; orderBy: string },
  chainIds: readonly number[],
): Promise<string[]> {
  const { rows } = await db.query<{ row: string }>(
    `SELECT row_to_json(t)::text AS row FROM (SELECT ${view.columns} FROM ${table} WHERE chain_id = ANY($1::int[]) ORDER BY ${view.orderBy}) t`,
    [[...chainIds]],
  );
  return rows.map((r) => r.row);
}

/** The stored swaps of a chain in [fromBlock, toBlock] with every ingested column, ascending. */
export async function loadStoredSwaps(
  db: Queryable,
  chainId: number,
  range: { fromBlock: number; toBlock: number },
): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT block_number, log_index, block_hash, block_time, tx_hash, tx_index, pool, maker, exchange, sender, recipient,
       amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1, sqrt_price_x96, liquidity, tick, price
     FROM swaps WHERE chain_id = $1 AND block_number BETWEEN $2 AND $3 ORDER BY block_number, log_index`,
    [chainId, range.fromBlock, range.toBlock],
  );
  return rows;
}

/** The USD candle columns of `candles` (migration 010). */
export const CANDLE_USD_COLUMNS = ["open", "high", "low", "close", "volume"].flatMap((field) => [
  `${field}_usd0`,
  `${field}_usd1`,
]);

/**
 * The stored swaps of a chain as the USD candles see them, ascending by (block, log index): raw
 * amounts, the tokens' decimals and the stored USD figures.
 */
export async function loadSwapsWithUsd(
  db: Queryable,
  chainId: number,
): Promise<
  (RawAmountsRow & {
    pool: string;
    block_number: number;
    log_index: number;
    block_time: Date;
    decimals0: number | null;
    decimals1: number | null;
    token0_usd: number | null;
    token1_usd: number | null;
    volume_usd: number | null;
  })[]
> {
  const { rows } = await db.query(
    `SELECT s.pool, s.block_number, s.log_index, s.block_time, s.amount0_in, s.amount1_in, s.amount0_out, s.amount1_out,
       t0.decimals AS decimals0, t1.decimals AS decimals1, s.token0_usd, s.token1_usd, s.volume_usd
     FROM swaps s
     JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
     LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
     LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
     WHERE s.chain_id = $1
     ORDER BY s.block_number, s.log_index`,
    [chainId],
  );
  return rows;
}

/**
 * Turns a database back into one from before migration 010 (the USD candle columns dropped) and
 * applies that migration's file to it, as an upgrade would.
 */
export async function reapplyCandleUsdMigration(db: Queryable, sql: string): Promise<void> {
  await db.query(`ALTER TABLE candles ${CANDLE_USD_COLUMNS.map((c) => `DROP COLUMN ${c}`).join(", ")}`);
  await db.query(sql);
}

/**
 * Every aggregate the pricing stage derives for a chain, as plain sorted rows: what "equal to a
 * fresh index" compares (of the market windows, the 24-hour figures and the liquidity).
 */
export async function snapshotAggregates(db: Queryable, chainId: number): Promise<Record<string, unknown[]>> {
  const q = async (sql: string) => (await db.query(sql, [chainId])).rows;
  return {
    candles: await q(
      `SELECT pool, resolution, bucket, open, high, low, close, open1, high1, low1, close1, volume0, volume1, volume_usd,
         ${CANDLE_USD_COLUMNS.join(", ")}, trades, buys0, first_key, last_key
       FROM candles WHERE chain_id = $1 ORDER BY pool, resolution, bucket`,
    ),
    token_usd_candles: await q(
      `SELECT token, resolution, bucket, open, high, low, close, volume, sum_pv_exact, sum_v_exact, average, first_key, last_key
       FROM token_usd_candles WHERE chain_id = $1 ORDER BY token, resolution, bucket`,
    ),
    token_prices: await q(
      `SELECT token, usd_price, block_number, block_time, provenance FROM token_prices WHERE chain_id = $1 ORDER BY token`,
    ),
    swaps: await q(
      `SELECT block_number, log_index, token0_usd, token1_usd, volume_usd, token0_series_usd, token1_series_usd
       FROM swaps WHERE chain_id = $1 ORDER BY block_number, log_index`,
    ),
    pool_price_state: await q(
      `SELECT pool, token0, token1, reserve0, reserve1, sqrt_price_x96, swap_block, pre_swap_reserve0, pre_swap_reserve1,
         state_block, state_log_index, state_time
       FROM pool_price_state WHERE chain_id = $1 ORDER BY pool`,
    ),
    pair_windows: await q(
      `SELECT pool, volume_usd_24h, liquidity_usd, price_change_24h, buys_24h, sells_24h
       FROM pair_windows WHERE chain_id = $1 ORDER BY pool`,
    ),
    token_windows: await q(
      `SELECT token, price_change_24h, volume_usd_24h, liquidity_usd FROM token_windows WHERE chain_id = $1 ORDER BY token`,
    ),
  };
}

/**
 * Every swap of a chain with its pool's tokens, the raw columns the market windows are computed
 * from (for the independent reference of src/_test/market-reference.ts), ascending by block and
 * log index.
 */
export async function loadSwapsForMarket(db: Queryable, chainId: number): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT s.pool, p.token0, p.token1, s.block_number, s.log_index, s.block_time, s.maker, s.price, s.volume_usd,
       s.token0_series_usd, s.token1_series_usd, s.amount0_in, s.amount1_in, s.amount0_out, s.amount1_out
     FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
     WHERE s.chain_id = $1 ORDER BY s.block_number, s.log_index`,
    [chainId],
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Whole-database copies (the upgrade tests: a database at an older version filled with rows)

/** The tables of the schema (partitioned ones as one table, their partitions left out), by name. */
export async function listTables(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       AND c.relname <> 'schema_migrations'
     ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

/** Every row of `table` as JSON text, in the order of that text (a stable order over all columns). */
export async function dumpRows(db: Queryable, table: string): Promise<string[]> {
  const { rows } = await db.query<{ row: string }>(
    `SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY 1`,
  );
  return rows.map((r) => r.row);
}

/** Inserts rows dumped by dumpRows into `table` (same columns; JSON keeps numeric and float8 exact). */
export async function insertDumpedRows(db: Queryable, table: string, rows: readonly string[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [
    `[${rows.join(",")}]`,
  ]);
}

/** Rows of a partitioned table per partition (those holding rows), by partition name. */
export async function rowsPerPartition(db: Queryable, parent: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ name: string; n: number }>(
    `SELECT tableoid::regclass::text AS name, count(*)::int AS n FROM ${parent} GROUP BY 1`,
  );
  return new Map(rows.map((r) => [r.name, r.n]));
}

// ---------------------------------------------------------------------------------------------
// Storage benchmark (bench/storage.ts)

/** Rows, table bytes (heap, TOAST, maps) and index bytes of a table with all its partitions. */
export async function treeSizes(
  db: Queryable,
  root: string,
): Promise<{ rows: number; tableBytes: number; indexBytes: number; partitions: number }> {
  const { rows } = await db.query<{ table_bytes: string; index_bytes: string; partitions: number }>(
    `SELECT sum(pg_table_size(relid))::text AS table_bytes, sum(pg_indexes_size(relid))::text AS index_bytes,
       (count(*) FILTER (WHERE isleaf))::int AS partitions
     FROM pg_partition_tree($1::regclass)`,
    [root],
  );
  const count = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${root}`);
  return {
    rows: Number(count.rows[0]?.n ?? 0),
    tableBytes: Number(rows[0]?.table_bytes ?? 0),
    indexBytes: Number(rows[0]?.index_bytes ?? 0),
    partitions: rows[0]?.partitions ?? 0,
  };
}

/**
 * Fills `swaps` with `days` × `perDay` synthetic swaps from `from` (ms, a day start) on, blocks
 * 12 s apart, pools drawn from `pools` addresses by a Zipf-like law (pool i about 1 / (i + 1) of
 * the trades), with distinct hashes and senders and every USD column set: the query benchmark's
 * history, written by SQL because the indexer would take hours for it. `firstDay`: the history
 * starts that many days after `from` (its blocks numbered on from there), to write it a day at a time.
 */
export async function fillSwapsHistory(
  db: Queryable,
  options: { chainId: number; from: number; days: number; perDay: number; pools: number; firstDay?: number },
): Promise<void> {
  const perBlock = Math.max(1, Math.round(options.perDay / 7200));
  const first = options.firstDay ?? 0;
  for (let day = first; day < first + options.days; day++) {
    await db.query(
      `INSERT INTO swaps (chain_id, block_number, log_index, block_hash, block_time, tx_hash, tx_index, pool, maker,
         exchange, sender, recipient, amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1, price,
         token0_usd, token1_usd, volume_usd, token0_series_usd, token1_series_usd)
       SELECT $1, b, l, '0x' || md5(b::text) || md5('h' || b), to_timestamp($2::float8 / 1000 + b * 12),
         '0x' || md5(b || '.' || l) || md5(l || '.' || b), l,
         '0x' || lpad(to_hex(floor(exp(random() * ln($5::float8)))::int - 1), 40, '0'),
         '0x' || left(md5(random()::text), 40), '0x' || left(md5('router'), 40), '0x' || left(md5('router'), 40),
         '0x' || left(md5(random()::text), 40),
         floor(random() * 1e21)::numeric, 0, 0, floor(random() * 1e12)::numeric,
         floor(random() * 1e24)::numeric, floor(random() * 1e15)::numeric, random() * 3000,
         random(), random() * 3000, random() * 10000, random(), random() * 3000
       FROM generate_series($3::int, $4::int) AS b, generate_series(0, $6::int - 1) AS l`,
      [options.chainId, options.from, day * 7200, (day + 1) * 7200 - 1, options.pools, perBlock],
    );
  }
}

/** A pool's trades page as read before migration 011: one statement, no time bound. */
export async function findSwapsUnbounded(
  db: Queryable,
  options: {
    chainId: number;
    pool: string;
    before: { block: number; logIndex: number } | null;
    limit: number;
  },
): Promise<{ block_number: number; log_index: number; block_time: Date }[]> {
  const { rows } = await db.query<{ block_number: number; log_index: number; block_time: Date }>(
    `SELECT block_number, log_index, block_time, tx_hash, maker, exchange,
       amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1, token0_usd, token1_usd, volume_usd
     FROM swaps
     WHERE chain_id = $1 AND pool = $2
       AND ($3::bigint IS NULL OR (block_number, log_index) < ($3::bigint, $4::int))
     ORDER BY block_number DESC, log_index DESC
     LIMIT $5`,
    [
      options.chainId,
      options.pool,
      options.before?.block ?? null,
      options.before?.logIndex ?? null,
      options.limit,
    ],
  );
  return rows;
}
