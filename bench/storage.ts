/**
 * `npm run bench:storage`: what the tables that grow with the trades cost on disk, and what the
 * time partitions (migration 011) do for the trades' paging and for a retention.
 *
 * 1. Bytes per million swaps: a synthetic market (src/_test/synthetic-market.ts: 1,000 tokens,
 *    1,334 pools, trades drawn by a Zipf-like law) at a busy chain's rate, a million swaps a day
 *    (139 swaps in each 12-second block), for BENCH_STORAGE_HOURS hours (default 3), through the
 *    indexer's commit path with pricing into a fresh database. Then the bytes of swaps, candles
 *    and USD series with their indexes: as written (the pricing updates each swap row with its USD
 *    figures in the batch's transaction, so the heap holds a dead version of every swap until
 *    vacuumed), and after VACUUM FULL (live rows only, the floor).
 * 2. Paging and retention: BENCH_STORAGE_DAYS days (default 90) × 15,000 swaps over 2,000 pools,
 *    written by SQL into daily partitions; 20 pages of 100 trades of a busy, a middling and a quiet
 *    pool through findSwaps (time windows sized by the pool's last day, as the API reads them,
 *    src/store/swaps.ts), beside the same pages read by the
 *    one statement without time bounds of before; then the upkeep with a 30-day retention: its
 *    time, the partitions it drops, the bytes before and after.
 * 3. Migration 011's rate: BENCH_STORAGE_MIGRATION_DAYS days (default 30) × 15,000 swaps written
 *    into a database at version 010, then migrated (the swaps copied into their partitions, keys
 *    and indexes built): the time, in swaps per second.
 *
 * Writes bench/results/storage.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import * as path from "node:path";
import { fillSwapsHistory, findSwapsUnbounded, treeSizes } from "../src/_test/sql.js";
import { ingestSyntheticChain, prepareSyntheticChain } from "../src/_test/synthetic-chain.js";
import { createSyntheticMarket } from "../src/_test/synthetic-market.js";
import { createSilentLogger } from "../src/internal/logger.js";
import type { Db } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";
import { partitionTreeBytes, vacuumTable } from "../src/store/partitions.js";
import { findSwaps, type SwapRow, type TradePosition } from "../src/store/swaps.js";
import { ensureBatchPartitions, runStorageUpkeep } from "../src/sync/storage-upkeep.js";
import { openBenchServer, withScratchDb } from "./database.js";

const root = path.resolve(import.meta.dirname, "..");
const hours = Number(process.env.BENCH_STORAGE_HOURS ?? 3);
const days = Number(process.env.BENCH_STORAGE_DAYS ?? 90);
const migrationDays = Number(process.env.BENCH_STORAGE_MIGRATION_DAYS ?? 30);
const say = (line: string) => process.stderr.write(`${line}\n`);
const DAY = 86_400_000;
/** A Monday, long past: the history's days and weeks are whole partitions. */
const START = Date.parse("2025-03-03T00:00:00Z");
const CHAIN = 1;

const TABLES = [
  "swaps",
  "candles_1m",
  "candles_1h",
  "candles_1d",
  "token_usd_candles_5m",
  "token_usd_candles_1h",
] as const;

type Sizes = Record<(typeof TABLES)[number], { rows: number; tableBytes: number; indexBytes: number }>;

async function sizesOf(db: Db): Promise<Sizes> {
  const out: Partial<Sizes> = {};
  for (const table of TABLES) {
    const s = await treeSizes(db, table);
    out[table] = { rows: s.rows, tableBytes: s.tableBytes, indexBytes: s.indexBytes };
  }
  return out as Sizes;
}

const total = (s: Sizes) => Object.values(s).reduce((a, t) => a + t.tableBytes + t.indexBytes, 0);

