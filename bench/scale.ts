/**
 * `npm run bench:scale [-- --profile small|full] [--skip-api] [--skip-retention] [--skip-live]
 * [--skip-ingest] [--skip-families]`: the mainnet-scale figures, each beside a baseline measured in the same
 * run. Writes bench/results/scale.json (a part left out keeps the figures of the profile's last
 * run that had it, dated in `meta`) and the figures of the "Scale" section of BENCHMARKS.md.
 *
 * 1. The API at scale (bench/scale-api.ts): bench/loader.ts fills a database (full: 200,000
 *    tokens, 400,000 pools, 10 M swaps over 90 days; small: 1 M swaps), then p50/p99 over real HTTP
 *    of candles, trades, pairs of WETH and search, the cache off, beside `/healthz`. The database's
 *    bytes per million swaps come with it.
 * 2. Retention (bench/scale-retention.ts): days written one after another with the storage upkeep
 *    after each, the database's size over time levelling off once the window is full.
 * 3. Live following and RSS (bench/scale-live.ts): the shape node advancing at the BNB
 *    profile's block time, the service (indexer + API) in a child process, per block the delay from
 *    the block's appearance at the node to its trades in `GET /api/v1/trades`.
 *    `BENCH_SCALE_KEEP=<folder>`: the loaded database is kept in that Postgres data folder and
 *    reused by the next run of the same load (bench/database.ts `withKeptDb`).
 * 4. The DEX families (bench/scale-families.ts): the BNB profile with its whole mix of families
 *    backfilled with pricing beside the same profile restricted to V2 and V3: time per batch and
 *    per swap, JSON-RPC calls per swap. Alone: `BENCH_SCALE_RESULTS=scale-families.json npm run
 *    bench:scale -- --skip-api --skip-retention --skip-live --skip-ingest`.
 * 5. Backfill and pricing (`npm run bench:ingest`, `npm run bench:stats`, other engineers' own
 *    benchmarks) run as subprocesses, their results read back from bench/results/.
 *
 * The live part alone at a chosen size: `BENCH_LIVE_POOLS=100000 BENCH_LIVE_BLOCKS=200
 * BENCH_LIVE_CATCHUP_S=1800 BENCH_SCALE_RESULTS=scale-live-100k.json npm run bench:scale --
 * --profile full --skip-api --skip-retention --skip-ingest` (how delay, lag and RSS grow with the
 * pool count); `BENCH_LIVE_LOG=file` keeps the service's log (with `LOG_LEVEL=debug`, its
 * "priced batch" lines), `BENCH_LIVE_NODE_ARGS` gives the service Node flags (`--cpu-prof`).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import * as path from "node:path";
import { createSilentLogger } from "../src/internal/logger.js";
import type { Db } from "../src/store/db.js";
import { openBenchServer, withKeptDb, withScratchDb } from "./database.js";
import { type LoadedDatabase, loadScaleDatabase } from "./loader.js";
import { benchApiAtScale, scaleRequests } from "./scale-api.js";
import type { FamiliesSettings } from "./scale-families.js";
import { renderScaleSection } from "./scale-report.js";

const root = path.resolve(import.meta.dirname, "..");
const say = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

export type Profile = {
  name: string;
  load: { tokens: number; pools: number; swaps: number; days: number; minuteDays: number };
  samples: number;
  warmup: number;
  /** The environment of each run of the subprocess benchmarks (their own settings). */
  ingestEnv: Record<string, string>;
  statsEnvs: Record<string, string>[];
  live: { shape: "bnb" | "ethereum"; pools: number; blocks: number; catchUpMs?: number };
  retention: { days: number; retentionDays: number; perDay: number };
  families: FamiliesSettings;
};

