/**
 * `npm run bench:ingest`: JSON-RPC calls per swap and cold-backfill throughput of the indexer on
 * the peer benchmark's chain, the synthetic `uniswap-v2` profile (docs/SHAPE.md): Ethereum's
 * Uniswap V2 alone, 41,800 blocks of which about one in twenty trades, ≈ 20,000 swaps.
 *
 * - Calls per swap, by method: a cold backfill from block 0 with pricing into a fresh database,
 *   once with `transactionSource: "transactions"` (one eth_getTransactionByHash per swap, the
 *   indexer's way before block-level data) and once with "auto" (the probe's choice), counted by
 *   the indexer's own RPC metrics (every JSON-RPC call, those of a batch each, retries again).
 * - Throughput: the "auto" backfill with pricing, and without it (raw ingestion, `noDerivedData`:
 *   what fetching, decoding and storing cost alone), beside the node's raw rate, measured in the
 *   same run: a bare client that reads the same blocks' pool logs with eth_getLogs (2,000-block
 *   ranges, the next range's logs asked while this range's headers are read) and the timestamps
 *   of the blocks with logs (eth_getBlockByNumber in JSON-RPC batches of 100, 4 in flight),
 *   JSON-parsed, nothing decoded or stored. The three rotate over the rounds (the machine may be
 *   shared); a ratio is the median over the rounds of a backfill's swaps/s over the raw rate's.
 *
 * The node runs in a process of its own (`tokenmarket devnet --shape uniswap-v2`), started afresh
 * for every measurement so that each one finds it cold, as a node is for a backfill.
 *
 *   npm run bench:ingest                     embedded Postgres in a temporary folder, 3 rounds
 *   BENCH_INGEST_ROUNDS=5 npm run bench:ingest
 *   BENCH_INGEST_BLOCKS=8000 npm run bench:ingest   a shorter history (default: the profile's)
 *   BENCH_INGEST_CPU_PROF=dir npm run bench:ingest  also writes CPU profiles of the last round's backfills
 *   BENCH_INGEST_QUICK=1 npm run bench:ingest       skips the per-transaction backfill (while iterating;
 *                                                   its calls per swap are then not measured)
 *   BENCH_INGEST_TABLES=1 npm run bench:ingest      also prints the rows each table received
 *   BENCH_INGEST_SOURCE=fullBlocks npm run bench:ingest   the throughput backfills with that
 *                                                   transactionSource instead of the probe's choice
 *
 * Writes bench/results/ingest.json.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { cpus, tmpdir } from "node:os";
import * as path from "node:path";
import { pino } from "pino";
import { freePort } from "../src/_test/free-port.js";
import { chainSchema } from "../src/config/schema.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { createPricing } from "../src/pricing/pricing.js";
import { topics } from "../src/protocols/abi.js";
import { poolTopicsOf } from "../src/protocols/index.js";
import { createRpcMetrics } from "../src/rpc/metrics.js";
import { shapeChainConfig, shapeProfiles } from "../src/shape/profiles.js";
import type { Db } from "../src/store/db.js";
import { noDerivedData } from "../src/sync/derived.js";
import { createIndexer } from "../src/sync/indexer.js";
import { openBenchServer, withScratchDb } from "./database.js";

const root = path.resolve(import.meta.dirname, "..");
const profile = shapeProfiles["uniswap-v2"];
const rounds = Number(process.env.BENCH_INGEST_ROUNDS ?? 3);
const historyBlocks = Number(process.env.BENCH_INGEST_BLOCKS ?? profile.defaults.historyBlocks);
const cpuProfileDir = process.env.BENCH_INGEST_CPU_PROF;
const quick = process.env.BENCH_INGEST_QUICK === "1";
/** The source of the throughput backfills (default "auto": the probe's choice). */
const source = process.env.BENCH_INGEST_SOURCE ?? "auto";
const logger = createSilentLogger();
const say = (line: string) => process.stderr.write(`${line}\n`);

type Node = { url: string; stop(): Promise<void> };

