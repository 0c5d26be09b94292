/**
 * Live following at the node's speed: the synthetic node
 * (src/shape, in this process) advancing at its profile's block time, and the service
 * (`tokenmarket start`: indexer and API) as a child process of its own, so that its RSS is its
 * own, configured on that node with a fresh database. Measured:
 *
 * - per block, the delay from the block's appearance at the node (the node's clock makes block N
 *   the head at a known instant, observed here every 10 ms) to the first trade of that block being
 *   listed by `GET /api/v1/trades` of one of its pools (real HTTP, polled every 25 ms): p50, p99, max;
 * - the head lag (node head − indexed block) sampled every second, and whether it stayed bounded
 *   (kept up) over the run's second half;
 * - the service's RSS (VmRSS) and peak (VmHWM) from /proc/<pid>/status, every second, summed over
 *   its process tree (`tokenmarket start` runs the service under a small parent that set its heap
 *   limit: src/cli/heap.ts), and of the service process alone;
 * - the baseline: the round trip of `/healthz` on the same service, and the profile's block time.
 *
 * The indexer starts at block 0: it first takes in the creation era (every pool's creation) and
 * the history blocks, then follows; the delays are counted only for blocks that appeared after it
 * first reached the head. With `startAfterCreation` (BENCH_LIVE_START=history) it starts after the
 * creation era instead: the factory scan finds the pools created before, their states are read at
 * the start block, then the history blocks and the head.
 *
 * The indexer hears of new heads as an operator of a fast chain would set it up: the node's
 * WebSocket newHeads subscription (the chain's `ws`), with the HTTP poll (`pollIntervalMs`, 1 s
 * by default) behind it. `headsBy: "poll"` (BENCH_LIVE_HEADS=poll): polling only.
 */
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import pg from "pg";
import { cleanEnv, runCli } from "../src/_test/cli-process.js";
import { freePort } from "../src/_test/free-port.js";
import { shapeChainConfig, shapeProfiles } from "../src/shape/profiles.js";
import { startShapeServer } from "../src/shape/server.js";
import { createApiKey } from "../src/store/api-keys.js";
import { createDb } from "../src/store/db.js";
import { percentile } from "./scale-api.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number) => Math.round(n * 10) / 10;

/** VmRSS and VmHWM of one process, in kB; null when it is gone. */
function statusOf(pid: number): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
  } catch {
    return null;
  }
}

