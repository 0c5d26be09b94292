/**
 * The cost of keeping the market windows (5m, 1h, 6h, 24h of every pair and token) current, on
 * the mainnet-shaped synthetic chain (src/shape, docs/SHAPE.md):
 *
 * 1. backfill: the indexer with the pricing indexes `historyBlocks` trading blocks of a profile
 *    (default: Ethereum, 20,000 pools, 6,000 tokens, 300 blocks = one hour at 150 swaps a block);
 * 2. per block: the head then advances one block at a time and the indexer follows it with one
 *    block per batch, as it does live; each batch's "priced batch" log line gives the time spent
 *    on the market windows (fold into minute/hour buckets and makers, recompute the windows of the
 *    pools and tokens traded) and the rows it wrote, beside the whole batch's pricing time;
 * 3. per minute: the clock moves a minute at a time and the windows slide (the pools and tokens
 *    whose trades left a window are recomputed), timed alone.
 *
 *   npm run bench:stats
 *   BENCH_STATS_POOLS=50000 BENCH_STATS_HISTORY=600 BENCH_STATS_BLOCKS=40 npm run bench:stats
 *   BENCH_STATS_SHARE=0 npm run bench:stats     every figure every batch (default: 1000,1000,10000)
 *   DATABASE_URL=postgres://… npm run bench:stats     scratch databases on that server
 *   BENCH_STATS_START=history npm run bench:stats     start after the creation era (below)
 *   BENCH_STATS_VERBOSE=1 npm run bench:stats     the indexer's info log lines on stderr
 *
 * By default the backfill starts at block 0 and so takes in the creation era first (every pool's
 * creation, 500 a block: 2,000 blocks at 10⁶ pools). With BENCH_STATS_START=history the indexer's
 * chain gets `startBlock: creationEraBlocks + 1`, as an operator who sets a recent start block
 * (and as bench/scale-live.ts with BENCH_LIVE_START=history): the pools created before it are
 * found by the factory scan and their states read at the start block (src/sync/factory-scan.ts,
 * src/sync/base-state.ts), then the history blocks are backfilled. The summary's `setup` gives
 * the shape server's start-up and the backfill's seconds.
 *
 * BENCH_STATS_LIMITS (alchemy, the default | infura | none): the shape node's eth_getLogs limits
 * (src/shape/rpc.ts). With the default, a range of up to 2,000 blocks is answered whole: the
 * factory scan's first range over a creation era of 10⁶ pools (blocks 0–2,000) is 10⁶ logs,
 * which the node (in this process) does not answer within the client's 15 s, 8 times before the
 * range is halved. `infura` caps every answer at 10,000 logs, so the scan's ranges shrink at the
 * first refusal:
 *   BENCH_STATS_POOLS=1000000 BENCH_STATS_TOKENS=500000 BENCH_STATS_START=history BENCH_STATS_LIMITS=infura npm run bench:stats
 *
 * Prints a JSON summary and writes it to bench/results/stats.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { pino } from "pino";
import { chainSchema } from "../src/config/schema.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { slideMarketWindows } from "../src/pricing/market-windows.js";
import { createPricing } from "../src/pricing/pricing.js";
import { shapeChainConfig, shapeProfiles } from "../src/shape/profiles.js";
import type { ProviderLimits } from "../src/shape/rpc.js";
import { startShapeServer } from "../src/shape/server.js";
import { getSyncStatus } from "../src/store/chain-state.js";
import { type Db, withTransaction } from "../src/store/db.js";
import { createIndexer } from "../src/sync/indexer.js";
import { openBenchServer, withScratchDb } from "./database.js";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const verbose = process.env.BENCH_STATS_VERBOSE === "1";
const settings = {
  profile: (process.env.BENCH_STATS_PROFILE ?? "ethereum") as keyof typeof shapeProfiles,
  pools: env("BENCH_STATS_POOLS", 20_000),
  tokens: env("BENCH_STATS_TOKENS", 6_000),
  historyBlocks: env("BENCH_STATS_HISTORY", 300),
  liveBlocks: env("BENCH_STATS_BLOCKS", 30),
  slides: env("BENCH_STATS_SLIDES", 10),
  /** "genesis" (default): the backfill from block 0; "history": from the block after the creation era. */
  start: (process.env.BENCH_STATS_START ?? "genesis") as "genesis" | "history",
  /** The shape node's eth_getLogs limits (src/shape/rpc.ts `ProviderLimits`). */
  limits: (process.env.BENCH_STATS_LIMITS ?? "alchemy") as ProviderLimits,
  /** pricing.figuresPerBatch (BENCH_STATS_SHARE=tokens,pools,fromPools; 0: every figure every batch). Default: the configuration's. */
  figuresPerBatch: (() => {
    const [tokens = 1_000, pools = tokens, fromPools = 10_000] = (
      process.env.BENCH_STATS_SHARE ?? "1000,1000,10000"
    )
      .split(",")
      .map(Number);
    return { tokens, pools, fromPools };
  })(),
};

