import * as assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { pino } from "pino";
import { createTestDb } from "../_test/db.js";
import { type CapturedLog, createCapturingLogger } from "../_test/indexer-wait.js";
import { createApiServer } from "../api/server.js";
import { parseConfig } from "../config/load.js";
import { chainSchema, type DexConfig } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createRpcClient } from "../rpc/client.js";
import { RpcTimeoutError, timedOutWaiting } from "../rpc/errors.js";
import { shapeChainConfig, shapeProfiles } from "../shape/profiles.js";
import { type ShapeServer, startShapeServer } from "../shape/server.js";
import { insertChainRow, loadFactoryScans } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { noDerivedData } from "./derived.js";
import { type FactoryScanProgress, scanFactories } from "./factory-scan.js";
import { createIndexer } from "./indexer.js";

// The scan of the factories for pools created before the start block, on the synthetic Ethereum's
// creation era (many creations per block, real factory addresses, real providers' eth_getLogs
// limits and messages): every pool stored once, through refused ranges, stops and crashes.

const profile = shapeProfiles.ethereum;
const dexes: DexConfig[] = chainSchema.parse(shapeChainConfig(profile, "http://127.0.0.1:1")).dexes;

type Shape = { server: ShapeServer; checkpoint: number; expected: Set<string> };

/** A synthetic Ethereum whose creation era ends a few blocks before `checkpoint`. */
async function startShape(options: {
  pools: number;
  creationsPerBlock: number;
  limits: "alchemy" | "infura";
}) {
  const server = await startShapeServer({
    profile: "ethereum",
    pools: options.pools,
    tokens: 2000,
    creationsPerBlock: options.creationsPerBlock,
    historyBlocks: 8,
    live: false,
    limits: options.limits,
    port: 0,
  });
  const u = server.chain.universe;
  const checkpoint = u.creationEraBlocks + 3;
  const expected = new Set(Array.from({ length: u.poolsAt(checkpoint) }, (_, i) => u.poolInfo(i).address));
  return { server, checkpoint, expected } satisfies Shape;
}

/** A fresh database with the chain's row (as the genesis check would make it). */
async function createChainDb() {
  const testDb = await createTestDb();
  await insertChainRow(testDb.db, {
    chainId: 1,
    name: "synthetic",
    genesisHash: `0x${"00".repeat(32)}`,
    devnet: true,
  });
  return testDb;
}

async function storedPools(db: Db): Promise<{ total: number; distinct: Set<string> }> {
  const { rows } = await db.query<{ address: string }>("SELECT address FROM pools WHERE chain_id = 1");
  return { total: rows.length, distinct: new Set(rows.map((r) => r.address)) };
}

function scan(
  shape: Shape,
  db: Db,
  extra: Partial<Parameters<typeof scanFactories>[0]> & { logger?: ReturnType<typeof createSilentLogger> },
) {
  const rpc = createRpcClient({
    chain: { id: 1, rpc: [shape.server.url] },
    logger: createSilentLogger(),
    options: { attempts: 2, baseDelayMs: 10, maxDelayMs: 50 },
  });
  return scanFactories({
    db,
    rpc,
    chainId: 1,
    dexes,
    checkpoint: shape.checkpoint,
    maxRange: 100_000,
    logger: createSilentLogger(),
    isStopped: () => false,
    ...extra,
  });
}