/** The synthetic node in a child process: the real CLI, a fixed head, the same seed every time. */
async function startNode(): Promise<Node> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(root, "src/cli/main.ts"),
      "devnet",
      "--shape",
      "uniswap-v2",
      "--port",
      String(port),
      "--live",
      "false",
      "--seed",
      "1",
      "--history-blocks",
      String(historyBlocks),
    ],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, LOG_LEVEL: "warn" } },
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  for (let i = 0; ; i++) {
    try {
      await call(url, "eth_blockNumber", []);
      return { url, stop };
    } catch (error) {
      if (i > 300 || child.exitCode !== null) {
        await stop();
        throw new Error(`the synthetic node did not start: ${(error as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function call<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result as T;
}

const hex = (n: number) => `0x${n.toString(16)}`;

type Backfill = {
  source: string;
  swaps: number;
  head: number;
  elapsedMs: number;
  swapsPerSecond: number;
  calls: number;
  callsPerSwap: number;
  callsByMethod: Record<string, number>;
  /** With pricing: milliseconds the pricing stage spent (its "priced batch" lines), in all and per step. */
  pricing?: { batches: number; ms: number; stepsMs: Record<string, number> };
};

/** A cold backfill (with pricing unless told) from block 0 to the head into a fresh database, on a fresh node. */
async function backfill(
  pgUrl: string,
  transactionSource: string,
  how: { pricing?: boolean; profileTo?: string | undefined } = {},
): Promise<Backfill> {
  const { pricing = true, profileTo } = how;
  const node = await startNode();
  try {
    return await withScratchDb(pgUrl, { name: "ingest", max: 6 }, async (db: Db) => {
      const head = Number(await call<string>(node.url, "eth_blockNumber", []));
      const chain = chainSchema.parse({
        ...shapeChainConfig(profile, node.url),
        confirmations: 0,
        transactionSource,
      });
      const config = { chains: [chain], pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 } };
      const metrics = createRpcMetrics();
      // The pricing's "priced batch" lines: where its time goes (pricing.ts `steps_ms`).
      const stage = { batches: 0, ms: 0, stepsMs: {} as Record<string, number> };
      const pricingLogger = pino(
        { level: "debug" },
        {
          write(line: string) {
            const entry = JSON.parse(line) as {
              msg?: string;
              ms?: number;
              market_ms?: number;
              steps_ms?: Record<string, number>;
            };
            if (entry.msg !== "priced batch") return;
            stage.batches += 1;
            stage.ms += entry.ms ?? 0;
            // The market windows' update (after the steps, outside them).
            stage.stepsMs.market_windows = (stage.stepsMs.market_windows ?? 0) + (entry.market_ms ?? 0);
            for (const [k, v] of Object.entries(entry.steps_ms ?? {}))
              stage.stepsMs[k] = (stage.stepsMs[k] ?? 0) + v;
          },
        },
      );
      const indexer = createIndexer({
        config,
        db,
        logger,
        derived: pricing ? createPricing({ config, logger: pricingLogger }) : noDerivedData,
        options: { follow: false, progressBar: false },
        rpcMetrics: metrics,
      });
      const session = profileTo ? new Session() : null;
      if (session) {
        session.connect();
        await session.post("Profiler.enable");
        await session.post("Profiler.start");
      }
      const started = performance.now();
      await indexer.start();
      await indexer.done();
      const elapsedMs = performance.now() - started;
      if (session && profileTo) {
        const { profile: cpu } = await session.post("Profiler.stop");
        mkdirSync(profileTo, { recursive: true });
        const kind = pricing ? "pricing" : "raw-ingest";
        writeFileSync(path.join(profileTo, `${kind}-${Date.now()}.cpuprofile`), JSON.stringify(cpu));
        session.disconnect();
      }
      const [status] = indexer.status();
      if (status?.phase !== "stopped" || status.indexedBlock !== head)
        throw new Error(`the backfill did not reach the head: ${status?.phase} ${status?.error ?? ""}`);
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM swaps WHERE chain_id = $1",
        [chain.id],
      );
      const swaps = rows[0]?.n ?? 0;
      if (process.env.BENCH_INGEST_TABLES === "1") {
        const t = await db.query(
          "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del, n_live_tup FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd > 0 ORDER BY n_tup_ins + n_tup_upd DESC",
        );
        say(JSON.stringify(t.rows));
      }
      const json = await metrics.registry.getMetricsAsJSON();
      const callsByMethod: Record<string, number> = {};
      for (const v of json.find((m) => m.name === "tokenmarket_rpc_calls_total")?.values ?? [])
        callsByMethod[String(v.labels.method)] = v.value;
      const source =
        json
          .find((m) => m.name === "tokenmarket_indexer_transaction_source")
          ?.values.find((v) => v.value === 1)?.labels.source ?? transactionSource;
      const calls = Object.values(callsByMethod).reduce((a, b) => a + b, 0);
      return {
        source: String(source),
        swaps,
        head,
        elapsedMs,
        swapsPerSecond: swaps / (elapsedMs / 1000),
        calls,
        callsPerSwap: calls / swaps,
        callsByMethod,
        ...(pricing
          ? {
              pricing: {
                batches: stage.batches,
                ms: Math.round(stage.ms),
                stepsMs: Object.fromEntries(
                  Object.entries(stage.stepsMs).map(([k, v]) => [k, Math.round(v)]),
                ),
              },
            }
          : {}),
      };
    });
  } finally {
    await node.stop();
  }
}

type Raw = { swaps: number; logs: number; blocksWithLogs: number; elapsedMs: number; swapsPerSecond: number };

/**
 * The node's raw rate: the pools' logs by eth_getLogs in 2,000-block ranges (the next range asked
 * while this one's headers are read), and the headers of the blocks with logs for their times.
 */
async function rawFetch(): Promise<Raw> {
  const node = await startNode();
  try {
    const head = Number(await call<string>(node.url, "eth_blockNumber", []));
    const topic0 = [
      ...new Set([topics.v2PairCreated, ...poolTopicsOf({ protocol: "v2", swapEvent: "uniswap" })]),
    ];
    const range = 2000;
    const getLogs = (from: number) =>
      call<{ topics: string[]; blockNumber: string }[]>(node.url, "eth_getLogs", [
        { fromBlock: hex(from), toBlock: hex(Math.min(head, from + range - 1)), topics: [topic0] },
      ]);
    const batch = async (numbers: number[]) => {
      const response = await fetch(node.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(
          numbers.map((n, id) => ({
            jsonrpc: "2.0",
            id,
            method: "eth_getBlockByNumber",
            params: [hex(n), false],
          })),
        ),
      });
      const answers = (await response.json()) as { result?: { timestamp: string } }[];
      if (answers.some((a) => !a.result?.timestamp)) throw new Error("a block without its header");
    };
    let swaps = 0;
    let logs = 0;
    let blocksWithLogs = 0;
    const started = performance.now();
    let next = getLogs(0);
    for (let from = 0; from <= head; from += range) {
      const got = await next;
      if (from + range <= head) next = getLogs(from + range);
      logs += got.length;
      const numbers = [...new Set(got.map((l) => Number(l.blockNumber)))];
      blocksWithLogs += numbers.length;
      for (const log of got) if (log.topics[0] === topics.v2Swap) swaps++;
      const chunks: number[][] = [];
      for (let i = 0; i < numbers.length; i += 100) chunks.push(numbers.slice(i, i + 100));
      for (let i = 0; i < chunks.length; i += 4) await Promise.all(chunks.slice(i, i + 4).map(batch));
    }
    const elapsedMs = performance.now() - started;
    return { swaps, logs, blocksWithLogs, elapsedMs, swapsPerSecond: swaps / (elapsedMs / 1000) };
  } finally {
    await node.stop();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

async function main(): Promise<number> {
  const started = Date.now();
  const server = await openBenchServer(undefined, logger, "ingest");
  try {
    say(`bench:ingest: uniswap-v2 profile, ${historyBlocks + 2} blocks, ${rounds} rounds`);
    const before = quick ? null : await backfill(server.url, "transactions");
    if (before)
      say(
        `  per transaction: ${before.swaps} swaps, ${before.calls} calls (${before.callsPerSwap.toFixed(3)}/swap), ${before.swapsPerSecond.toFixed(0)} swaps/s`,
      );
    const runs: { backfill: Backfill; ingest: Backfill; raw: Raw; ratio: number; ingestRatio: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      const last = round === rounds - 1;
      let b: Backfill | undefined;
      let i: Backfill | undefined;
      let r: Raw | undefined;
      const steps = [
        async () => {
          b = await backfill(server.url, source, { profileTo: last ? cpuProfileDir : undefined });
        },
        async () => {
          i = await backfill(server.url, source, {
            pricing: false,
            profileTo: last ? cpuProfileDir : undefined,
          });
        },
        async () => {
          r = await rawFetch();
        },
      ];
      // Rotate which goes first, so that none always follows the same one.
      for (let k = 0; k < steps.length; k++)
        await (steps[(k + round) % steps.length] as () => Promise<void>)();
      const [withPricing, withoutPricing, raw] = [b as Backfill, i as Backfill, r as Raw];
      const done = {
        backfill: withPricing,
        ingest: withoutPricing,
        raw,
        ratio: withPricing.swapsPerSecond / raw.swapsPerSecond,
        ingestRatio: withoutPricing.swapsPerSecond / raw.swapsPerSecond,
      };
      runs.push(done);
      say(
        `  round ${round + 1}: auto (${withPricing.source}) ${withPricing.swaps} swaps, ${withPricing.calls} calls (${withPricing.callsPerSwap.toFixed(3)}/swap), ${withPricing.swapsPerSecond.toFixed(0)} swaps/s with pricing, ${withoutPricing.swapsPerSecond.toFixed(0)} without; raw ${raw.swapsPerSecond.toFixed(0)} swaps/s; ratios ${done.ratio.toFixed(2)}, ${done.ingestRatio.toFixed(2)}`,
      );
      if (withPricing.pricing)
        say(
          `    pricing stage: ${withPricing.pricing.ms} ms in ${withPricing.pricing.batches} batches (${(withPricing.pricing.ms / withPricing.swaps).toFixed(3)} ms/swap); steps ${JSON.stringify(withPricing.pricing.stepsMs)}`,
        );
    }
    const after = runs[runs.length - 1]?.backfill as Backfill;
    const result = {
      meta: {
        date: new Date().toISOString(),
        machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`,
        node: process.version,
        rounds,
        seconds: Math.round((Date.now() - started) / 1000),
      },
      scenario: {
        profile: "uniswap-v2",
        seed: 1,
        blocks: after.head + 1,
        swaps: after.swaps,
        blocksWithPoolLogs: runs[0]?.raw.blocksWithLogs,
        poolLogs: runs[0]?.raw.logs,
      },
      callsPerSwap: {
        transactions: before,
        auto: after,
        /** Calls of the "auto" backfill over those of the per-transaction one. */
        reduction: before ? after.calls / before.calls : null,
      },
      throughput: {
        /** "auto", with pricing. */
        backfillSwapsPerSecond: median(runs.map((r) => r.backfill.swapsPerSecond)),
        /** "auto", raw ingestion without pricing. */
        ingestSwapsPerSecond: median(runs.map((r) => r.ingest.swapsPerSecond)),
        rawSwapsPerSecond: median(runs.map((r) => r.raw.swapsPerSecond)),
        /** Backfill with pricing over the raw rate (median of the rounds'). */
        ratio: median(runs.map((r) => r.ratio)),
        /** Ingestion without pricing over the raw rate (median of the rounds'). */
        ingestRatio: median(runs.map((r) => r.ingestRatio)),
        rounds: runs.map((r) => ({
          backfillMs: Math.round(r.backfill.elapsedMs),
          backfillSwapsPerSecond: Math.round(r.backfill.swapsPerSecond),
          ingestMs: Math.round(r.ingest.elapsedMs),
          ingestSwapsPerSecond: Math.round(r.ingest.swapsPerSecond),
          rawMs: Math.round(r.raw.elapsedMs),
          rawSwapsPerSecond: Math.round(r.raw.swapsPerSecond),
          ratio: Number(r.ratio.toFixed(3)),
          ingestRatio: Number(r.ingestRatio.toFixed(3)),
        })),
      },
    };
    // A quick run measures no per-transaction baseline: it does not replace the recorded results.
    const out = path.join(
      quick ? tmpdir() : path.join(root, "bench", "results"),
      quick ? "ingest-quick.json" : "ingest.json",
    );
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    say(
      `bench:ingest: calls per swap ${before?.callsPerSwap.toFixed(3) ?? "(not measured)"} → ${after.callsPerSwap.toFixed(3)}; backfill ${result.throughput.backfillSwapsPerSecond.toFixed(0)} swaps/s with pricing (${result.throughput.ratio.toFixed(2)}× raw), ${result.throughput.ingestSwapsPerSecond.toFixed(0)} without (${result.throughput.ingestRatio.toFixed(2)}×), raw ${result.throughput.rawSwapsPerSecond.toFixed(0)} swaps/s; wrote ${out}`,
    );
    return 0;
  } finally {
    await server.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`bench:ingest failed: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
