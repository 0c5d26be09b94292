/**
 * The market queries on a busy pair: ≥ 1,000,000 synthetic swaps of a USDC/WETH pool over about
 * 90 days, inserted straight into a scratch database (generate_series), then priced and
 * aggregated by the pricing stage's own code path (its catch-up of stored blocks: per-block USD
 * routing, swap USD values, 1m/1h/1d candles, 5m/1h USD series, prices, statistics). Times:
 * - the pricing of the stored swaps (swaps/s);
 * - one day of 1-minute candles (`getPairCandles`, 1,440 candles), 5-minute candles of a week,
 *   4-hour candles of 90 days;
 * - 90 days of the hourly line chart (`getTokenLineChart`, 2,160 points) and of the deprecated
 *   hourly USD candles (`getTokenUsdCandles`);
 * - one slide of the 24-hour statistics (`refreshStats`).
 *
 *   npx tsx bench/market.ts                                  embedded Postgres in a temporary folder
 *   DATABASE_URL=postgres://… npx tsx bench/market.ts        a scratch database on that server
 *   BENCH_MARKET_SWAPS=200000 npx tsx bench/market.ts        fewer swaps
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { freePort } from "../src/_test/free-port.js";
import type { Hex } from "../src/decode/types.js";
import { createSilentLogger, type Logger } from "../src/internal/logger.js";
import { createPricing } from "../src/pricing/pricing.js";
import { createDb, type Db, withTransaction } from "../src/store/db.js";
import { startEmbeddedPostgres } from "../src/store/embedded-postgres.js";
import { getPairCandles, getTokenLineChart, getTokenUsdCandles } from "../src/store/market-queries.js";
import { migrate } from "../src/store/migrate.js";

const CHAIN = 990;
const USDC: Hex = "0x00000000000000000000000000000000000000a1";
const WETH: Hex = "0x00000000000000000000000000000000000000b2";
const POOL: Hex = "0x00000000000000000000000000000000000000c3";
/** Two swaps per block; blocks spaced so that the swaps span at least 90 days (secondsPerBlock). */
const SWAPS_PER_BLOCK = 2;
const START = Date.parse("2025-01-01T00:00:00Z");

export type QueryFigures = { runs: number; medianMs: number; p95Ms: number; rows: number };

export type MarketBenchResult = {
  swaps: number;
  days: number;
  insertSeconds: number;
  pricing: { seconds: number; swapsPerSecond: number };
  stored: { candles1m: number; candles1h: number; candles1d: number; series5m: number; series1h: number };
  queries: Record<string, QueryFigures>;
  refreshStatsMs: number;
};

/** Generates the busy pair, prices it through the pricing stage and times the queries. */
export async function benchMarket(
  context: { db?: Db; logger?: Logger; swaps?: number } = {},
): Promise<MarketBenchResult> {
  const logger = context.logger ?? createSilentLogger();
  const swaps = context.swaps ?? Number(process.env.BENCH_MARKET_SWAPS ?? 1_000_000);
  const server = await openServer(context.db, logger);
  try {
    return await withScratchDb(server.url, (db) => run(db, swaps));
  } finally {
    await server.close();
  }
}

/** Seconds between blocks so that the swaps span about 90 days. */
const secondsPerBlock = (swaps: number) => Math.max(1, Math.ceil((90 * 86_400 * SWAPS_PER_BLOCK) / swaps));