async function bytesPerMillion(db: Db) {
  const market = createSyntheticMarket({ chainId: CHAIN, startTime: START / 1000, tokens: 1000, seed: 17 });
  market.trade({ blocks: hours * 300, swapsPerBlock: 1_000_000 / 7200, blockSeconds: 12 });
  const end = new Date(START + hours * 3_600_000);
  await prepareSyntheticChain(db, CHAIN, 1);
  const started = performance.now();
  await ingestSyntheticChain(
    db,
    market.pricing(() => end),
    market.chain,
    { batchSize: () => 25 },
  );
  const ingestSeconds = (performance.now() - started) / 1000;
  const written = await sizesOf(db);
  for (const table of TABLES) await db.query(`VACUUM FULL ${table}`);
  const compact = await sizesOf(db);
  const swaps = written.swaps.rows;
  const perMillion = (bytes: number) => Math.round((bytes / swaps) * 1_000_000);
  return {
    hours,
    swaps,
    pools: market.pools.length,
    ingestSeconds: Math.round(ingestSeconds),
    written,
    compact,
    perMillionSwaps: { written: perMillion(total(written)), compact: perMillion(total(compact)) },
    perSwap: {
      swapsWritten: Math.round((written.swaps.tableBytes + written.swaps.indexBytes) / swaps),
      swapsCompact: Math.round((compact.swaps.tableBytes + compact.swaps.indexBytes) / swaps),
    },
  };
}

/** Median of the per-page times (ms) of paging `pages` pages of 100 through `read`. */
async function pageTimes(
  read: (
    before: TradePosition | null,
  ) => Promise<Pick<SwapRow, "block_number" | "log_index" | "block_time">[]>,
  pages: number,
): Promise<{ medianMs: number; maxMs: number; rows: number }> {
  const times: number[] = [];
  let before: TradePosition | null = null;
  let rows = 0;
  for (let p = 0; p < pages; p++) {
    const t = performance.now();
    const page = await read(before);
    times.push(performance.now() - t);
    rows += Math.min(page.length, 100);
    if (page.length <= 100) break;
    const last = page[99] as SwapRow;
    before = { block: Number(last.block_number), logIndex: last.log_index, time: last.block_time.getTime() };
  }
  times.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    medianMs: round(times[Math.floor(times.length / 2)] as number),
    maxMs: round(times.at(-1) as number),
    rows,
  };
}

async function pagingAndRetention(db: Db) {
  const end = START + days * DAY;
  const perDay = 15_000;
  const poolCount = 2000;
  await prepareSyntheticChain(db, CHAIN, 1);
  await ensureBatchPartitions(db, { from: START, to: end - 1 });
  const started = performance.now();
  await fillSwapsHistory(db, { chainId: CHAIN, from: START, days, perDay, pools: poolCount });
  await db.query("ANALYZE swaps");
  const fillSeconds = Math.round((performance.now() - started) / 1000);
  const pool = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
  const counts = await db.query<{ pool: string; n: number }>(
    "SELECT pool, count(*)::int AS n FROM swaps WHERE pool = ANY($1::text[]) GROUP BY pool",
    [[pool(0), pool(40), pool(1500)]],
  );
  const trades = new Map(counts.rows.map((r) => [r.pool, r.n]));
  const paging: Record<string, unknown> = {};
  for (const [name, address] of [
    ["busy", pool(0)],
    ["middling", pool(40)],
    ["quiet", pool(1500)],
  ] as const) {
    // As the API reads a page: the first window sized by the pool's trades of the last 24 hours.
    const { rows: lastDay } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM swaps WHERE chain_id = $1 AND pool = $2 AND block_time >= $3",
      [CHAIN, address, new Date(end - DAY).toISOString()],
    );
    const tradesPerDay = lastDay[0]?.n ?? 0;
    const windows = (before: TradePosition | null) =>
      findSwaps(db, { chainId: CHAIN, pool: address, before, limit: 101, now: end, tradesPerDay });
    const unbounded = (before: TradePosition | null) =>
      findSwapsUnbounded(db, { chainId: CHAIN, pool: address, before, limit: 101 });
    // A warm-up pass of each, then the measured ones, alternating.
    await pageTimes(windows, 20);
    await pageTimes(unbounded, 20);
    const a = await pageTimes(windows, 20);
    const b = await pageTimes(unbounded, 20);
    paging[name] = { trades: trades.get(address) ?? 0, windows: a, unbounded: b };
    say(
      `bench:storage: ${name} pool, ${trades.get(address)} trades: ${a.medianMs} ms a page (${b.medianMs} unbounded)`,
    );
  }
  const before = (await partitionTreeBytes(db, ["swaps"])).get("swaps") ?? 0;
  const partitionsBefore = (await treeSizes(db, "swaps")).partitions;
  const upkeepStarted = performance.now();
  const result = await runStorageUpkeep(
    db,
    {
      retention: { swapsDays: 30, candles1mDays: null, series5mDays: null },
      partitionsAhead: 3,
      upkeepIntervalMs: 3_600_000,
    },
    end,
  );
  const upkeepMs = Math.round(performance.now() - upkeepStarted);
  await vacuumTable(db, "swaps_default");
  const after = (await partitionTreeBytes(db, ["swaps"])).get("swaps") ?? 0;
  return {
    days,
    swapsPerDay: perDay,
    pools: poolCount,
    fillSeconds,
    partitions: partitionsBefore,
    paging,
    retention: {
      days: 30,
      upkeepMs,
      dropped: result.dropped.length,
      partitionsAfter: (await treeSizes(db, "swaps")).partitions,
      bytesBefore: before,
      bytesAfter: after,
    },
  };
}

