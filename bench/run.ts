/**
 * `npm run bench`: a throwaway Postgres fed with a market, the API under load endpoint by endpoint
 * beside a bare Fastify hello-world (bench/api.ts), then the indexer's and the market queries'
 * own benchmarks when bench/indexer.ts and bench/market.ts exist. Writes bench/results/latest.json
 * and the summary in BENCHMARKS.md.
 *
 *   npm run bench                       the devnet pipeline (history traded, indexed and priced)
 *   BENCH_DATA=fixture npm run bench    the small hand-made fixture market instead (no devnet)
 *   BENCH_SECONDS=2 npm run bench       shorter runs per endpoint (default 3)
 *   BENCH_ONLY=api npm run bench        the HTTP API alone (the indexer and market stages skipped),
 *                                       for comparing the API between two commits run after run
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import * as path from "node:path";
import { freePort } from "../src/_test/free-port.js";
import { blockTime, fixture, fixtureConfig, loadMarketFixture } from "../src/_test/market-fixture.js";
import { createApiServer } from "../src/api/server.js";
import type { BalanceReader } from "../src/api/wallet-balances.js";
import type { Config } from "../src/config/schema.js";
import { startEmbeddedPostgres } from "../src/embedded-postgres/index.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { createApiKey } from "../src/store/api-keys.js";
import { createDb, type Db } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";
import { type ApiBenchResult, baseOf, benchApi, type EndpointFigures, pickTargets } from "./api.js";
import type { Baseline, IndexerBenchResult, ThroughputFigures } from "./indexer.js";
import type { BaselineId, MarketBenchResult } from "./market.js";

const root = path.resolve(import.meta.dirname, "..");
const say = (line: string) => process.stderr.write(`${line}\n`);

type MarketData = {
  config: Config;
  key: string;
  wallets: string[];
  balanceReader?: BalanceReader;
  now?: () => Date;
  description: string;
  close(): Promise<void>;
};

async function fixtureData(db: Db): Promise<MarketData> {
  const { key } = await loadMarketFixture(db);
  return {
    config: fixtureConfig({ api: { rateLimit: { max: 100_000_000, windowMs: 60_000 } } }),
    key,
    wallets: [fixture.router, fixture.factory],
    // No node behind the fixture: balances come from memory, so the figure is the API's own cost.
    balanceReader: async ({ wallets }) => ({ blockNumber: 1n, decimals: 6, balances: wallets.map(() => 1n) }),
    now: () => blockTime(fixture.indexedBlock),
    description: `fixture market (${fixture.swaps} swaps on one pair)`,
    close: async () => {},
  };
}

async function pipelineData(db: Db): Promise<MarketData> {
  // Loaded only here, so the fixture mode needs nothing of the devnet.
  const { startPipeline } = await import("../src/_test/pipeline.js");
  const pipeline = await startPipeline({ db, logger: createSilentLogger() });
  const config: Config = {
    ...pipeline.config,
    api: {
      ...pipeline.config.api,
      rateLimit: { ...pipeline.config.api.rateLimit, max: 100_000_000, windowMs: 60_000 },
    },
  };
  const { key } = await createApiKey(db, "bench");
  // Nothing new is traded: stop following the head so the indexer's polling does not share the cores.
  await pipeline.stopIndexing();
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM swaps");
  return {
    config,
    key,
    wallets: pipeline.wallets.slice(0, 10),
    description: `devnet pipeline (${rows[0]?.n ?? 0} swaps indexed and priced)`,
    close: () => pipeline.close(),
  };
}

/** Runs bench/<name>.ts's `fn` when that file exists (other stages' benchmarks). */
async function optionalBench(file: string, fn: string, context: Record<string, unknown>): Promise<unknown> {
  const full = path.join(root, "bench", file);
  if (!existsSync(full)) return { skipped: `${file} does not exist` };
  try {
    const mod = (await import(full)) as Record<string, unknown>;
    const run = mod[fn];
    if (typeof run !== "function") return { skipped: `${file} exports no ${fn}()` };
    say(`${fn}() …`);
    return await (run as (context: Record<string, unknown>) => Promise<unknown>)(context);
  } catch (error) {
    say(`${fn}() failed: ${(error as Error).stack ?? error}`);
    return { failed: (error as Error).message };
  }
}