async function run(db: Db, swaps: number): Promise<MarketBenchResult> {
  const blockSeconds = secondsPerBlock(swaps);
  const blocks = Math.ceil(swaps / SWAPS_PER_BLOCK);
  const end = START + (blocks + 1) * blockSeconds * 1000;
  const now = new Date(end + 60_000);

  let started = performance.now();
  await db.query("INSERT INTO chains (chain_id, name, genesis_hash) VALUES ($1, 'bench', '0x00')", [CHAIN]);
  await db.query(
    `INSERT INTO tokens (chain_id, address, name, symbol, decimals) VALUES ($1, $2, 'USD Coin', 'USDC', 6), ($1, $3, 'Wrapped Ether', 'WETH', 18)`,
    [CHAIN, USDC, WETH],
  );
  await db.query(
    `INSERT INTO pools (chain_id, address, dex, protocol, factory, token0, token1, fee, created_block, created_log_index)
     VALUES ($1, $2, 'Uniswap V2', 'v2', '0x00000000000000000000000000000000000000fa', $3, $4, 3000, 0, 0)`,
    [CHAIN, POOL, USDC, WETH],
  );
  // A WETH price wandering around 2,000 USDC; trade sizes from 0.05 to 4 WETH; a third buy WETH.
  // Reserves follow the price with 3M USDC on one side (a deep pool: every trade qualifies).
  await db.query(
    `INSERT INTO swaps (chain_id, block_number, log_index, block_hash, block_time, tx_hash, tx_index, pool, sender,
       recipient, amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1, price)
     SELECT $1, 1 + i / ${SWAPS_PER_BLOCK}, i % ${SWAPS_PER_BLOCK}, NULL,
       $3::timestamptz + (1 + i / ${SWAPS_PER_BLOCK}) * $4 * interval '1 second',
       '0x' || lpad(to_hex(i), 64, '0'), 0, $2, $2, $2,
       CASE WHEN buy THEN usdc ELSE 0 END, CASE WHEN buy THEN 0 ELSE weth END,
       CASE WHEN buy THEN 0 ELSE usdc END, CASE WHEN buy THEN weth ELSE 0 END,
       3000000000000, round(3e24 / p)::numeric, 1 / p
     FROM generate_series(0, $5::int - 1) AS i,
       LATERAL (SELECT 2000 * exp(0.3 * sin(i / 50000.0) + 0.02 * sin(i / 97.0)) AS p, i % 3 = 0 AS buy,
         0.05 + (i::bigint * 7919 % 1000) / 256.0 AS w) x,
       LATERAL (SELECT round(w * 1e18)::numeric AS weth, round(w * p * 1e6)::numeric AS usdc) y`,
    [CHAIN, POOL, new Date(START).toISOString(), blockSeconds, swaps],
  );
  await db.query("ANALYZE swaps");
  const insertSeconds = (performance.now() - started) / 1000;

  // The pricing's own path: a batch arriving after blocks stored unpriced prices them first.
  const pricing = createPricing({
    config: {
      pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 },
      chains: [
        {
          id: CHAIN,
          referenceTokens: { stablecoins: [USDC], wrappedNative: WETH, wrappedBtc: [], others: [] },
        },
      ],
    },
    logger: createSilentLogger(),
    now: () => now,
  });
  started = performance.now();
  await withTransaction(db, (client) =>
    pricing.afterBatch(client, {
      chainId: CHAIN,
      fromBlock: blocks + 1,
      toBlock: blocks + 1,
      toBlockTime: new Date(end),
      source: "replay",
      newPools: [],
      newTokens: [],
      swaps: [],
      poolEvents: [],
      poolStates: [],
    }),
  );
  const pricingSeconds = (performance.now() - started) / 1000;
  await db.query("ANALYZE candles; ANALYZE token_usd_candles");

  const count = async (sql: string) => (await db.query<{ n: number }>(sql, [CHAIN])).rows[0]?.n ?? 0;
  const stored = {
    candles1m: await count("SELECT count(*)::int AS n FROM candles WHERE chain_id = $1 AND resolution = 60"),
    candles1h: await count(
      "SELECT count(*)::int AS n FROM candles WHERE chain_id = $1 AND resolution = 3600",
    ),
    candles1d: await count(
      "SELECT count(*)::int AS n FROM candles WHERE chain_id = $1 AND resolution = 86400",
    ),
    series5m: await count(
      "SELECT count(*)::int AS n FROM token_usd_candles WHERE chain_id = $1 AND resolution = 300",
    ),
    series1h: await count(
      "SELECT count(*)::int AS n FROM token_usd_candles WHERE chain_id = $1 AND resolution = 3600",
    ),
  };

  const lastDay = new Date(Math.floor(end / 86_400_000) * 86_400_000 - 86_400_000);
  const queries: Record<string, QueryFigures> = {
    "getPairCandles 1m × 1 day (1,440)": await time(() =>
      getPairCandles(db, {
        chainId: CHAIN,
        pool: POOL,
        side: 1,
        intervalSeconds: 60,
        from: lastDay,
        to: new Date(lastDay.getTime() + 86_400_000),
        now,
      }),
    ),
    "getPairCandles 5m × 7 days (2,016, rolled up from 1m)": await time(() =>
      getPairCandles(db, {
        chainId: CHAIN,
        pool: POOL,
        side: 0,
        intervalSeconds: 300,
        from: new Date(lastDay.getTime() - 6 * 86_400_000),
        to: new Date(lastDay.getTime() + 86_400_000),
        now,
      }),
    ),
    "getPairCandles 4h × 90 days (540, rolled up from 1h)": await time(() =>
      getPairCandles(db, {
        chainId: CHAIN,
        pool: POOL,
        side: 1,
        intervalSeconds: 14_400,
        from: new Date(end - 90 * 86_400_000),
        to: new Date(end),
        now,
      }),
    ),
    "getTokenLineChart 90 days (2,160 hours)": await time(async () => {
      const chart = await getTokenLineChart(db, { chainId: CHAIN, token: WETH, days: 90, now });
      return chart.labels;
    }),
    "getTokenUsdCandles 60 min × 90 days": await time(() =>
      getTokenUsdCandles(db, { chainId: CHAIN, token: WETH, days: 90, intervalMinutes: 60, now }),
    ),
  };
  started = performance.now();
  await pricing.refreshStats(db, CHAIN, now);
  const refreshStatsMs = Math.round(performance.now() - started);

  return {
    swaps,
    days: Math.round(((end - START) / 86_400_000) * 10) / 10,
    insertSeconds: Math.round(insertSeconds * 10) / 10,
    pricing: {
      seconds: Math.round(pricingSeconds * 10) / 10,
      swapsPerSecond: Math.round(swaps / pricingSeconds),
    },
    stored,
    queries,
    refreshStatsMs,
  };
}

/** Runs `fn` a few times after a warm-up; median and 95th percentile in ms, and the rows answered. */
async function time(fn: () => Promise<readonly unknown[]>, runs = 30): Promise<QueryFigures> {
  let rows = (await fn()).length;
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    rows = (await fn()).length;
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] as number) * 100) / 100;
  return { runs, medianMs: at(0.5), p95Ms: at(0.95), rows };
}

async function openServer(
  db: Db | undefined,
  logger: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  const given = (db as unknown as { options?: { connectionString?: string } } | undefined)?.options
    ?.connectionString;
  const url = given ?? process.env.DATABASE_URL;
  if (url) return { url, close: async () => {} };
  const dataDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-bench-market-"));
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger, ephemeral: true });
  return {
    url: server.url,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function withScratchDb<T>(url: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const name = `tokenmarket_bench_market_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const scratchUrl = new URL(url);
  scratchUrl.pathname = `/${name}`;
  const db = createDb({ url: scratchUrl.toString(), max: 4, applicationName: "tokenmarket-bench-market" });
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.end().catch(() => {});
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  benchMarket({ logger: createSilentLogger() }).then(
    (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
    (error: unknown) => {
      process.stderr.write(`bench/market failed: ${(error as Error).stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
