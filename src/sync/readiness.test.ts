import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { assertEqualsFreshIndex, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { startIndexer } from "../_test/indexer-run.js";
import { createCapturingLogger } from "../_test/indexer-wait.js";
import { createApiServer as createApi } from "../api/server.js";
import { parseConfig } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import type { Indexer } from "./indexer.js";

/** The bound of the node's silence before the chain is not ready (maxHeadAgeMs), shortened for the test. */
const MAX_HEAD_AGE_MS = 8000;
const FREEZE_MS = 25_000;

type Ready = {
  status: number;
  body: { status: string; reasons: string[]; chains: Record<string, unknown>[] };
};

describe("readiness from reality (a hardhat node frozen, a reorg deeper than the window recovered)", () => {
  let devnet: IndexerDevnet;
  let testDb: TestDb;
  let indexer: Indexer;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  const { logger, lines } = createCapturingLogger("info");

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 0.1, seed: 11 });
    testDb = await createTestDb();
    const chain = devnet.chain({ reorgWindow: 2, pollIntervalMs: 100, maxHeadAgeMs: MAX_HEAD_AGE_MS });
    indexer = await startIndexer(testDb.db, chain, {
      logger,
      options: {
        restartDelayMs: [200, 2000],
        rpc: { timeoutMs: 2000, attempts: 3, baseDelayMs: 100, maxDelayMs: 1000 },
      },
    });
    ({ key } = await createApiKey(testDb.db, "readiness"));
    app = createServer(parseConfig({ devnet: { enabled: false }, chains: [chain] }));
    base = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    try {
      if (devnet) process.kill(devnet.devnet.pid, "SIGCONT");
    } catch {}
    await app?.close();
    await indexer?.stop();
    await Promise.all([devnet?.stop(), testDb?.drop()]);
  });

  function createServer(config: ReturnType<typeof parseConfig>) {
    return createApi({
      config,
      db: testDb.db,
      logger: createSilentLogger(),
      indexer,
      syncPollMs: 100,
    });
  }

  const readyz = async (): Promise<Ready> => {
    const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) });
    return { status: response.status, body: (await response.json()) as Ready["body"] };
  };
  const dataAnswer = () =>
    fetch(`${base}/v1/tokens/search?searchString=USDC`, {
      headers: { "x-api-key": key },
      signal: AbortSignal.timeout(5000),
    });
  /** Milliseconds until `condition` holds of /readyz, polled every 200 ms; throws after `timeoutMs`. */
  const until = async (condition: (r: Ready) => boolean, what: string, timeoutMs: number) => {
    const started = performance.now();
    let last: Ready | undefined;
    while (performance.now() - started < timeoutMs) {
      last = await readyz();
      if (condition(last)) return { ms: performance.now() - started, ready: last };
      await delay(200);
    }
    throw new Error(`${what} not within ${timeoutMs} ms: ${JSON.stringify(last?.body)}`);
  };

  it("a frozen node: /readyz 503 naming it within 15 s, 200 again within 15 s of SIGCONT, nothing lost", async (t) => {
    await until((r) => r.status === 200, "ready after the backfill", 120_000);
    assert.equal((await dataAnswer()).headers.get("x-indexing-stopped"), null);

    process.kill(devnet.devnet.pid, "SIGSTOP");
    const frozenAt = performance.now();
    const down = await until((r) => r.status === 503, "503 while the node is frozen", 15_000);
    assert.match(down.ready.body.reasons.join("; "), /node of chain 31337 has not answered for \d+ s/);
    assert.equal(down.ready.body.chains[0]?.indexer, "node-unreachable");
    const stalled = await dataAnswer();
    assert.match(stalled.headers.get("x-indexing-stopped") ?? "", /^31337=\d{4}-\d\d-\d\dT/);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /tokenmarket_node_unreachable\{chain_id="31337"\} 1/);
    assert.match(metrics, /tokenmarket_chain_ready\{chain_id="31337"\} 0/);
    // Still 503 for the rest of the freeze.
    await delay(Math.max(0, FREEZE_MS - (performance.now() - frozenAt)));
    assert.equal((await readyz()).status, 503);
    process.kill(devnet.devnet.pid, "SIGCONT");

    // The chain moves on; the indexer follows and the answer is ready again.
    await devnet.mineSwaps({ blocks: 3, swapsPerBlock: 1, seed: 12 });
    const head = await devnet.head();
    const up = await until(
      (r) => r.status === 200 && r.body.chains[0]?.indexed_block === head,
      "ready again at the new head",
      15_000,
    );
    assert.equal((await dataAnswer()).headers.get("x-indexing-stopped"), null);
    assert.ok(
      lines.some((l) => l.level === 40 && /rpc retry/.test(l.msg)),
      "failed RPC retries are logged at warn",
    );
    // Nothing lost or doubled: equal to a fresh index of the same chain.
    await assertEqualsFreshIndex(testDb.db, devnet, "after the freeze", devnet.chain({ reorgWindow: 2 }));
    t.diagnostic(
      `node frozen ${FREEZE_MS / 1000} s (bound ${MAX_HEAD_AGE_MS / 1000} s): /readyz 503 after ${Math.round(down.ms)} ms; 200 at the new head ${Math.round(up.ms)} ms after SIGCONT (3 blocks mined)`,
    );
  });

  it("a reorg deeper than the window: recovered by itself, /readyz 200 at the new branch's head, data as a fresh index", async (t) => {
    const snapshot = await devnet.snapshot();
    await devnet.mineSwaps({ blocks: 4, swapsPerBlock: 1, seed: 13 });
    const head = await devnet.head();
    await until((r) => r.status === 200 && r.body.chains[0]?.indexed_block === head, "indexed", 30_000);
    await devnet.revert(snapshot);
    const revertedAt = performance.now();
    // A new branch of 5 blocks replaces the 4 indexed ones: 4 blocks deep, twice the window of 2.
    await devnet.mineSwaps({ blocks: 5, swapsPerBlock: 1, seed: 14 });
    const newHead = await devnet.head();
    assert.equal(newHead, head + 1);
    const seen = new Set<string>();
    const up = await until(
      (r) => {
        seen.add(String(r.body.chains[0]?.indexer));
        return r.status === 200 && r.body.chains[0]?.indexed_block === newHead;
      },
      "ready at the new branch's head",
      30_000,
    );
    assert.ok(!seen.has("stopped"), `the indexer never stopped (${[...seen].join(", ")})`);
    assert.equal(up.ready.body.chains[0]?.indexer, "running");
    assert.equal((await dataAnswer()).headers.get("x-indexing-stopped"), null);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /tokenmarket_indexer_stopped\{chain_id="31337"\} 0/);
    assert.match(metrics, /tokenmarket_chain_ready\{chain_id="31337"\} 1/);
    const rolledBack = lines.find(
      (l) => l.level === 40 && l.msg === "reorg: rolled back to the common ancestor" && l.depth === 4,
    );
    assert.ok(rolledBack, "the rollback is logged at warn with its depth, 4 blocks");
    assert.equal(rolledBack.reorg_window, 2);
    // The abandoned branch's rows are gone: equal to a fresh index of the node's chain.
    await assertEqualsFreshIndex(testDb.db, devnet, "after the deep reorg", devnet.chain({ reorgWindow: 2 }));
    t.diagnostic(
      `deep reorg (4 blocks, window 2): /readyz 200 at the new head ${Math.round(up.ms)} ms after the 5 new blocks were mined (${Math.round(performance.now() - revertedAt)} ms since the revert); indexer states seen: ${[...seen].join(", ")}`,
    );
  });
});
