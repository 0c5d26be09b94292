import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type FlakyRpc, startFlakyRpc } from "../_test/flaky-rpc.js";
import { freePort } from "../_test/free-port.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSameDump, dumpIndexedData } from "../_test/indexer-dump.js";
import type { ChainConfig } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import type { Db } from "../store/db.js";
import { noDerivedData } from "./derived.js";
import { createIndexer } from "./indexer.js";
import type { IndexerOptions } from "./options.js";

async function indexOnce(db: Db, chain: ChainConfig, options: Partial<IndexerOptions> = {}) {
  const indexer = createIndexer({
    config: { chains: [chain] },
    db,
    logger: createSilentLogger(),
    derived: noDerivedData,
    options: { follow: false, progressBar: false, ...options },
  });
  const startedAt = Date.now();
  await indexer.start();
  await indexer.done();
  const [status] = indexer.status();
  assert.equal(status?.phase, "stopped", `the run ended cleanly (${status?.error ?? "no error"})`);
  return Date.now() - startedAt;
}

describe("a flaky RPC provider", () => {
  let devnet: IndexerDevnet;
  let proxy: FlakyRpc;
  const dbs: TestDb[] = [];

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 0.5, seed: 31 });
    proxy = await startFlakyRpc({
      target: devnet.rpcUrl,
      seed: 7,
      holdMs: 1200,
      retryAfterSeconds: 0,
      sequence: ["rateLimit", "drop", "timeout", "serverError", "rangeTooLarge"],
      faults: {
        timeout: 0.02,
        rateLimit: 0.08,
        serverError: 0.05,
        drop: 0.05,
        rangeTooLarge: 0.1,
        maxLogRange: 40,
      },
    });
  });
  after(async () => {
    await Promise.all([devnet?.stop(), proxy?.stop(), ...dbs.map((d) => d.drop())]);
  });

  it("slows ingestion but loses nothing: timeouts, 429, 5xx, dropped connections, range errors, a dead first URL", async (t) => {
    const [clean, flaky] = await Promise.all([createTestDb(), createTestDb()]);
    dbs.push(clean, flaky);
    // Small ranges and batches: many HTTP requests, so that every kind of fault is drawn often.
    const cleanMs = await indexOnce(clean.db, devnet.chain({ maxBlockRange: 20 }));
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    const flakyMs = await indexOnce(
      flaky.db,
      devnet.chain({ maxBlockRange: 200, rpc: [deadUrl, proxy.url] }),
      {
        rpc: { timeoutMs: 800, baseDelayMs: 20, maxDelayMs: 300, attempts: 30 },
        restartDelayMs: [50, 500],
      },
    );
    const { stats } = proxy;
    t.diagnostic(`proxy ${JSON.stringify(stats)}; ${flakyMs} ms through it vs ${cleanMs} ms direct`);
    for (const fault of ["timeout", "rateLimit", "serverError", "drop", "rangeTooLarge"] as const) {
      assert.ok(stats[fault] > 0, `the proxy injected ${fault} (${JSON.stringify(stats)})`);
    }
    assertSameDump(
      await dumpIndexedData(flaky.db, [devnet.chainId]),
      await dumpIndexedData(clean.db, [devnet.chainId]),
      `through the flaky proxy (${JSON.stringify(stats)}; ${flakyMs} ms vs ${cleanMs} ms clean)`,
    );
  });
});