/** A process and its descendants (`tokenmarket start` runs the service as its child: src/cli/heap.ts). */
function treeOf(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${out[i]}/task`)) {
        const children = readFileSync(`/proc/${out[i]}/task/${task}/children`, "utf8").trim();
        if (children) out.push(...children.split(/\s+/).map(Number));
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/**
 * VmRSS and VmHWM in MB of the service's process tree (summed: the peak of the sum is at most
 * the sum of the peaks), and of its largest process alone (the service under its parent); null
 * when it is gone.
 */
function memoryOf(
  pid: number,
): { rssMb: number; hwmMb: number; serviceRssMb: number; serviceHwmMb: number } | null {
  const all = treeOf(pid)
    .map(statusOf)
    .filter((s): s is { rss: number; hwm: number } => s !== null);
  if (all.length === 0) return null;
  const mb = (kb: number) => Math.round(kb / 1024);
  const largest = all.reduce((a, b) => (b.rss > a.rss ? b : a));
  return {
    rssMb: mb(all.reduce((sum, s) => sum + s.rss, 0)),
    hwmMb: mb(all.reduce((sum, s) => sum + s.hwm, 0)),
    serviceRssMb: mb(largest.rss),
    serviceHwmMb: mb(all.reduce((m, s) => Math.max(m, s.hwm), 0)),
  };
}

export async function benchLive(options: {
  serverUrl: string;
  shape: "bnb" | "ethereum";
  pools: number;
  /** Blocks to follow after the indexer first reached the head. */
  blocks: number;
  historyBlocks?: number;
  /** Longest wait for the indexer to reach the head the first time (ms). */
  catchUpMs?: number;
  /** The indexer starts after the creation era (factory scan) instead of at block 0. */
  startAfterCreation?: boolean;
  /** How the indexer hears of new heads: the WebSocket subscription (default) or polling alone. */
  headsBy?: "ws" | "poll";
  log?: (line: string) => void;
}) {
  const log = options.log ?? (() => {});
  const profile = shapeProfiles[options.shape];
  const node = await startShapeServer({
    profile: options.shape,
    pools: options.pools,
    tokens: Math.max(1000, Math.round(options.pools / 3)),
    historyBlocks: options.historyBlocks ?? 20,
    live: true,
    limits: "none",
    port: await freePort(),
  });
  const u = node.chain.universe;
  const database = `tokenmarket_bench_live_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: options.serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const dbUrl = new URL(options.serverUrl);
  dbUrl.pathname = `/${database}`;
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-bench-live-"));
  const apiPort = await freePort();
  const configFile = path.join(dir, "config.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      devnet: { enabled: false },
      tokenLists: [],
      api: { host: "127.0.0.1", port: apiPort, rateLimit: { max: 100_000_000, windowMs: 60_000 } },
      chains: [
        {
          ...shapeChainConfig(profile, node.url),
          confirmations: 0,
          // BENCH_LIVE_START=history: the indexer starts after the creation era, as an operator
          // who sets a recent start block: the pools created before it are found by the factory
          // scan and their states read at the start (src/sync/factory-scan.ts, base-state.ts).
          ...(options.startAfterCreation ? { startBlock: u.creationEraBlocks + 1 } : {}),
          ...(options.headsBy === "poll" ? {} : { ws: node.wsUrl }),
        },
      ],
    }),
  );
  const service = runCli(["start", "--config", configFile], cleanEnv({ DATABASE_URL: dbUrl.toString() }), {
    name: "service",
    keepChars: 20_000,
    // BENCH_LIVE_NODE_ARGS: the service's own Node flags (e.g. --cpu-prof), not the benchmark's.
    nodeArgs: process.env.BENCH_LIVE_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
  });
  const pid = service.child.pid as number;
  // BENCH_LIVE_LOG=file: the service's whole log (its "priced batch" lines' steps_ms say where a
  // block's time goes), kept apart from the bounded tail used in failure messages.
  if (process.env.BENCH_LIVE_LOG) {
    const file = createWriteStream(process.env.BENCH_LIVE_LOG);
    service.child.stdout?.pipe(file);
    service.child.stderr?.pipe(file);
  }
  const base = `http://127.0.0.1:${apiPort}`;
  // This process also runs the synthetic node, whose answers to the service's factory scan (10,000
  // logs each) hold its event loop for a while: a connection's 5 s bound could lapse in the wait.
  const db = createDb({
    url: dbUrl.toString(),
    max: 2,
    applicationName: "tokenmarket-bench-live",
    timeouts: { connectTimeoutMs: 60_000 },
  });
  const memory: { t: number; rssMb: number; hwmMb: number; serviceRssMb: number; serviceHwmMb: number }[] =
    [];
  // The V8 heap in use (the service's /metrics), every 10 s: what of the RSS is live objects and
  // what is garbage not yet collected or memory not returned.
  const heap: { t: number; heapUsedMb: number; heapTotalMb: number }[] = [];
  const lag: { t: number; head: number; indexed: number }[] = [];
  const started = Date.now();
  let stopped = false;
  let exited: number | null | undefined;
  void service.exited.then((code) => {
    exited = code;
  });
  // RSS and head lag every second, for the whole run.
  const sampler = (async () => {
    while (!stopped) {
      const m = memoryOf(pid);
      if (m) memory.push({ t: Date.now() - started, ...m });
      if (memory.length % 10 === 1) {
        const text = await fetch(`${base}/metrics`)
          .then((r) => r.text())
          .catch(() => "");
        const mb = (name: string) =>
          Math.round(
            Number(new RegExp(`^tokenmarket_${name} (\\S+)`, "m").exec(text)?.[1] ?? Number.NaN) / 2 ** 20,
          );
        const heapUsedMb = mb("nodejs_heap_size_used_bytes");
        if (Number.isFinite(heapUsedMb))
          heap.push({ t: Date.now() - started, heapUsedMb, heapTotalMb: mb("nodejs_heap_size_total_bytes") });
      }
      const { rows } = await db
        .query<{ indexed_block: number }>("SELECT indexed_block FROM sync_state WHERE chain_id = $1", [
          profile.chainId,
        ])
        .catch(() => ({ rows: [] as { indexed_block: number }[] }));
      if (rows[0])
        lag.push({ t: Date.now() - started, head: node.chain.head(), indexed: rows[0].indexed_block });
      await sleep(1000);
    }
  })();
  try {
    // The API up and the schema migrated: then a key.
    for (;;) {
      if (exited !== undefined)
        throw new Error(`service exited (${exited}):\n${service.output().slice(-3000)}`);
      const ok = await fetch(`${base}/healthz`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) break;
      await sleep(200);
    }
    const { key } = await createApiKey(db, "scale-live");
    const healthz: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      healthz.push(performance.now() - t);
    }
    healthz.sort((a, b) => a - b);
    // Catch-up: the creation era and the history, then the head.
    const catchUpStart = Date.now();
    for (;;) {
      const last = lag.at(-1);
      if (last && node.chain.head() - last.indexed <= 2) break;
      if (exited !== undefined)
        throw new Error(`service exited (${exited}):\n${service.output().slice(-3000)}`);
      if (Date.now() - catchUpStart > (options.catchUpMs ?? 600_000)) {
        // Not a crash of the benchmark: the finding is that the service did not keep up.
        const rate = (s: { t: number; indexed: number }[]) =>
          s.length > 1
            ? ((s.at(-1)?.indexed ?? 0) - (s[0]?.indexed ?? 0)) /
              (((s.at(-1)?.t ?? 0) - (s[0]?.t ?? 0)) / 1000)
            : 0;
        const result = {
          profile: options.shape,
          headsBy: options.headsBy ?? "ws",
          blockTimeMs: profile.blockTimeMs,
          swapsPerBlock: profile.swapsPerBlock,
          pools: options.pools,
          reachedHead: false,
          catchUpSeconds: null,
          indexedBlocksPerSecond: round(rate(lag.slice(-60))),
          nodeBlocksPerSecond: round(1000 / profile.blockTimeMs),
          lastLag: last ? last.head - last.indexed : null,
          rssMb: {
            peakHwm: memory.reduce((m, x) => Math.max(m, x.hwmMb), 0),
            peakSampled: memory.reduce((m, x) => Math.max(m, x.rssMb), 0),
            servicePeakHwm: memory.reduce((m, x) => Math.max(m, x.serviceHwmMb), 0),
            last: memory.at(-1)?.rssMb ?? null,
            samples: memory.filter((_, i) => i % 30 === 0).map((x) => [Math.round(x.t / 1000), x.rssMb]),
          },
          heapMb: heap
            .filter((_, i) => i % 3 === 0)
            .map((x) => [Math.round(x.t / 1000), x.heapUsedMb, x.heapTotalMb]),
          indexedSamples: lag.filter((_, i) => i % 30 === 0).map((x) => [Math.round(x.t / 1000), x.indexed]),
          lagSamples: lag
            .filter((_, i) => i % 10 === 0)
            .map((x) => [Math.round(x.t / 1000), x.head - x.indexed]),
        };
        log(
          `live: the indexer did not reach the head in ${Math.round((Date.now() - catchUpStart) / 1000)} s: ${JSON.stringify(result)}`,
        );
        return result;
      }
      await sleep(250);
    }
    const catchUpSeconds = round((Date.now() - catchUpStart) / 1000);
    log(`live: at the head after ${catchUpSeconds} s (block ${node.chain.head()})`);
    // Following: each new block's appearance, then one of its swaps' pools polled until listed.
    const first = node.chain.head() + 1;
    const last = first + options.blocks - 1;
    const appeared = new Map<number, number>();
    const delays: { block: number; ms: number }[] = [];
    const missing: number[] = [];
    const watcher = (async () => {
      let seen = node.chain.head();
      while (seen < last && !stopped) {
        const h = node.chain.head();
        for (let n = seen + 1; n <= Math.min(h, last); n++) appeared.set(n, Date.now());
        seen = Math.max(seen, h);
        await sleep(10);
      }
    })();
    const poolOf = (n: number) => {
      const swap = node.chain.plannedTxs(n).find((tx) => tx.kind === "swap");
      if (!swap) return null;
      const info = u.poolInfo(swap.pool);
      return { pool: info.address, token0: u.tokenAddress(info.token0) };
    };
    for (let n = first; n <= last; n++) {
      while (!appeared.has(n)) await sleep(5);
      const target = poolOf(n);
      if (!target) continue;
      const query = new URLSearchParams({
        asset_id: `${target.token0}:${profile.chainId}`,
        pair_id: `${target.pool}:${profile.chainId}`,
        limit: "1",
      });
      const deadline = (appeared.get(n) as number) + 60_000;
      for (;;) {
        const response = await fetch(`${base}/api/v1/trades?${query}`, { headers: { "x-api-key": key } });
        const body = (await response.json().catch(() => [])) as { block_number?: number }[];
        if (response.ok && (body[0]?.block_number ?? -1) >= n) {
          delays.push({ block: n, ms: Date.now() - (appeared.get(n) as number) });
          break;
        }
        if (Date.now() > deadline || exited !== undefined) {
          missing.push(n);
          break;
        }
        await sleep(25);
      }
    }
    await watcher;
    const sorted = delays.map((d) => d.ms).sort((a, b) => a - b);
    const followFrom = lag.findIndex((s) => s.head >= first);
    const following = followFrom < 0 ? [] : lag.slice(followFrom);
    const half = following.slice(Math.floor(following.length / 2));
    const lagOf = (s: { head: number; indexed: number }) => s.head - s.indexed;
    const peak = memory.reduce((m, s) => Math.max(m, s.hwmMb), 0);
    const result = {
      profile: options.shape,
      headsBy: options.headsBy ?? "ws",
      blockTimeMs: profile.blockTimeMs,
      swapsPerBlock: profile.swapsPerBlock,
      pools: options.pools,
      catchUpSeconds,
      blocksFollowed: options.blocks,
      delayMs: {
        samples: sorted.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? null,
        missing: missing.length,
        /** [block, ms since it appeared, ms since the start of the run] for each followed block. */
        perBlock: delays.map((d) => [d.block, d.ms, (appeared.get(d.block) as number) - started]),
      },
      healthzMs: { p50: round(percentile(healthz, 50)), p99: round(percentile(healthz, 99)) },
      p99OverBlockTime: round(percentile(sorted, 99) / profile.blockTimeMs),
      headLagBlocks: {
        maxWhileFollowing: following.reduce((m, s) => Math.max(m, lagOf(s)), 0),
        firstHalfMean: round(
          following.slice(0, Math.floor(following.length / 2)).reduce((a, s) => a + lagOf(s), 0) /
            Math.max(1, Math.floor(following.length / 2)),
        ),
        secondHalfMean: round(half.reduce((a, s) => a + lagOf(s), 0) / Math.max(1, half.length)),
        keptUp: half.length > 0 && half.every((s) => lagOf(s) <= 5),
        samples: following.map((s) => [Math.round(s.t / 1000), lagOf(s)]),
      },
      rssMb: {
        peakHwm: peak,
        peakSampled: memory.reduce((m, x) => Math.max(m, x.rssMb), 0),
        servicePeakHwm: memory.reduce((m, x) => Math.max(m, x.serviceHwmMb), 0),
        last: memory.at(-1)?.rssMb ?? null,
        samples: memory.filter((_, i) => i % 10 === 0).map((s) => [Math.round(s.t / 1000), s.rssMb]),
      },
      heapMb: heap.map((x) => [Math.round(x.t / 1000), x.heapUsedMb, x.heapTotalMb]),
    };
    log(
      `live: delay p50 ${result.delayMs.p50} ms, p99 ${result.delayMs.p99} ms, max ${result.delayMs.max} ms (${missing.length} missing); lag max ${result.headLagBlocks.maxWhileFollowing}; peak RSS ${peak} MB`,
    );
    return result;
  } finally {
    stopped = true;
    await sampler.catch(() => {});
    service.child.kill("SIGTERM");
    await Promise.race([service.exited, sleep(15_000)]);
    if (exited === undefined) service.child.kill("SIGKILL");
    await db.end().catch(() => {});
    await node.close();
    const drop = new pg.Client({ connectionString: options.serverUrl });
    await drop.connect();
    await drop.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await drop.end();
    rmSync(dir, { recursive: true, force: true });
  }
}
