import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { dumpRows, insertDumpedRows, listTables, rowsPerPartition } from "../_test/sql.js";
import { ingestSyntheticChain, prepareSyntheticChain } from "../_test/synthetic-chain.js";
import { createSyntheticMarket } from "../_test/synthetic-market.js";
import { migrate } from "./migrate.js";
import { periodStart, RANGE_TABLES } from "./partition-plan.js";

const CHAIN = 911;
/** A Monday: the history's weeks are the weekly partitions' weeks. */
const START = Date.parse("2021-03-01T00:00:00Z");
const DAY = 86_400_000;
const DAYS = 9;
const LAST_BEFORE = "010_candle_usd.sql";
/**
 * Tables that a later migration empties on purpose, for the pricing to rebuild them from the
 * stored swaps (022 and 024: exact volumes cannot be made from stored doubles; 050: trades valued
 * again, and what their values fed): their rows are compared as 011 left them, before the later
 * migrations run.
 */
const REBUILT_LATER = new Set([
  "candles",
  "token_usd_candles",
  "pricing_sync",
  "pool_trade_buckets",
  "token_trade_buckets",
  "pool_makers",
  "token_makers",
  "pair_windows",
  "token_windows",
  "market_sync",
]);
/** Tables a later migration drops (052: pair_stats and token_stats, moved into the windows' tables). */
const DROPPED_LATER = new Set(["pair_stats", "token_stats"]);

/**
 * The rows of `table` of the current schema that a database at 010 can hold: a windows row of a
 * pool or token without a trade (052: its liquidity only) has no place there, and a series row
 * needs the double sums that 055 dropped.
 */
async function rowsAt010(db: TestDb["db"], table: string): Promise<string[]> {
  const rows = await dumpRows(db, table);
  if (table === "token_usd_candles") {
    // 010 held the double sums (055 drops them): the exact ones read as doubles stand in.
    return rows.map((row) => {
      const r = JSON.parse(row) as { sum_pv_exact: number; sum_v_exact: number };
      return JSON.stringify({ ...r, sum_pv: Number(r.sum_pv_exact), sum_v: Number(r.sum_v_exact) });
    });
  }
  if (table !== "pair_windows" && table !== "token_windows") return rows;
  return rows.filter((row) => (JSON.parse(row) as { first_trade_at: unknown }).first_trade_at !== null);
}

/** The definitions of the keys, indexes and constraints of the tables, partitions left out. */
async function schemaOf(db: TestDb["db"]): Promise<string[]> {
  const { rows } = await db.query<{ def: string }>(
    `SELECT c.relname || ': ' || pg_get_indexdef(i.indexrelid) AS def
     FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relispartition
     UNION ALL
     SELECT c.relname || ': ' || pg_get_constraintdef(k.oid)
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relispartition
     UNION ALL
     SELECT c.relname || ': ' || a.attnum || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END || COALESCE(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relispartition AND c.relkind IN ('r', 'p')
       AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY 1`,
  );
  return rows.map((r) => r.def);
}