type BatchLine = {
  from_block: number;
  to_block: number;
  swaps: number;
  ms: number;
  market_ms: number;
  market_trades: number;
  market_rows: number;
  market_pools: number;
  market_tokens: number;
  /** Tokens whose USD price moved (their pools' liquidity and their own statistics are refreshed). */
  repriced_tokens?: number;
  /** Milliseconds per step of the pricing (pricing.ts `step`). */
  steps_ms?: Record<string, number>;
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number);
};
const summary = (values: number[]) => ({
  median: Math.round(median(values) * 100) / 100,
  p90: Math.round(percentile(values, 0.9) * 100) / 100,
  max: Math.round(Math.max(0, ...values) * 100) / 100,
});

async function waitIndexed(db: Db, chainId: number, block: number): Promise<void> {
  for (;;) {
    const [status] = await getSyncStatus(db, [chainId]);
    if (status && status.indexedBlock >= block) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main() {
  if (settings.start !== "genesis" && settings.start !== "history") {
    throw new Error(
      `BENCH_STATS_START must be "genesis" or "history", not ${JSON.stringify(settings.start)}`,
    );
  }
  if (!["alchemy", "infura", "none"].includes(settings.limits)) {
    throw new Error(
      `BENCH_STATS_LIMITS must be alchemy, infura or none, not ${JSON.stringify(settings.limits)}`,
    );
  }
  const profile = shapeProfiles[settings.profile];
  let started = performance.now();
  const server = await startShapeServer({
    profile: settings.profile,
    pools: settings.pools,
    tokens: settings.tokens,
    historyBlocks: settings.historyBlocks,
    live: false,
    port: 0,
    limits: settings.limits,
  });
  const serverSeconds = (performance.now() - started) / 1000;
  const u = server.chain.universe;
  const postgres = await openBenchServer(undefined, createSilentLogger(), "stats");
  try {
    const result = await withScratchDb(postgres.url, { name: "stats", max: 6 }, async (db) => {
      const chain = chainSchema.parse({
        ...shapeChainConfig(profile, server.url),
        confirmations: 0,
        pollIntervalMs: 50,
        // BENCH_STATS_START=history: start after the creation era (see the header).
        ...(settings.start === "history" ? { startBlock: u.creationEraBlocks + 1 } : {}),
      });
      const config = {
        chains: [chain],
        pricing: {
          liquidityFloorUsd: 50_000,
          maxDeviation: 0.05,
          figuresPerBatch: settings.figuresPerBatch,
        },
      };
      const blockTime = (n: number) => server.chain.timestamp(n) * 1000;
      const clock = { now: blockTime(server.chain.head()) + 30_000 };
      const lines: BatchLine[] = [];
      const logger = pino(
        { level: "debug" },
        {
          write(line: string) {
            const entry = JSON.parse(line) as { msg?: string; level?: number } & BatchLine;
            if (entry.msg === "priced batch") lines.push(entry);
            // BENCH_STATS_VERBOSE=1: the indexer's info lines on stderr (where the set-up's time goes).
            else if (verbose && (entry.level ?? 0) >= 30) process.stderr.write(line);
          },
        },
      );
      const pricing = createPricing({ config, logger, now: () => new Date(clock.now) });

      // 1. Backfill.
      const head = server.chain.head();
      started = performance.now();
      const backfill = createIndexer({
        config,
        db,
        logger,
        derived: pricing,
        // Batches of a few thousand logs: a long batch holds its transaction open while the routing runs.
        options: { follow: false, progressBar: false, targetLogsPerBatch: 5000 },
      });
      await backfill.start();
      await backfill.done();
      const backfillSeconds = (performance.now() - started) / 1000;
      // Its storage upkeep and health reports stop too (they ran on beside the follower, and
      // wrote to the closed pool at the end: "cannot write the indexer's health report").
      await backfill.stop();
      const backfillLines = lines.splice(0);
      started = performance.now();
      await pricing.refreshStats(db, chain.id, new Date(clock.now));
      const refreshStatsSeconds = (performance.now() - started) / 1000;

      // 2. One block per batch, as when following the head.
      const follower = createIndexer({
        config: { chains: [{ ...chain, maxBlockRange: 1 }] },
        db,
        logger,
        derived: pricing,
        options: { follow: true, progressBar: false, initialBlockRange: 1 },
      });
      await follower.start();
      try {
        for (let i = 1; i <= settings.liveBlocks; i++) {
          server.chain.advance(1);
          clock.now = blockTime(head + i) + 1000;
          await waitIndexed(db, chain.id, head + i);
        }
      } finally {
        await follower.stop();
      }
      const live = lines.splice(0).filter((l) => l.to_block - l.from_block === 0 && l.market_trades > 0);

      // 3. The minute slide, alone (its own transaction).
      const slides: { ms: number; pools: number; tokens: number; rows: number }[] = [];
      for (let i = 0; i < settings.slides; i++) {
        clock.now += 60_000;
        started = performance.now();
        const work = await withTransaction(db, (client) => slideMarketWindows(client, chain.id, clock.now));
        slides.push({
          ms: performance.now() - started,
          pools: work.pools,
          tokens: work.tokens,
          rows: work.rows,
        });
      }

      const counts = (
        await db.query<Record<string, string>>(
          `SELECT (SELECT count(*) FROM swaps) AS swaps, (SELECT count(*) FROM pools) AS pools,
             (SELECT count(*) FROM pool_trade_buckets) AS pool_buckets, (SELECT count(*) FROM token_trade_buckets) AS token_buckets,
             (SELECT count(*) FROM pool_makers) AS pool_makers, (SELECT count(*) FROM token_makers) AS token_makers,
             (SELECT count(*) FROM pair_windows) AS pair_windows, (SELECT count(*) FROM token_windows) AS token_windows`,
        )
      ).rows[0];
      return {
        settings,
        setup: {
          creationEraBlocks: u.creationEraBlocks,
          startBlock: chain.startBlock,
          serverSeconds: Math.round(serverSeconds * 10) / 10,
          backfillSeconds: Math.round(backfillSeconds * 10) / 10,
          refreshStatsSeconds: Math.round(refreshStatsSeconds * 10) / 10,
        },
        machine: { cpus: (await import("node:os")).cpus().length, load: (await import("node:os")).loadavg() },
        backfill: {
          blocks: head,
          swaps: backfillLines.reduce((n, l) => n + l.swaps, 0),
          seconds: Math.round(backfillSeconds * 10) / 10,
          batches: backfillLines.length,
          pricingMs: Math.round(backfillLines.reduce((n, l) => n + l.ms, 0)),
          marketMs: Math.round(backfillLines.reduce((n, l) => n + l.market_ms, 0)),
          /** Milliseconds per step of the pricing, summed over the backfill's batches. */
          stepsMs: Object.fromEntries(
            [...new Set(backfillLines.flatMap((l) => Object.keys(l.steps_ms ?? {})))].map((k) => [
              k,
              Math.round(backfillLines.reduce((n, l) => n + (l.steps_ms?.[k] ?? 0), 0)),
            ]),
          ),
        },
        perBlock: {
          blocks: live.length,
          swaps: summary(live.map((l) => l.swaps)),
          marketMs: summary(live.map((l) => l.market_ms)),
          pricingMs: summary(live.map((l) => l.ms)),
          marketRows: summary(live.map((l) => l.market_rows)),
          poolsRecomputed: summary(live.map((l) => l.market_pools)),
          tokensRecomputed: summary(live.map((l) => l.market_tokens)),
          repricedTokens: summary(live.map((l) => l.repriced_tokens ?? 0)),
          /** Median milliseconds per step of the pricing (where a batch's time goes). */
          stepsMs: Object.fromEntries(
            [...new Set(live.flatMap((l) => Object.keys(l.steps_ms ?? {})))].map((k) => [
              k,
              summary(live.map((l) => l.steps_ms?.[k] ?? 0)).median,
            ]),
          ),
        },
        perMinuteSlide: {
          slides: slides.length,
          ms: summary(slides.map((s) => s.ms)),
          pools: summary(slides.map((s) => s.pools)),
          tokens: summary(slides.map((s) => s.tokens)),
          rows: summary(slides.map((s) => s.rows)),
        },
        tables: counts,
      };
    });
    console.log(JSON.stringify(result, null, 2));
    const dir = path.join(import.meta.dirname, "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "stats.json"), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await server.close();
    await postgres.close();
  }
}

await main();