export const PROFILES: Record<string, Profile> = {
  small: {
    name: "small",
    load: { tokens: 200_000, pools: 400_000, swaps: 1_000_000, days: 90, minuteDays: 2 },
    samples: 200,
    warmup: 20,
    ingestEnv: { BENCH_INGEST_ROUNDS: "1", BENCH_INGEST_BLOCKS: "4000" },
    statsEnvs: [
      {
        BENCH_STATS_POOLS: "20000",
        BENCH_STATS_HISTORY: "40",
        BENCH_STATS_BLOCKS: "8",
        BENCH_STATS_SLIDES: "3",
      },
    ],
    live: { shape: "bnb", pools: 2_000, blocks: 80 },
    retention: { days: 8, retentionDays: 3, perDay: 20_000 },
    families: { pools: 4_000, tokens: 2_000, historyBlocks: 120 },
  },
  full: {
    name: "full",
    load: { tokens: 200_000, pools: 400_000, swaps: 10_000_000, days: 90, minuteDays: 7 },
    samples: 400,
    warmup: 40,
    ingestEnv: {},
    statsEnvs: [
      // Both from the end of the creation era (the factory scan finds the pools created before),
      // as bench/results/stats-1m.json was measured; one block a batch, 12 of them.
      ...["1000", "1000000"].map((pools) => ({
        BENCH_STATS_POOLS: pools,
        BENCH_STATS_TOKENS: String(Number(pools) / 2),
        BENCH_STATS_HISTORY: "20",
        BENCH_STATS_BLOCKS: "12",
        BENCH_STATS_SLIDES: "1",
        BENCH_STATS_START: "history",
        BENCH_STATS_LIMITS: "infura",
      })),
    ],
    live: { shape: "bnb", pools: 300_000, blocks: 400 },
    retention: { days: 20, retentionDays: 7, perDay: 100_000 },
    families: { pools: 100_000, tokens: 50_000, historyBlocks: 600 },
  },
};

function parseArgs(argv: string[]) {
  const flags = new Set(argv.filter((a) => a.startsWith("--skip-")));
  const at = argv.indexOf("--profile");
  const name = at >= 0 ? argv[at + 1] : "small";
  const profile = PROFILES[name ?? ""];
  if (!profile) throw new Error(`unknown profile ${name}: small or full`);
  const swaps = process.env.BENCH_SCALE_SWAPS;
  const tokens = process.env.BENCH_SCALE_TOKENS;
  const pools = process.env.BENCH_SCALE_POOLS;
  const load = {
    ...profile.load,
    ...(swaps ? { swaps: Number(swaps) } : {}),
    ...(tokens ? { tokens: Number(tokens) } : {}),
    ...(pools ? { pools: Number(pools) } : {}),
  };
  // The live part alone at a chosen size (how delay, lag and RSS grow with the pool count).
  const livePools = process.env.BENCH_LIVE_POOLS;
  const liveBlocks = process.env.BENCH_LIVE_BLOCKS;
  const live = {
    ...profile.live,
    ...(livePools ? { pools: Number(livePools) } : {}),
    ...(liveBlocks ? { blocks: Number(liveBlocks) } : {}),
    ...(process.env.BENCH_LIVE_CATCHUP_S
      ? { catchUpMs: Number(process.env.BENCH_LIVE_CATCHUP_S) * 1000 }
      : {}),
    ...(process.env.BENCH_LIVE_START === "history" ? { startAfterCreation: true } : {}),
    ...(process.env.BENCH_LIVE_HEADS === "poll" ? { headsBy: "poll" as const } : {}),
  };
  return { profile: { ...profile, load, live }, skip: (what: string) => flags.has(`--skip-${what}`) };
}