function markdown(
  result: ApiBenchResult,
  meta: Record<string, unknown>,
  others: Record<string, unknown>,
): string {
  const pct = (r: number) => `${(r * 100).toFixed(1)} %`;
  const cold = new Map(result.cold.map((c) => [c.name, c]));
  const rows = result.hot.map((h: EndpointFigures) => {
    const c = cold.get(h.name);
    return `| \`${h.name}\` | ${h.requestsPerSecond} | ${pct(h.ratio)} | ${h.p50Ms} | ${h.p99Ms} | ${c?.requestsPerSecond ?? "–"} | ${c ? pct(c.ratio) : "–"} | ${c?.p99Ms ?? "–"} |`;
  });
  return `# Benchmarks

Generated by \`npm run bench\` (bench/run.ts) on ${String(meta.date)}: ${String(meta.machine)}, Node ${process.version}.
Data: ${String(meta.data)}. Whole run: ${String(meta.seconds)} s. Raw figures: \`bench/results/latest.json\`.

## HTTP API

Each endpoint is loaded for ${result.durationSeconds} s in all by autocannon (${result.connections} connections, in a worker
thread, so the server keeps the main event loop) cycling through a few parameter sets drawn from the
data, after a short warm-up. The baseline is a bare Fastify hello-world measured the same way in the same
run: **${result.baseline.requestsPerSecond} req/s, p50 ${result.baseline.p50Ms} ms, p99 ${result.baseline.p99Ms} ms**.
The machine may be shared, so the baseline is interleaved with each endpoint: three rounds of one
second of the endpoint then one second of the baseline, and the ratio is the endpoint's requests/s
over the baseline's across those rounds (over this run the interleaved baseline ranged from
${result.baselineRange.min} to ${result.baselineRange.max} req/s; the figure above is its median).
Latencies have 1 ms resolution.

- **hot**: as served — repeated answers come from the in-memory answer cache (dropped when a new block is indexed).
- **cold**: the cache's life set to 0, so every request reaches Postgres (concurrent identical requests still share one query).
- \`/v1/wallets/token-balances\` is never cached: each request reads the chain's node (one JSON-RPC batch)${String(meta.data).startsWith("fixture") ? "; with the fixture there is no node and balances come from memory" : ""}.

| endpoint | hot req/s | hot / baseline | hot p50 ms | hot p99 ms | cold req/s | cold / baseline | cold p99 ms |
|---|---:|---:|---:|---:|---:|---:|---:|
${rows.join("\n")}

Reading the figures:

- A hot answer costs the key check (from memory), the rate limit, validation and a memory lookup; what
  remains is mostly writing the bytes, so large bodies (\`/api/v1/trades\`: 100 trades, tens of kB;
  \`/api/v1/candles\`: hundreds of candles) stay further below the baseline than small ones.
- Cold figures are the database's cost per query shape: trades (one indexed range scan plus the pool),
  pairs (a join over the token's pools and their statistics) and candles (a roll-up of 1-minute or
  hourly candles) are the heavy ones.
- Wallet balances are bounded by the node: the devnet's Hardhat node answers an \`eth_call\` batch in
  tens of milliseconds; a production node does far better, and the API adds little on top.

${stageSections(others)}`;
}

const INDEXER = "indexer (bench/indexer.ts benchIndexer)";
const MARKET = "market queries (bench/market.ts benchMarket)";

