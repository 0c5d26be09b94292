/**
 * The market queries on a busy pair: ≥ 1,000,000 synthetic swaps of a USDC/WETH pool over about
 * 90 days, inserted straight into a scratch database (generate_series), then priced and
 * aggregated by the pricing stage's own code path (its catch-up of stored blocks: per-block USD
 * routing, swap USD values, 1m/1h/1d candles, 5m/1h USD series, prices, statistics). Times:
 * - the pricing of the stored swaps (swaps/s);
 * - one day of 1-minute candles (`getPairCandles`, 1,440 candles), 5-minute candles of a week,
 *   4-hour candles of 90 days, and 4-hour and daily candles of 90 days in USD beside the token ones;
 * - 90 days of the hourly line chart (`getTokenLineChart`, 2,160 points) and of the deprecated
 *   hourly USD candles (`getTokenUsdCandles`);
 * - the same day of 1-minute candles and 90 days of the line chart through the HTTP API
 *   (`GET /api/v1/candles`, `GET /v1/tokens/line-chart` of createApiServer with its answer cache
 *   off, so every request reaches Postgres), one request at a time, the answer read and parsed;
 * - one slide of the 24-hour statistics (`refreshStats`).
 * Baselines in the same database and the same rounds: a `SELECT 1` round trip, bare primary-key
 * range reads of the rows the queries start from (1,440 1-minute candles, 2,160 hourly series
 * rows; no arithmetic, roll-up or gap-filling), and an HTTP round trip to a bare Fastify
 * hello-world. The queries and the baselines are sampled interleaved, one of each per round, so
 * that a busy machine slows them alike; a ratio is a median over the baseline's median.
 *
 *   npx tsx bench/market.ts                                  embedded Postgres in a temporary folder
 *   DATABASE_URL=postgres://… npx tsx bench/market.ts        a scratch database on that server
 *   BENCH_MARKET_SWAPS=200000 npx tsx bench/market.ts        fewer swaps
 */
import { pathToFileURL } from "node:url";
import { getPairCandles, getTokenLineChart, getTokenUsdCandles } from "../src/api/charts.js";
import { createApiServer } from "../src/api/server.js";
import { parseConfig } from "../src/config/load.js";
import type { Hex } from "../src/decode/types.js";
import { createSilentLogger, type Logger } from "../src/internal/logger.js";
import type { IngestBatch } from "../src/model/index.js";
import { createPricing } from "../src/pricing/pricing.js";
import { createApiKey } from "../src/store/api-keys.js";
import { type Db, withTransaction } from "../src/store/db.js";
import { baseOf, startHelloWorld } from "./api.js";
import { openBenchServer, withScratchDb } from "./database.js";

const CHAIN = 990;
const USDC: Hex = "0x00000000000000000000000000000000000000a1";
const WETH: Hex = "0x00000000000000000000000000000000000000b2";
const POOL: Hex = "0x00000000000000000000000000000000000000c3";
const FACTORY: Hex = "0x00000000000000000000000000000000000000fa";
/** Two swaps per block; blocks spaced so that the swaps span at least 90 days (secondsPerBlock). */
const SWAPS_PER_BLOCK = 2;
const START = Date.parse("2025-01-01T00:00:00Z");

/** The baselines, measured beside the queries. */
export type BaselineId = "select1" | "candleRead" | "seriesRead" | "helloWorld";

export type Timing = { runs: number; medianMs: number; p95Ms: number; rows: number };

export type QueryFigures = Timing & {
  /** Through the HTTP API (createApiServer) rather than the store's function. */
  http: boolean;
  /** The query's median over each relevant baseline's median. */
  vs: Partial<Record<BaselineId, number>>;
};

export type MarketBenchResult = {
  swaps: number;
  days: number;
  insertSeconds: number;
  pricing: { seconds: number; swapsPerSecond: number };
  stored: { candles1m: number; candles1h: number; candles1d: number; series5m: number; series1h: number };
  /** Interleaved rounds: one run of every baseline and query per round, after two warm-up runs. */
  rounds: number;
  baselines: Record<BaselineId, Timing & { what: string }>;
  queries: Record<string, QueryFigures>;
  refreshStatsMs: number;
};