/** Runs another engineer's benchmark as a subprocess and reads its results file back. */
function runSubBench(script: string, results: string, env: Record<string, string>) {
  const started = performance.now();
  const run = spawnSync("npm", ["run", "--silent", script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 45 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const stderr = run.stderr?.toString() ?? "";
  process.stderr.write(stderr);
  // Its closing line states its figures (calls per swap, rates and ratios): kept for the report.
  const summary =
    stderr
      .trim()
      .split("\n")
      .filter((line) => !line.startsWith("npm warn"))
      .at(-1) ?? null;
  const file = path.join(root, "bench", "results", results);
  const ok = run.status === 0 && existsSync(file);
  return {
    script,
    env,
    exitCode: run.status,
    summary,
    seconds: Math.round((performance.now() - started) / 1000),
    results: ok ? (JSON.parse(readFileSync(file, "utf8")) as unknown) : null,
  };
}

async function main() {
  const { profile, skip } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const meta = {
    date: new Date().toISOString(),
    profile: profile.name,
    machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`,
    node: process.version,
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
  };
  say(`scale: profile ${profile.name}, load ${meta.loadAverageAtStart.join(" ")}`);
  const logger = createSilentLogger();
  const server = await openBenchServer(undefined, logger, "scale");
  const out: Record<string, unknown> = { meta };
  try {
    if (!skip("api")) {
      const measure = async (db: Db, loaded: LoadedDatabase) => {
        const { rows } = await db.query<{ bytes: string }>(
          "SELECT pg_database_size(current_database())::text AS bytes",
        );
        const bytes = Number(rows[0]?.bytes ?? 0);
        const requests = await scaleRequests(db, {
          end: loaded.end,
          from: loaded.from,
          minuteDays: profile.load.minuteDays,
          samples: profile.samples,
        });
        // BENCH_API_ONLY=<text>: only the queries whose name holds it (to profile one of them).
        const only = process.env.BENCH_API_ONLY;
        if (only) for (const name of Object.keys(requests)) if (!name.includes(only)) delete requests[name];
        const api = await benchApiAtScale(db, loaded.config, requests, {
          warmup: profile.warmup,
          log: say,
          client: process.env.BENCH_API_CLIENT === "fetch" ? "fetch" : "http",
          now: () => new Date(loaded.end),
        });
        return {
          load: profile.load,
          loaderSeconds: loaded.seconds,
          databaseBytes: bytes,
          bytesPerMillionSwaps: Math.round((bytes / profile.load.swaps) * 1_000_000),
          loadAverageAfter: loadavg().map((l) => Math.round(l * 100) / 100),
          ...api,
        };
      };
      const load = (db: Db) => loadScaleDatabase(db, { ...profile.load, log: say });
      // BENCH_SCALE_KEEP=<folder>: the loaded database is kept there between runs (see withKeptDb).
      const keep = process.env.BENCH_SCALE_KEEP;
      out.api = keep
        ? await withKeptDb(
            {
              dataDir: path.resolve(keep),
              name: `scale_${profile.load.swaps}`,
              key: JSON.stringify(profile.load),
              max: 8,
              logger,
            },
            load,
            measure,
          )
        : await withScratchDb(server.url, { name: "scale", max: 8 }, async (db) =>
            measure(db, await load(db)),
          );
    }
    if (!skip("retention")) {
      const { benchRetention } = await import("./scale-retention.js");
      out.retention = await withScratchDb(server.url, { name: "retention", max: 2 }, (db) =>
        benchRetention(db, { ...profile.retention, log: say }),
      );
    }
    if (!skip("live")) {
      const { benchLive } = await import("./scale-live.js");
      out.live = await benchLive({ serverUrl: server.url, ...profile.live, log: say });
    }
    if (!skip("families")) {
      const { benchFamilies } = await import("./scale-families.js");
      out.families = await benchFamilies({ serverUrl: server.url, ...profile.families, log: say });
    }
    if (!skip("ingest")) {
      say("scale: npm run bench:ingest …");
      out.ingest = runSubBench("bench:ingest", "ingest.json", profile.ingestEnv);
      say("scale: npm run bench:stats …");
      out.stats = profile.statsEnvs.map((env) => runSubBench("bench:stats", "stats.json", env));
    }
  } finally {
    await server.close();
  }
  (out.meta as Record<string, unknown>).seconds = Math.round((Date.now() - started) / 1000);
  (out.meta as Record<string, unknown>).loadAverageAtEnd = loadavg().map((l) => Math.round(l * 100) / 100);
  mkdirSync(path.join(root, "bench", "results"), { recursive: true });
  // BENCH_SCALE_RESULTS=name.json: a run kept apart (e.g. the live part alone at a chosen size),
  // written there only; scale.json and BENCHMARKS.md's figures stay those of the last whole run.
  const apart = process.env.BENCH_SCALE_RESULTS;
  const resultsFile = path.join(root, "bench", "results", apart ?? "scale.json");
  // Parts left out (--skip-…) keep their figures of the last run of the same profile, with its date.
  if (existsSync(resultsFile)) {
    const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as Record<string, unknown>;
    const previousMeta = previous.meta as { profile?: string; date?: string } | undefined;
    if (previousMeta?.profile === profile.name) {
      for (const part of ["api", "retention", "live", "families", "ingest", "stats"]) {
        if (out[part] === undefined && previous[part] !== undefined) {
          out[part] = previous[part];
          const from = (previousMeta as Record<string, unknown>)[`${part}From`] ?? previousMeta.date;
          (out.meta as Record<string, unknown>)[`${part}From`] = from;
        }
      }
    }
  }
  writeFileSync(resultsFile, `${JSON.stringify(out, null, 2)}\n`);
  if (apart) {
    say(`scale: done in ${(out.meta as { seconds: number }).seconds} s; bench/results/${apart}`);
    return;
  }
  const file = path.join(root, "BENCHMARKS.md");
  const previous = existsSync(file) ? readFileSync(file, "utf8") : "";
  writeFileSync(file, renderScaleSection(previous, out));
  say(
    `scale: done in ${(out.meta as { seconds: number }).seconds} s; bench/results/scale.json, BENCHMARKS.md "Scale"`,
  );
}

await main();