describe("migration 011: the growing tables partitioned in place", () => {
  let source: TestDb;
  let upgraded: TestDb;
  /** Rows of the tables rebuilt later, and of each partition, as 011 left them. */
  const rowsAfter011 = new Map<string, Awaited<ReturnType<typeof dumpRows>>>();
  const partitionsAfter011 = new Map<string, Awaited<ReturnType<typeof rowsPerPartition>>>();

  before(async () => {
    // Nine days of a synthetic market, indexed and priced: swaps, candles, series, prices, statistics.
    source = await createTestDb();
    const market = createSyntheticMarket({ chainId: CHAIN, startTime: START / 1000, tokens: 12, seed: 7 });
    market.trade({ blocks: (DAYS * DAY) / 600_000, swapsPerBlock: 2.5, blockSeconds: 600 });
    const end = new Date(START + DAYS * DAY);
    await prepareSyntheticChain(source.db, CHAIN, 1);
    await ingestSyntheticChain(
      source.db,
      market.pricing(() => end),
      market.chain,
      { batchSize: () => 60 },
    );

    // The same rows in a database at version 010, which is then migrated.
    upgraded = await createTestDb({ empty: true });
    await migrate(upgraded.db, { until: LAST_BEFORE });
    // chains first: everything else refers to it.
    const tables = (await listTables(upgraded.db)).sort(
      (a, b) => Number(b === "chains") - Number(a === "chains"),
    );
    for (const table of tables) {
      if (DROPPED_LATER.has(table)) continue;
      await insertDumpedRows(upgraded.db, table, await rowsAt010(source.db, table));
    }
    // Up to 011 only: later migrations (013: indexes) are not what this test is about.
    const applied = await migrate(upgraded.db, { until: "011_partitions.sql" });
    assert.deepEqual(applied, ["011_partitions.sql"], "only 011 runs on a database at 010");
    for (const table of REBUILT_LATER) {
      rowsAfter011.set(table, await dumpRows(upgraded.db, table));
    }
    for (const table of RANGE_TABLES) {
      partitionsAfter011.set(table.parent, await rowsPerPartition(upgraded.db, table.parent));
    }
    // Then the later ones, as an upgrade to the current version runs them (the schema compared below).
    await migrate(upgraded.db);
  });
  after(async () => {
    await source?.drop();
    await upgraded?.drop();
  });

  it("keeps every row of every table", async () => {
    const tables = await listTables(upgraded.db);
    let swaps = 0;
    for (const table of tables) {
      const expected = await rowsAt010(source.db, table);
      if (REBUILT_LATER.has(table)) {
        // 011 kept every row; the later migration emptied the table for the pricing to rebuild.
        assert.equal(rowsAfter011.get(table)?.length, expected.length, `${table}: every row kept by 011`);
        assert.ok(expected.length > 0, `${table} has rows`);
        assert.deepEqual(await dumpRows(upgraded.db, table), [], `${table}: emptied for its rebuild`);
        continue;
      }
      const actual = await dumpRows(upgraded.db, table);
      assert.equal(actual.length, expected.length, `${table}: every row kept`);
      assert.deepEqual(actual, expected, `${table}: every column of every row`);
      if (table === "swaps") swaps = actual.length;
    }
    assert.ok(swaps > DAYS * 200, `${swaps} swaps over ${DAYS} days`);
    for (const table of ["candles", "token_usd_candles", "token_prices", "pool_price_state"]) {
      assert.ok(tables.includes(table), `${table} is compared`);
    }
  });

  it("leaves the schema of a fresh install", async () => {
    assert.deepEqual(await schemaOf(upgraded.db), await schemaOf(source.db));
  });

  it("puts each day (week) in its partition, none in the DEFAULT ones", async () => {
    for (const table of RANGE_TABLES) {
      const rows = partitionsAfter011.get(table.parent) ?? new Map<string, number>();
      assert.equal(
        rows.get(`${table.parent}_default`),
        undefined,
        `${table.parent}: the DEFAULT partition is empty`,
      );
      const periods = Math.ceil((START + DAYS * DAY - periodStart(table, START)) / table.widthMs);
      assert.equal(rows.size, periods, `${table.parent}: ${periods} partitions hold the ${DAYS} days`);
      const total = [...rows.values()].reduce((a, b) => a + b, 0);
      assert.ok(total > 0, `${table.parent} has rows`);
    }
    // And the partitions of the current period and the three after it exist for new rows.
    for (const table of RANGE_TABLES) {
      const { rows } = await upgraded.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = $1::regclass`,
        [table.parent],
      );
      assert.ok(
        (rows[0]?.n ?? 0) >= Math.ceil(DAYS / (table.widthMs / DAY)) + 4 + 1,
        `${table.parent}: ahead and DEFAULT`,
      );
    }
  });
});
