import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type FlakyRpc, startFlakyRpc } from "../_test/flaky-rpc.js";
import { assertEqualsFreshIndex, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { startIndexer } from "../_test/indexer-run.js";
import { createCapturingLogger, waitFor } from "../_test/indexer-wait.js";
import { createTestDbs } from "../_test/test-dbs.js";
import { createRpcMetrics } from "../rpc/metrics.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Db } from "../store/db.js";

/**
 * A provider answering HTTP 429 with Retry-After to 80 % of requests for a while (the storm):
 * the indexer honours Retry-After, slows down, keeps what it fetched, and still advances.
 */

const STORM_MS = 60_000;
const RETRY_AFTER_S = 2;
/** HTTP requests one client can have in flight: `concurrency` waves × at most SOLO_PARALLEL requests each. */
const MAX_IN_FLIGHT = 4 * 8;

describe("a rate-limited provider", { timeout: 900_000 }, () => {
  let devnet: IndexerDevnet;
  let proxy: FlakyRpc;
  const dbs = createTestDbs();

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 1, seed: 41 });
    proxy = await startFlakyRpc({
      target: devnet.rpcUrl,
      faults: {},
      seed: 5,
      retryAfterSeconds: RETRY_AFTER_S,
    });
  });
  after(async () => {
    await Promise.all([devnet?.stop(), proxy?.stop(), dbs.drop()]);
  });

  const indexedOf = async (db: Db) => (await getSyncStatus(db, [devnet.chainId]))[0]?.indexedBlock ?? -1;

  it("advances through a storm of 80 % 429s at a bounded rate, naming the host, and ends equal to a fresh index", async (t) => {
    const { db } = await dbs.create();
    const host = new URL(proxy.url).host;
    const { logger, lines } = createCapturingLogger("info");
    const rpcMetrics = createRpcMetrics();
    // Small ranges: the backfill is many batches, and the storm comes in the middle of it.
    const indexer = await startIndexer(db, devnet.chain({ rpc: [proxy.url], maxBlockRange: 4 }), {
      logger,
      options: { initialBlockRange: 4 },
      rpcMetrics,
    });
    let during: { from: number; indexed: number; requests: number; throttled: number; seconds: number };
    try {
      await waitFor(async () => (await indexedOf(db)) >= 0, "the backfill's first batch", { intervalMs: 10 });
      proxy.setFaults({ rateLimit: 0.8 });
      const before = { ...proxy.stats };
      const startedAt = Date.now();
      const from = await indexedOf(db);
      await new Promise((resolve) => setTimeout(resolve, STORM_MS));
      during = {
        from,
        indexed: await indexedOf(db),
        requests: proxy.stats.requests - before.requests,
        throttled: proxy.stats.rateLimit - before.rateLimit,
        seconds: (Date.now() - startedAt) / 1000,
      };
      proxy.setFaults({});
      const head = await devnet.head();
      await waitFor(async () => (await indexedOf(db)) === head, "indexed to the head after the storm", {
        timeoutMs: 600_000,
      });
    } finally {
      await indexer.stop();
    }
    t.diagnostic(
      `storm of ${during.seconds.toFixed(1)} s: indexed block ${during.from} -> ${during.indexed}, ${during.requests} requests (${(during.requests / during.seconds).toFixed(2)}/s), ${during.throttled} answered 429`,
    );
    assert.ok(during.indexed > during.from, "the indexed block advanced during the storm");
    assert.ok(during.throttled > 0, "the storm throttled");
    // Every 429 pauses every request for Retry-After; what was in flight then may be throttled too.
    assert.ok(
      during.throttled <= MAX_IN_FLIGHT * (during.seconds / RETRY_AFTER_S + 1),
      `throttled answers bounded by the pauses (${during.throttled})`,
    );
    const restarts = lines.filter((l) => l.msg === "chain indexing failed; restarting from the checkpoint");
    assert.deepEqual(restarts, [], "no restart from the checkpoint: the work fetched is kept");
    const warnings = lines.filter((l) => l.level >= 40);
    assert.ok(warnings.length > 0, "the throttling is warned about");
    for (const line of warnings)
      assert.equal(line.rpc_host, host, `names the provider's host: ${JSON.stringify(line)}`);
    for (const line of lines) assert.ok(!JSON.stringify(line).includes(proxy.url), "never the whole URL");
    const metrics = await rpcMetrics.registry.metrics();
    assert.match(
      metrics,
      new RegExp(`tokenmarket_rpc_throttled_total\\{chain_id="${devnet.chainId}",host="${host}"\\} [1-9]`),
    );
    assert.match(
      metrics,
      new RegExp(`tokenmarket_rpc_retries_total\\{chain_id="${devnet.chainId}",host="${host}"\\} [1-9]`),
    );

    await assertEqualsFreshIndex(db, devnet, "after the storm");
  });
});