describe("the factory scan at the shape node's limits", () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  /** A synthetic Ethereum (startShape) and a database for it, with the chain's row unless `chainRow` is false; both closed after the tests. */
  const shapeAndDb = async (options: Parameters<typeof startShape>[0], chainRow = true) => {
    const shape = await startShape(options);
    const testDb = await (chainRow ? createChainDb() : createTestDb());
    cleanup.push(
      () => shape.server.close(),
      () => testDb.drop(),
    );
    return { shape, testDb };
  };

  for (const limits of ["infura", "alchemy"] as const) {
    it(`splits the ranges ${limits} refuses and stores every pool once`, async () => {
      // Alchemy caps answers only over 2,000 blocks: a creation era of 2,500 blocks, in which
      // Uniswap V3's factory (two pools in three) creates over 10,000 pools.
      const { shape, testDb } = await shapeAndDb({ pools: 20_000, creationsPerBlock: 8, limits });
      const { logger, lines } = createCapturingLogger("debug");
      const progress: FactoryScanProgress[] = [];
      const found: string[] = [];
      const result = await scan(shape, testDb.db, {
        logger,
        logIntervalMs: 0,
        onProgress: (p) => progress.push(p),
        onPools: (pools) => {
          for (const p of pools) found.push(p.address);
        },
      });
      const refused = lines.filter((l) => l.msg === "factory scan range refused; splitting it");
      assert.ok(refused.length > 0, "the provider refused at least one range");
      const message = limits === "infura" ? /more than 10000 results/ : /Log response size exceeded/;
      for (const line of refused) assert.match(`${line.error} ${line.detail}`, message);
      const stored = await storedPools(testDb.db);
      assert.equal(stored.total, shape.expected.size, "one row per pool created up to the checkpoint");
      assert.deepEqual(stored.distinct, shape.expected, "exactly the pools the factories created");
      assert.equal(result.poolsFound, shape.expected.size);
      assert.equal(found.length, shape.expected.size, "each range's pools handed over once");
      // Progress: monotonic, ends at 1, with an info line per range carrying the figures.
      for (let i = 1; i < progress.length; i++)
        assert.ok(
          (progress[i]?.blocksDone ?? 0) >= (progress[i - 1]?.blocksDone ?? 0),
          "progress never goes back",
        );
      assert.equal(progress.at(-1)?.fraction, 1);
      const info = lines.filter((l: CapturedLog) => l.msg === "factory scan progress");
      assert.equal(info.length, progress.length - 1, "a progress line per range (interval 0)");
      const last = info.at(-1) as CapturedLog;
      assert.equal(last.percent, 100);
      assert.equal(last.pools_found, shape.expected.size);
      assert.equal(last.scanned_block, shape.checkpoint);
      for (const key of [
        "dex",
        "factory",
        "target_block",
        "pools_per_second",
        "blocks_per_second",
        "eta_seconds",
      ])
        assert.ok(key in last, `a progress line carries ${key}`);
      const scans = await loadFactoryScans(testDb.db, 1);
      for (const dex of dexes) assert.equal(scans.get(dex.factory)?.scannedBlock, shape.checkpoint);
    });
  }

  it("resumes after a stop and after a crash inside a write, every pool stored once", async () => {
    const { shape, testDb } = await shapeAndDb({ pools: 20_000, creationsPerBlock: 20, limits: "infura" });

    // 1. Stopped after three ranges (the indexer's stop): what was committed stays.
    let ranges = 0;
    // Ranges of 50 blocks at most: some twenty per factory, so that there is a middle to stop in.
    const first = await scan(shape, testDb.db, {
      maxRange: 50,
      onPools: () => {
        ranges++;
      },
      isStopped: () => ranges >= 3,
    });
    const afterStop = await storedPools(testDb.db);
    assert.ok(
      afterStop.total > 0 && afterStop.total < shape.expected.size,
      `a part stored (${afterStop.total})`,
    );
    assert.equal(first.poolsFound, afterStop.total);
    const scansAfterStop = await loadFactoryScans(testDb.db, 1);
    assert.ok(
      [...scansAfterStop.values()].some((s) => s.scannedBlock < s.targetBlock),
      "the saved progress is short of the target",
    );

    // 2. A crash in the middle of the third write from now (after the pools' insert is sent, the
    // transaction dies): nothing of it is kept, the progress saved before it is.
    let writes = 0;
    await assert.rejects(
      scan(shape, testDb.db, {
        maxRange: 50,
        fence: async (client) => {
          writes++;
          if (writes === 3) {
            await client.query("SELECT 1");
            throw new Error("killed inside the transaction");
          }
        },
      }),
      /killed inside the transaction/,
    );
    const afterCrash = await storedPools(testDb.db);
    assert.ok(afterCrash.total > afterStop.total, "the writes before the crash are kept");
    assert.equal(afterCrash.total, afterCrash.distinct.size);
    const scansAfterCrash = await loadFactoryScans(testDb.db, 1);
    for (const [factory, s] of scansAfterCrash) {
      const { rows } = await testDb.db.query<{ n: string }>(
        "SELECT count(*) AS n FROM pools WHERE chain_id = 1 AND factory = $1 AND created_block > $2",
        [factory, s.scannedBlock],
      );
      assert.equal(Number(rows[0]?.n), 0, "no pool stored beyond its factory's saved progress");
    }

    // 3. Resumed: from the saved progress, to the end; the progress starts where it was.
    const progress: FactoryScanProgress[] = [];
    const last = await scan(shape, testDb.db, { onProgress: (p) => progress.push(p) });
    assert.ok((progress[0]?.fraction ?? 0) > 0, `resumed, not restarted (${progress[0]?.fraction})`);
    assert.equal(progress.at(-1)?.fraction, 1);
    const final = await storedPools(testDb.db);
    assert.equal(final.total, shape.expected.size, "every pool stored exactly once");
    assert.deepEqual(final.distinct, shape.expected);
    assert.equal(
      last.poolsFound,
      shape.expected.size - afterCrash.total,
      "the resumed run stored only the rest",
    );
  });

  /**
   * An HTTP JSON-RPC proxy in front of the shape node; `answer` may take over a request (hang it,
   * refuse it) by returning true, else it is forwarded.
   */
  async function startProxy(
    target: string,
    answer: (call: { method: string; params: unknown[] }, response: ServerResponse) => boolean,
  ) {
    const server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString("utf8");
      const call = JSON.parse(body) as { method: string; params: unknown[] };
      if (!Array.isArray(call) && answer(call, response)) return;
      const forwarded = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      response.writeHead(forwarded.status, { "content-type": "application/json" });
      response.end(Buffer.from(await forwarded.arrayBuffer()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  const blocksOf = (params: unknown[]) => {
    const filter = params[0] as { fromBlock: string; toBlock: string };
    return Number(filter.toBlock) - Number(filter.fromBlock) + 1;
  };

  it("splits a range the node leaves unanswered until the range's deadline, not when the node is down", async () => {
    const shape = await startShape({ pools: 4_000, creationsPerBlock: 8, limits: "infura" });
    const testDb = await createChainDb();
    // The node never answers eth_getLogs over more than 200 blocks (a dense range it cannot serve
    // in time); while `down`, it answers every eth_getLogs with a 503.
    let down = false;
    let hung = 0;
    const proxy = await startProxy(shape.server.url, (call, response) => {
      if (call.method !== "eth_getLogs") return false;
      if (down) {
        response.writeHead(503).end("unavailable");
        return true;
      }
      if (blocksOf(call.params) > 200) {
        hung++;
        return true;
      }
      return false;
    });
    cleanup.push(
      () => proxy.close(),
      () => shape.server.close(),
      () => testDb.drop(),
    );
    // While the node is up, a request waits 300 ms (eight attempts with backoff would be several
    // seconds a range). While it is down, its 503s come at once, but a loaded machine may take
    // longer than 300 ms to deliver one, which would read as silence: that phase waits 5 s.
    const rpcOf = (timeoutMs: number) =>
      createRpcClient({
        chain: { id: 1, rpc: [proxy.url] },
        logger: createSilentLogger(),
        options: { timeoutMs, attempts: 8, baseDelayMs: 100, maxDelayMs: 400 },
      });
    const { logger, lines } = createCapturingLogger("debug");
    const run = (timeoutMs: number) =>
      scanFactories({
        db: testDb.db,
        rpc: rpcOf(timeoutMs),
        chainId: 1,
        dexes,
        checkpoint: shape.checkpoint,
        maxRange: 100_000,
        logger,
        isStopped: () => false,
        rangeDeadlineMs: 700,
      });

    // 1. Down: the range's deadline passes between refused attempts. That is no reason to split.
    down = true;
    await assert.rejects(run(5_000), (error: Error) => {
      assert.ok(error instanceof RpcTimeoutError, `${error.name}: ${error.message}`);
      assert.ok(!timedOutWaiting(error), "the deadline came while the node refused, not while it was asked");
      return true;
    });
    assert.equal(
      lines.filter((l) => l.msg === "factory scan range refused; splitting it").length,
      0,
      "no range split while the node was down",
    );

    // 2. Up, but silent on wide ranges: each is split after its deadline, and every pool is found.
    down = false;
    hung = 0;
    const result = await run(300);
    const splits = lines.filter((l) => l.msg === "factory scan range refused; splitting it");
    assert.ok(splits.length > 0 && hung > 0, "the wide ranges went unanswered and were split");
    for (const line of splits) assert.match(String(line.error), /no answer within/);
    const stored = await storedPools(testDb.db);
    assert.deepEqual(stored.distinct, shape.expected, "exactly the pools the factories created");
    assert.equal(stored.total, shape.expected.size);
    assert.equal(result.poolsFound, shape.expected.size);
    // Each split costs one deadline (0.7 s: two or three requests of 300 ms), not the client's
    // eight attempts of a range.
    assert.ok(hung <= splits.length * 3, `${hung} unanswered requests for ${splits.length} splits`);
  });

  it("shows the scan in /readyz and /metrics while it runs", async () => {
    const { shape, testDb } = await shapeAndDb(
      { pools: 20_000, creationsPerBlock: 20, limits: "infura" },
      false,
    );
    const chain = chainSchema.parse({
      ...shapeChainConfig(profile, shape.server.url),
      startBlock: shape.checkpoint + 1,
      confirmations: 0,
      // The node is held still below for as long as the test looks: its silence must not become
      // the readiness reason, however slowly a loaded machine gets there.
      maxHeadAgeMs: 3_600_000,
    });
    // The node stalls at the first progress line, which is written synchronously after a range's
    // commit: the scan is then held at a known point, its next eth_getLogs unanswered.
    let paused = false;
    const logger = pino(
      { level: "info" },
      {
        write(line: string) {
          if (!paused && (JSON.parse(line) as CapturedLog).msg === "factory scan progress") {
            paused = true;
            shape.server.pause();
          }
        },
      },
    );
    const indexer = createIndexer({
      config: { chains: [chain] },
      db: testDb.db,
      logger,
      derived: noDerivedData,
      options: { follow: false, progressBar: false, progressLogIntervalMs: 0 },
    });
    const app = createApiServer({
      config: parseConfig({ devnet: { enabled: false }, chains: [chain] }),
      db: testDb.db,
      logger: createSilentLogger(),
      indexer,
      syncPollMs: 100,
    });
    cleanup.push(
      () => app.close(),
      () => indexer.stop(),
    );
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    await indexer.start();
    while (!paused) await new Promise((r) => setTimeout(r, 5));
    const status = indexer.status()[0];
    assert.equal(status?.phase, "scanning-factories");
    const percent = Math.floor((status?.factoryScan?.fraction ?? -1) * 100);
    assert.ok(percent >= 0 && percent < 100, `part of the scan done (${percent} %)`);
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 503);
    const body = (await ready.json()) as { reasons: string[] };
    assert.ok(
      body.reasons.some((r) => r.includes(`scanning factories ${percent}%`)),
      `the reason says so: ${JSON.stringify(body.reasons)}`,
    );
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const gauge = metrics.match(/^tokenmarket_indexer_factory_scan_ratio\{chain_id="1"\} ([0-9.e-]+)$/m);
    assert.ok(gauge, "the gauge is exported");
    assert.equal(Number(gauge[1]), status?.factoryScan?.fraction);

    shape.server.resume();
    await indexer.done();
    assert.equal(indexer.status()[0]?.phase, "stopped", indexer.status()[0]?.error ?? "");
    const stored = await storedPools(testDb.db);
    assert.deepEqual(stored.distinct, shape.expected);
    const later = await (await fetch(`${base}/metrics`)).text();
    assert.doesNotMatch(
      later,
      /^tokenmarket_indexer_factory_scan_ratio\{/m,
      "no gauge once the scan is over",
    );
  });
});