async function migration(db: Db) {
  await prepareSyntheticChain(db, CHAIN, 1);
  await fillSwapsHistory(db, {
    chainId: CHAIN,
    from: START,
    days: migrationDays,
    perDay: 15_000,
    pools: 2000,
  });
  await db.query("VACUUM ANALYZE swaps");
  const swaps = (await treeSizes(db, "swaps")).rows;
  const started = performance.now();
  const applied = await migrate(db);
  const seconds = (performance.now() - started) / 1000;
  return {
    days: migrationDays,
    swaps,
    applied,
    seconds: Math.round(seconds * 10) / 10,
    swapsPerSecond: Math.round(swaps / seconds),
  };
}

async function main() {
  const logger = createSilentLogger();
  const server = await openBenchServer(undefined, logger, "storage");
  try {
    say(`bench:storage: ${hours} h of a market at a million swaps a day, with pricing…`);
    const bytes = await withScratchDb(server.url, { name: "storage", max: 4 }, bytesPerMillion);
    say(
      `bench:storage: ${bytes.swaps} swaps, ${(bytes.perMillionSwaps.written / 1e9).toFixed(2)} GB per million as written, ${(bytes.perMillionSwaps.compact / 1e9).toFixed(2)} GB compact`,
    );
    say(`bench:storage: ${days} days × 15,000 swaps in daily partitions…`);
    const paging = await withScratchDb(server.url, { name: "paging", max: 4 }, pagingAndRetention);
    say(`bench:storage: migration 011 over ${migrationDays} days × 15,000 swaps…`);
    const migrated = await withScratchDb(
      server.url,
      { name: "migration", max: 2, until: "010_candle_usd.sql" },
      migration,
    );
    say(`bench:storage: migrated ${migrated.swaps} swaps in ${migrated.seconds} s`);
    const result = {
      meta: {
        date: new Date().toISOString(),
        machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`,
        node: process.version,
      },
      bytes,
      paging,
      migration: migrated,
    };
    mkdirSync(path.join(root, "bench", "results"), { recursive: true });
    writeFileSync(
      path.join(root, "bench", "results", "storage.json"),
      `${JSON.stringify(result, null, 2)}\n`,
    );
    say("bench:storage: wrote bench/results/storage.json");
  } finally {
    await server.close();
  }
}

await main();