/** Generates the busy pair, prices it through the pricing stage and times the queries. */
export async function benchMarket(
  context: { db?: Db; logger?: Logger; swaps?: number } = {},
): Promise<MarketBenchResult> {
  const logger = context.logger ?? createSilentLogger();
  const swaps = context.swaps ?? Number(process.env.BENCH_MARKET_SWAPS ?? 1_000_000);
  const server = await openBenchServer(context.db, logger, "market");
  try {
    return await withScratchDb(server.url, { name: "market", max: 4 }, (db) => run(db, swaps));
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
     VALUES ($1, $2, 'Uniswap V2', 'v2', $5, $3, $4, 3000, 0, 0)`,
    [CHAIN, POOL, USDC, WETH, FACTORY],
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
  await withTransaction(db, async (client) => {
    const batch: IngestBatch = {
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
    };
    await (await pricing.priceBatch(client, batch)).write(client, batch);
  });
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
  const nextDay = new Date(lastDay.getTime() + 86_400_000);
  const lastHour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  const firstHour = new Date(lastHour - (90 * 24 - 1) * 3_600_000);
  const api = await startApi(db, now);
  const hello = await startHelloWorld();
  try {
    const baselines: Record<BaselineId, Measurement & { what: string }> = {
      select1: {
        what: "SELECT 1 (a round trip to Postgres)",
        run: async () => (await db.query("SELECT 1")).rows.length,
      },
      candleRead: {
        what: "bare read of one day of 1-minute candles (primary-key range)",
        run: async () =>
          (
            await db.query(
              `SELECT bucket, open, high, low, close, volume1 FROM candles
               WHERE chain_id = $1 AND pool = $2 AND resolution = 60 AND bucket >= $3 AND bucket < $4
               ORDER BY bucket`,
              [CHAIN, POOL, lastDay.toISOString(), nextDay.toISOString()],
            )
          ).rows.length,
      },
      seriesRead: {
        what: "bare read of 90 days of the hourly USD series (primary-key range)",
        run: async () =>
          (
            await db.query(
              `SELECT bucket, average, close FROM token_usd_candles
               WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket >= $3 AND bucket <= $4
               ORDER BY bucket`,
              [CHAIN, WETH, firstHour.toISOString(), new Date(lastHour).toISOString()],
            )
          ).rows.length,
      },
      helloWorld: {
        what: "HTTP GET of a bare Fastify hello-world",
        run: async () => {
          await getJson(`${hello.base}/`);
          return 1;
        },
      },
    };
    const pairCandles =
      (
        side: 0 | 1,
        intervalSeconds: 60 | 300 | 14_400 | 86_400,
        from: Date,
        to: Date,
        currency: "token" | "usd" = "token",
      ) =>
      async () =>
        (
          await getPairCandles(db, {
            chainId: CHAIN,
            pool: POOL,
            side,
            currency,
            intervalSeconds,
            from,
            to,
            now,
          })
        ).length;
    const candles = ["select1", "candleRead"] as const;
    const series = ["select1", "seriesRead"] as const;
    const queries: Record<string, Measurement & { http?: true; vs: readonly BaselineId[] }> = {
      "getPairCandles 1m × 1 day (1,440)": { vs: candles, run: pairCandles(1, 60, lastDay, nextDay) },
      "getPairCandles 5m × 7 days (2,016, rolled up from 1m)": {
        vs: candles,
        run: pairCandles(0, 300, new Date(lastDay.getTime() - 6 * 86_400_000), nextDay),
      },
      "getPairCandles 4h × 90 days (540, rolled up from 1h)": {
        vs: candles,
        run: pairCandles(1, 14_400, new Date(end - 90 * 86_400_000), new Date(end)),
      },
      "getPairCandles 4h × 90 days in USD (currency=usd, 540, rolled up from 1h)": {
        vs: candles,
        run: pairCandles(1, 14_400, new Date(end - 90 * 86_400_000), new Date(end), "usd"),
      },
      "getPairCandles 1d × 90 days (stored)": {
        vs: candles,
        run: pairCandles(1, 86_400, new Date(end - 90 * 86_400_000), new Date(end)),
      },
      "getPairCandles 1d × 90 days in USD (currency=usd, stored)": {
        vs: candles,
        run: pairCandles(1, 86_400, new Date(end - 90 * 86_400_000), new Date(end), "usd"),
      },
      "getTokenLineChart 90 days (2,160 hours)": {
        vs: series,
        run: async () =>
          (await getTokenLineChart(db, { chainId: CHAIN, token: WETH, days: 90, now })).labels.length,
      },
      "getTokenUsdCandles 60 min × 90 days": {
        vs: series,
        run: async () =>
          (await getTokenUsdCandles(db, { chainId: CHAIN, token: WETH, days: 90, intervalMinutes: 60, now }))
            .length,
      },
      "GET /api/v1/candles 1m × 1 day (1,440)": {
        http: true,
        vs: [...candles, "helloWorld"],
        run: async () => {
          const query = new URLSearchParams({
            pair_id: `${POOL}:${CHAIN}`,
            asset_id: `${WETH}:${CHAIN}`,
            interval: "1m",
            from: lastDay.toISOString(),
            to: nextDay.toISOString(),
          });
          return ((await getJson(`${api.base}/api/v1/candles?${query}`, api.key)) as unknown[]).length;
        },
      },
      "GET /v1/tokens/line-chart 90 days (2,160 hours)": {
        http: true,
        vs: [...series, "helloWorld"],
        run: async () => {
          const query = new URLSearchParams({ tokenId: `${WETH}:${CHAIN}`, days: "90" });
          const chart = (await getJson(`${api.base}/v1/tokens/line-chart?${query}`, api.key)) as {
            labels: unknown[];
          };
          return chart.labels.length;
        },
      },
    };
    const timings = await sampleInterleaved({ ...baselines, ...queries }, ROUNDS);
    const timingOf = (name: string) => timings.get(name) as Timing;
    const round2 = (x: number) => Math.round(x * 100) / 100;
    const rounded = (t: Timing): Timing => ({ ...t, medianMs: round2(t.medianMs), p95Ms: round2(t.p95Ms) });
    const baselineFigures = Object.fromEntries(
      Object.entries(baselines).map(([id, b]) => [id, { what: b.what, ...rounded(timingOf(id)) }]),
    ) as MarketBenchResult["baselines"];
    const queryFigures = Object.fromEntries(
      Object.entries(queries).map(([name, q]) => {
        const timing = timingOf(name);
        const vs = Object.fromEntries(
          q.vs.map((id) => [id, round2(timing.medianMs / timingOf(id).medianMs)]),
        );
        return [name, { ...rounded(timing), http: q.http ?? false, vs }];
      }),
    );

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
      rounds: ROUNDS,
      baselines: baselineFigures,
      queries: queryFigures,
      refreshStatsMs,
    };
  } finally {
    await Promise.all([api.close(), hello.close()]);
  }
}

/** Rounds of the interleaved sampling: every query and baseline once per round. */
const ROUNDS = 50;

/** Something timed: resolves to the rows (candles, points) it answered. */
type Measurement = { run(): Promise<number> };

/**
 * Times every measurement `rounds` times, interleaved (one run of each per round, the order
 * rotating from round to round), after two warm-up runs of each; median and 95th percentile in
 * ms (unrounded), and the rows answered.
 */
async function sampleInterleaved(
  measurements: Record<string, Measurement>,
  rounds: number,
): Promise<Map<string, Timing>> {
  const entries = Object.entries(measurements);
  const samples = entries.map(() => [] as number[]);
  const rows = entries.map(() => 0);
  for (let warmUp = 0; warmUp < 2; warmUp++) {
    for (const [i, [, m]] of entries.entries()) rows[i] = await m.run();
  }
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < entries.length; k++) {
      const i = (round + k) % entries.length;
      const started = performance.now();
      rows[i] = await (entries[i] as [string, Measurement])[1].run();
      (samples[i] as number[]).push(performance.now() - started);
    }
  }
  return new Map(
    entries.map(([name], i) => {
      const ms = (samples[i] as number[]).sort((a, b) => a - b);
      const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] as number;
      return [name, { runs: rounds, medianMs: at(0.5), p95Ms: at(0.95), rows: rows[i] as number }];
    }),
  );
}

/**
 * The API on the benchmark's database, listening on a free local port, with its answer cache
 * off (every request reaches Postgres), its clock at the benchmark's `now`, a key and a rate
 * limit that the sampling never reaches.
 */
async function startApi(db: Db, now: Date): Promise<{ base: string; key: string; close(): Promise<void> }> {
  const config = parseConfig({
    devnet: { enabled: false },
    api: { rateLimit: { max: 100_000_000, windowMs: 60_000 }, demoKey: false },
    chains: [
      {
        id: CHAIN,
        name: "bench",
        rpc: ["http://127.0.0.1:9"],
        dexes: [{ name: "Uniswap V2", protocol: "v2", factory: FACTORY, fee: 3000 }],
        referenceTokens: { stablecoins: [USDC], wrappedNative: WETH },
      },
    ],
  });
  const logger = createSilentLogger();
  const { key } = await createApiKey(db, "bench-market");
  const app = createApiServer({
    config,
    db,
    logger,
    now: () => now,
    answerCacheTtlMs: 0,
    balanceReader: async () => {
      throw new Error("bench/market reads no wallet balances");
    },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  return { base: baseOf(app), key, close: () => app.close() };
}

/** GETs `url` and parses its JSON answer; anything but a 200 fails the benchmark. */
async function getJson(url: string, key?: string): Promise<unknown> {
  const response = await fetch(url, { headers: key ? { "x-api-key": key } : {} });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`bench/market: ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text);
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