/** The indexer's and the market queries' sections; a stage skipped or failed, or an unknown one, as its JSON. */
function stageSections(others: Record<string, unknown>): string {
  return Object.entries(others)
    .map(([name, value]) => {
      if (name === INDEXER && isObject(value) && "devnet" in value) {
        return indexerSection(value as IndexerBenchResult);
      }
      if (name === MARKET && isObject(value) && "baselines" in value) {
        return marketSection(value as MarketBenchResult);
      }
      return `## ${name}\n\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`;
    })
    .join("\n");
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null;
/** Milliseconds with about three significant digits. */
const ms = (x: number) => (x >= 100 ? String(Math.round(x)) : x.toFixed(x >= 10 ? 1 : 2));
const times = (x: number) => `${x >= 10 ? Math.round(x) : x.toFixed(2)}×`;

function indexerSection(r: IndexerBenchResult): string {
  const { devnet, replay } = r;
  const fetch = devnet.baselines.bareFetch;
  const { parseCsv, multiRowInsert, copy } = replay.baselines;
  const calls = Object.entries(fetch.calls)
    .sort(([, a], [, b]) => b - a)
    .map(([method, n]) => `${n} \`${method}\``)
    .join(", ");
  const row = (source: string, ingest: ThroughputFigures | null, name: string, b: Baseline) =>
    `| ${source} | ${ingest ? ms(ingest.elapsedMs) : ""} | ${ingest?.swapsPerSecond ?? ""} | ${ingest?.blocksPerSecond ?? ""} | ${name} | ${ms(b.elapsedMs)} | ${b.swapsPerSecond} | **${times(b.ratio)}** |`;
  return `## Indexer

\`bench/indexer.ts\`: backfill of raw swaps (no pricing), every ingestion into a fresh database. After a
warm-up, ${r.rounds} rounds each run the ingestion and its baselines on the same data, in alternating order;
times are medians over the rounds, and a ratio is the median over the rounds of the ingestion's swaps/s
over the baseline's in the same round (1 = as fast as the baseline).

- **devnet**: the Hardhat devnet with ${devnet.historyDays} days of simulated trading (${devnet.swaps} swaps, ${devnet.poolEvents} pool events,
  ${devnet.blocks} blocks), indexed from block 0 over JSON-RPC until caught up. Baseline, the **bare fetch**: the very
  ${fetch.httpRequests} HTTP requests the indexer sent (recorded in the warm-up run: ${calls}), sent again to the node with the same overlap (a request waits only for those answered
  before it was sent), each answer read and JSON-parsed, nothing decoded or stored${fetch.answersMatch ? " (the answers' total length matched the recording's)" : " (**the answers' total length differed from the recording's**)"}.
- **replay**: the recorded mainnet day \`${replay.fixture}\` (${replay.swaps} swaps, ${replay.poolEvents} pool events over
  ${replay.blocks} blocks) through the same decode-and-store path, CSV reading included. Baselines: **parse CSV** (read the
  ${(parseCsv.bytes / 1e6).toFixed(1)} MB file and split it into ${parseCsv.lines} rows of fields, no decoding), and storing the same ${copy.rows}
  rows (the swaps and pool events the replay stored) into empty copies of their tables (same columns
  and indexes), in one transaction, as **multi-row INSERT** (${multiRowInsert.statements} statements of up to 1,000 rows) and as **COPY FROM STDIN**.

| source | ingest ms | ingest swaps/s | blocks/s | baseline | baseline ms | baseline swaps/s | ingest / baseline |
|---|---:|---:|---:|---|---:|---:|---:|
${row("devnet", devnet, "bare fetch", fetch)}
${row("replay", replay, "parse CSV", parseCsv)}
${row("", null, "multi-row INSERT", multiRowInsert)}
${row("", null, "COPY", copy)}

Devnet ingestion runs at **${times(fetch.ratio)} the bare fetch rate** of its own JSON-RPC reads. The replay runs at
${times(copy.ratio)} the rate of COPYing the rows it stores, ${times(multiRowInsert.ratio)} that of multi-row INSERTs of them (its
\`INSERT … SELECT FROM unnest(…)\` sends one array per column), and ${times(parseCsv.ratio)} the rate of parsing its CSV.
`;
}

function marketSection(r: MarketBenchResult): string {
  const b = r.baselines;
  const ratio = (vs: Partial<Record<BaselineId, number>>, id: BaselineId) => {
    const x = vs[id];
    return x === undefined ? "–" : times(x);
  };
  const bareRead = (vs: Partial<Record<BaselineId, number>>) =>
    vs.candleRead !== undefined
      ? `${times(vs.candleRead)} (candles)`
      : vs.seriesRead !== undefined
        ? `${times(vs.seriesRead)} (series)`
        : "–";
  const baselineRows = Object.values(b).map(
    (x) => `| ${x.what} | ${ms(x.medianMs)} | ${ms(x.p95Ms)} | ${x.rows} |`,
  );
  const queryRows = Object.entries(r.queries).map(
    ([name, q]) =>
      `| \`${name}\` | ${ms(q.medianMs)} | ${ms(q.p95Ms)} | ${q.rows} | ${ratio(q.vs, "select1")} | ${bareRead(q.vs)} | ${ratio(q.vs, "helloWorld")} |`,
  );
  const http = Object.entries(r.queries).filter(([, q]) => q.http);
  const served = http
    .map(([name, q]) => `\`${name}\` in **${ms(q.medianMs)} ms** median (p95 ${ms(q.p95Ms)} ms)`)
    .join(" and ");
  return `## Market queries

\`bench/market.ts\`: a busy pair of **${r.swaps.toLocaleString("en")} swaps** over ${r.days} days, inserted in ${r.insertSeconds} s, then priced by
the pricing stage's catch-up in ${r.pricing.seconds} s (${r.pricing.swapsPerSecond} swaps/s), which stored ${r.stored.candles1m} 1-minute, ${r.stored.candles1h} hourly and
${r.stored.candles1d} daily candles and ${r.stored.series5m} 5-minute and ${r.stored.series1h} hourly USD series points. The queries run through the store's
functions and, for the two of the issue, through the HTTP API as well (\`createApiServer\` with its answer
cache off, so every request reaches Postgres; one request at a time, the answer read and parsed).
Baselines in the same database: a \`SELECT 1\` round trip, bare primary-key range reads of the rows the
queries start from (no arithmetic, roll-up or gap-filling) and an HTTP round trip to a bare Fastify
hello-world. Every query and baseline ran ${r.rounds} times interleaved (one run of each per round, the order
rotating, after two warm-up runs), so that a busy machine slows them alike; a ratio is the query's
median time over the baseline's median (how many times as long).

| baseline | median ms | p95 ms | rows |
|---|---:|---:|---:|
${baselineRows.join("\n")}

| query | median ms | p95 ms | rows | × SELECT 1 | × bare read | × HTTP hello-world |
|---|---:|---:|---:|---:|---:|---:|
${queryRows.join("\n")}

One slide of the 24-hour statistics (\`refreshStats\`): ${r.refreshStatsMs} ms.

For a pair with ${r.swaps.toLocaleString("en")} stored swaps, the API serves ${served}
(\`npm run bench\`, or \`npx tsx bench/market.ts\` alone).
`;
}

async function main(): Promise<number> {
  const started = Date.now();
  const logger = createSilentLogger();
  const tempDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-bench-"));
  chmodSync(tempDir, 0o755); // the Postgres server user must reach it when we are root
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(tempDir, "postgres"),
    port: await freePort(),
    logger,
    ephemeral: true,
  });
  const db = createDb({ url: pg.url, max: 20, applicationName: "tokenmarket-bench" });
  let data: MarketData | undefined;
  const servers: { close(): Promise<unknown> }[] = [];
  try {
    await migrate(db);
    const useFixture = process.env.BENCH_DATA === "fixture";
    say(
      `bench: Postgres up in ${Date.now() - started} ms; loading ${useFixture ? "the fixture" : "the devnet pipeline"} …`,
    );
    data = useFixture ? await fixtureData(db) : await pipelineData(db);
    // Freshly loaded tables would otherwise be vacuumed and analysed by autovacuum during the first runs.
    await db.query("VACUUM ANALYZE");
    say(`bench: data ready (${data.description}) after ${Math.round((Date.now() - started) / 1000)} s`);
    const serverOptions = {
      config: data.config,
      db,
      logger,
      ...(data.balanceReader ? { balanceReader: data.balanceReader } : {}),
      ...(data.now ? { now: data.now } : {}),
    };
    const hot = createApiServer(serverOptions);
    const cold = createApiServer({ ...serverOptions, answerCacheTtlMs: 0 });
    servers.push(hot, cold);
    await hot.listen({ host: "127.0.0.1", port: 0 });
    await cold.listen({ host: "127.0.0.1", port: 0 });
    const targets = await pickTargets(db, data.config, { wallets: data.wallets });
    const api = await benchApi({
      hotBase: baseOf(hot),
      coldBase: baseOf(cold),
      key: data.key,
      targets,
      durationSeconds: Number(process.env.BENCH_SECONDS ?? 3),
      log: say,
    });
    await Promise.all(servers.map((s) => s.close()));
    servers.length = 0;

    const context = { db, logger, config: data.config };
    const apiOnly = process.env.BENCH_ONLY === "api";
    const skipped = { skipped: "BENCH_ONLY=api" };
    const others = {
      [INDEXER]: apiOnly ? skipped : await optionalBench("indexer.ts", "benchIndexer", context),
      [MARKET]: apiOnly ? skipped : await optionalBench("market.ts", "benchMarket", context),
    };
    const meta = {
      date: new Date().toISOString(),
      machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`,
      node: process.version,
      data: data.description,
      seconds: Math.round((Date.now() - started) / 1000),
    };
    mkdirSync(path.join(root, "bench", "results"), { recursive: true });
    writeFileSync(
      path.join(root, "bench", "results", "latest.json"),
      `${JSON.stringify({ meta, api, others }, null, 2)}\n`,
    );
    // Sections written by the other benchmarks (`npm run bench:scale-out`) are kept as they are.
    const previous = existsSync(path.join(root, "BENCHMARKS.md"))
      ? readFileSync(path.join(root, "BENCHMARKS.md"), "utf8")
      : "";
    const kept = previous.indexOf("\n## API scale-out");
    writeFileSync(
      path.join(root, "BENCHMARKS.md"),
      markdown(api, meta, others) + (kept >= 0 ? previous.slice(kept) : ""),
    );
    say(`bench: done in ${meta.seconds} s; wrote bench/results/latest.json and BENCHMARKS.md`);
    return 0;
  } finally {
    await Promise.all(servers.map((s) => s.close().catch(() => {})));
    await data?.close().catch(() => {});
    await db.end().catch(() => {});
    await pg.stop().catch(() => {});
    rmSync(tempDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    say(`bench failed: ${(error as Error).stack ?? error}`);
    process.exitCode = 1;
  },
);
