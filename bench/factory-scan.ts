/**
 * The factory scan at mainnet cardinality: pools created before the start block, scanned from
 * the synthetic Ethereum's creation era (500 PairCreated/PoolCreated a block, Alchemy's
 * eth_getLogs limits), into a fresh database.
 *
 *   npx tsx bench/factory-scan.ts                       10⁵ and 5·10⁵ pools
 *   npx tsx bench/factory-scan.ts --pools 100000,1000000
 *
 * For each pool count, two runs in a process of their own (so that each peak RSS is its own):
 * `scan` (the scan alone: each range streamed into the database, nothing kept) and `indexer`
 * (the pools kept in a Map as the indexer keeps its known pools for ingestion). The shape node
 * and Postgres run in other processes; the figures are the scanning process's. Prints one JSON
 * line per run and writes bench/results/factory-scan.json.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import * as path from "node:path";
import { freePort } from "../src/_test/free-port.js";
import { chainSchema } from "../src/config/schema.js";
import { createLogger, createSilentLogger } from "../src/internal/logger.js";
import { createRpcClient } from "../src/rpc/client.js";
import { shapeChainConfig, shapeProfiles } from "../src/shape/profiles.js";
import { insertChainRow } from "../src/store/chain-state.js";
import type { Pool } from "../src/sync/pools.js";
import { openBenchServer, withScratchDb } from "./database.js";

const root = path.resolve(import.meta.dirname, "..");
const CREATIONS_PER_BLOCK = 500;

type RunResult = {
  pools: number;
  mode: "scan" | "indexer";
  stored: number;
  seconds: number;
  poolsPerSecond: number;
  rssBeforeMb: number;
  peakRssMb: number;
  heapAfterMb: number;
  load: number[];
};

async function child(): Promise<void> {
  const input = JSON.parse(process.env.FACTORY_SCAN_BENCH ?? "{}") as {
    url: string;
    rpcUrl: string;
    pools: number;
    mode: "scan" | "indexer";
  };
  const { scanFactories } = await import("../src/sync/factory-scan.js");
  const chain = chainSchema.parse(shapeChainConfig(shapeProfiles.ethereum, input.rpcUrl));
  const checkpoint = Math.ceil(input.pools / CREATIONS_PER_BLOCK) + 1;
  await withScratchDb(input.url, { name: "factoryscan", max: 4 }, async (db) => {
    await insertChainRow(db, {
      chainId: 1,
      name: "synthetic",
      genesisHash: `0x${"00".repeat(32)}`,
      devnet: true,
    });
    // Two tries of 15 s: a range the node cannot generate in time is split after 30 s, not 2 min.
    const rpc = createRpcClient({
      chain: { id: 1, rpc: [input.rpcUrl] },
      logger: createSilentLogger(),
      options: { attempts: 2 },
    });
    const known = new Map<string, Pool>();
    (globalThis as { gc?: () => void }).gc?.();
    const rssBefore = process.memoryUsage.rss();
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 20);
    const started = performance.now();
    const result = await scanFactories({
      db,
      rpc,
      chainId: 1,
      dexes: chain.dexes,
      checkpoint,
      maxRange: 100_000,
      logger: createLogger({ level: process.env.LOG_LEVEL ?? "warn" }),
      isStopped: () => false,
      ...(input.mode === "indexer"
        ? {
            isKnownPool: (a: string) => known.has(a),
            onPools: (pools: readonly Pool[]) => {
              for (const p of pools) known.set(p.address, p);
            },
          }
        : {}),
    });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM pools WHERE chain_id = 1");
    const mb = (b: number) => Math.round(b / 2 ** 20);
    const out: RunResult = {
      pools: input.pools,
      mode: input.mode,
      stored: Number(rows[0]?.n),
      seconds: Math.round(seconds * 10) / 10,
      poolsPerSecond: Math.round(result.poolsFound / seconds),
      rssBeforeMb: mb(rssBefore),
      peakRssMb: mb(peak),
      heapAfterMb: mb(process.memoryUsage().heapUsed),
      load: loadavg().map((l) => Math.round(l * 100) / 100),
    };
    if (known.size > 0 && known.size !== out.stored) throw new Error("the map holds other pools than stored");
    process.stdout.write(`${JSON.stringify(out)}\n`);
  });
}

async function startNode(pools: number): Promise<{ url: string; proc: ChildProcess }> {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(root, "src/cli/main.ts"),
      "devnet",
      "--shape",
      "ethereum",
      "--pools",
      String(pools),
      "--tokens",
      String(Math.max(1000, Math.floor(pools / 2))),
      "--history-blocks",
      "4",
      "--live",
      "false",
      "--port",
      String(port),
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      const r = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }),
      });
      if (r.ok) return { url, proc };
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  proc.kill();
  throw new Error("the shape node did not start");
}

function runChild(input: Record<string, unknown>): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--expose-gc", "--import", "tsx", import.meta.filename], {
      env: { ...process.env, FACTORY_SCAN_BENCH: JSON.stringify(input) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    proc.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    proc.once("error", reject);
    proc.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the run exited with ${code}`));
      else resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as RunResult);
    });
  });
}

async function main(): Promise<void> {
  const arg = process.argv.indexOf("--pools");
  const counts = (arg > 0 ? (process.argv[arg + 1] ?? "") : "100000,500000").split(",").map(Number);
  const logger = createSilentLogger();
  const server = await openBenchServer(undefined, logger, "factoryscan");
  const results: RunResult[] = [];
  try {
    for (const pools of counts) {
      const node = await startNode(pools);
      try {
        for (const mode of ["scan", "indexer"] as const) {
          const r = await runChild({ url: server.url, rpcUrl: node.url, pools, mode });
          if (r.stored !== pools) throw new Error(`stored ${r.stored} of ${pools} pools`);
          process.stdout.write(`${JSON.stringify(r)}\n`);
          results.push(r);
        }
      } finally {
        node.proc.kill("SIGTERM");
      }
    }
  } finally {
    await server.close();
  }
  mkdirSync(path.join(root, "bench/results"), { recursive: true });
  writeFileSync(
    path.join(root, "bench/results/factory-scan.json"),
    `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`,
  );
}

if (process.env.FACTORY_SCAN_BENCH) await child();
else await main();
