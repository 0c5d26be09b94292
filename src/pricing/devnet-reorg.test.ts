import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { assertSameAggregates } from "../_test/aggregates.js";
import type { TestDb } from "../_test/db.js";
import { devnetReferenceTokens } from "../_test/devnet-config.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { indexOnce, startIndexer, waitIndexed } from "../_test/indexer-run.js";
import { snapshotAggregates } from "../_test/sql.js";
import { createTestDbs } from "../_test/test-dbs.js";
import type { ChainConfig } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing, type Pricing } from "./pricing.js";

const CHAIN = 31337;
const pricingOptions = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };
const childScript = path.join(import.meta.dirname, "../_test/pricing-indexer-child.ts");

/** Runs the indexer with pricing in a child process; kills it after `killAfter` priced batches (and a few ms). */
function runChild(
  input: Record<string, unknown>,
  killAfter: number | null,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; batches: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", childScript], {
      env: { ...process.env, TOKENMARKET_PRICING_CHILD: JSON.stringify(input) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let batches = 0;
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.includes('"priced batch"')) continue;
        batches += 1;
        // A few ms after a commit: often inside the next batch's transaction.
        if (killAfter !== null && batches === killAfter) setTimeout(() => child.kill("SIGKILL"), batches % 7);
      }
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve({ code, signal, batches }));
  });
}

describe("aggregates after a devnet reorg and after crashes equal those of a fresh index", () => {
  let devnet: IndexerDevnet;
  let chain: ChainConfig;
  let pricing: Pricing;
  let now: Date;
  const dbs = createTestDbs();
  let fresh: TestDb;

  before(async () => {
    devnet = await startIndexerDevnet({ chainId: CHAIN, historyDays: 0.5, seed: 7 });
    chain = devnet.chain({ maxBlockRange: 25, referenceTokens: devnetReferenceTokens(devnet.deployment) });
    now = new Date(Date.now() + 2 * 3600_000);
    pricing = createPricing({
      config: { pricing: pricingOptions, chains: [chain] },
      logger: createSilentLogger(),
      now: () => now,
    });
  });
  after(async () => {
    await devnet?.stop();
    await dbs.drop();
  });

  it("after a reorg: the rolled-back and re-indexed database equals a fresh index of the new branch", async () => {
    const followed = await dbs.create();
    const snapshot = await devnet.snapshot();
    await devnet.mineSwaps({ blocks: 6, swapsPerBlock: 4, seed: 1 });
    const indexer = await startIndexer(followed.db, chain, {
      derived: pricing,
      options: { initialBlockRange: 10 },
    });
    try {
      const before = await devnet.head();
      await waitIndexed(followed.db, CHAIN, before);
      const swaps = async () =>
        (
          await followed.db.query<{ txs: string }>(
            "SELECT string_agg(tx_hash, ',' ORDER BY block_number, log_index) AS txs FROM swaps",
          )
        ).rows[0]?.txs;
      const swapsBefore = await swaps();
      // The competing branch: from the snapshot, other trades in more blocks.
      await devnet.revert(snapshot);
      await devnet.mineSwaps({ blocks: 8, swapsPerBlock: 3, seed: 2 });
      const head = await devnet.head();
      const block = await devnet.rpc.request<{ hash: string }>("eth_getBlockByNumber", [
        `0x${head.toString(16)}`,
        false,
      ]);
      await waitIndexed(followed.db, CHAIN, head, block.hash);
      assert.notEqual(await swaps(), swapsBefore, "the branch replaced the swaps above the snapshot");
    } finally {
      await indexer.stop();
    }

    fresh = await dbs.create();
    await indexOnce(fresh.db, chain, { derived: pricing });

    await pricing.refreshStats(followed.db, CHAIN, now);
    await pricing.refreshStats(fresh.db, CHAIN, now);
    const expected = await snapshotAggregates(fresh.db, CHAIN);
    // Not a vacuous comparison: the history's swaps made candles and priced tokens.
    assert.ok((expected.candles?.length ?? 0) > 0, "candles");
    assert.ok((expected.token_prices ?? []).length > 0, "token prices");
    assert.deepEqual(await snapshotAggregates(followed.db, CHAIN), expected, "every aggregate table");
  });

  it("after SIGKILLs at random moments and restarts: equal to a fresh index", async () => {
    assert.ok(fresh, "the fresh index of the previous test");
    const crashed = await dbs.create();
    const input = {
      databaseUrl: crashed.url,
      chains: [chain],
      pricing: pricingOptions,
      nowMs: now.getTime(),
      options: { initialBlockRange: 5, restartDelayMs: [100, 1000] },
    };
    let kills = 0;
    for (const killAfter of [2, 3, 1, 4]) {
      const run = await runChild(input, killAfter);
      if (run.signal === "SIGKILL") kills += 1;
      else assert.equal(run.code, 0, "a run that was not killed finished");
    }
    const last = await runChild(input, null);
    assert.equal(last.code, 0, "the last run finishes");
    assert.ok(kills >= 2, `killed ${kills} times mid-way`);

    await assertSameAggregates(pricing, [crashed.db, fresh.db], CHAIN, now, "every aggregate table");
  });
});
