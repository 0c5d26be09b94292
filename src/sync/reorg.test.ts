import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  assertEqualsFreshIndex as assertFresh,
  type IndexerDevnet,
  startIndexerDevnet,
} from "../_test/indexer-devnet.js";
import { indexOnce as indexChainOnce, startIndexer, storedSwapsOf } from "../_test/indexer-run.js";
import { createCapturingLogger, waitFor } from "../_test/indexer-wait.js";
import { createTestDbs } from "../_test/test-dbs.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Db } from "../store/db.js";

const chainOverrides = { reorgWindow: 16, pollIntervalMs: 50 };

const indexOnce = (db: Db, devnet: IndexerDevnet, logger?: Logger) =>
  indexChainOnce(db, devnet.chain(chainOverrides), { logger });

/** The database equals a fresh index of the node's current (canonical) chain. */
const assertEqualsFreshIndex = (db: Db, devnet: IndexerDevnet, label: string) =>
  assertFresh(db, devnet, label, devnet.chain(chainOverrides));

async function chainHash(devnet: IndexerDevnet, block: number): Promise<string> {
  const header = await devnet.rpc.request<{ hash: string }>("eth_getBlockByNumber", [
    `0x${block.toString(16)}`,
    false,
  ]);
  return header.hash;
}

describe("reorgs", () => {
  let devnet: IndexerDevnet;
  const dbs = createTestDbs();
  const newDb = async () => (await dbs.create()).db;

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 0.3, seed: 5 });
  });
  after(async () => {
    await Promise.all([devnet?.stop(), dbs.drop()]);
  });

  it("rolls back a reorg at the same heights while following the head, and ends equal to a fresh index", async () => {
    const db = await newDb();
    const { logger, lines } = createCapturingLogger();
    const indexer = await startIndexer(db, devnet.chain(chainOverrides), { logger });
    try {
      const indexedIs = async (block: number) => {
        const [status] = await getSyncStatus(db, [devnet.chainId]);
        return status?.indexedBlock === block && status.indexedBlockHash === (await chainHash(devnet, block));
      };
      await waitFor(async () => indexedIs(await devnet.head()), "the history is indexed");
      const snapshot = await devnet.snapshot();
      const forkPoint = await devnet.head();
      await devnet.mineSwaps({ blocks: 4, swapsPerBlock: 3, seed: 1 });
      const orphanedHead = await devnet.head();
      await waitFor(() => indexedIs(orphanedHead), "the soon-orphaned blocks are indexed");
      const { rows: orphaned } = await db.query<{ tx_hash: string }>(
        "SELECT tx_hash FROM swaps WHERE chain_id = $1 AND block_number > $2",
        [devnet.chainId, forkPoint],
      );
      assert.ok(orphaned.length >= 10, `swaps of the orphaned blocks were ingested (${orphaned.length})`);

      await devnet.revert(snapshot);
      await devnet.mineSwaps({ blocks: 4, swapsPerBlock: 2, seed: 2 });
      assert.equal(await devnet.head(), orphanedHead, "the canonical chain has the same height");
      await waitFor(() => indexedIs(orphanedHead), "the canonical blocks are indexed");

      const rollback = lines.find((l) => l.msg === "reorg: rolled back to the common ancestor");
      assert.ok(rollback, "the rollback is logged");
      assert.equal(rollback.ancestor_block, forkPoint, "the common ancestor is the fork point");
      const left = await storedSwapsOf(db, devnet.chainId, orphaned);
      assert.equal(left, 0, "no swap of the orphaned blocks is left");
    } finally {
      await indexer.stop();
    }
    await assertEqualsFreshIndex(db, devnet, "after a live reorg");
  });

  it("finds a reorg that happened while it was down, at restart", async () => {
    const db = await newDb();
    const snapshot = await devnet.snapshot();
    await devnet.mineSwaps({ blocks: 3, swapsPerBlock: 3, seed: 3 });
    await indexOnce(db, devnet);
    await devnet.revert(snapshot);
    await devnet.mineSwaps({ blocks: 5, swapsPerBlock: 2, seed: 4 });
    const { logger, lines } = createCapturingLogger();
    const status = await indexOnce(db, devnet, logger);
    assert.equal(status?.phase, "stopped", "the restarted run ends cleanly");
    assert.ok(
      lines.some((l) => l.msg === "reorg: rolled back to the common ancestor"),
      "the stored checkpoint's hash was checked at start",
    );
    await assertEqualsFreshIndex(db, devnet, "after a reorg found at restart");
  });

  it("stops the chain loudly, its data marked off the canonical chain, on a reorg deeper than every kept hash", async () => {
    const db = await newDb();
    const overrides = { reorgWindow: 2, pollIntervalMs: 50 };
    const bounded = (logger: Logger) =>
      indexChainOnce(db, devnet.chain(overrides), { logger, options: { keptBlockHashes: 2 } });
    const snapshot = await devnet.snapshot();
    await devnet.mineSwaps({ blocks: 4, swapsPerBlock: 1, seed: 6 });
    await bounded(createSilentLogger());
    await devnet.revert(snapshot);
    await devnet.mineSwaps({ blocks: 5, swapsPerBlock: 1, seed: 7 });
    const { logger, lines } = createCapturingLogger();
    const status = await bounded(logger);
    assert.equal(status?.phase, "failed", "indexing of the chain stops");
    assert.match(status?.error ?? "", /deeper than the kept block hashes/, "the status says why");
    const fatal = lines.find((l) => l.level === 60);
    assert.equal(fatal?.error_name, "DeepReorgError", "logged at fatal level with the error class");
    const [sync] = await getSyncStatus(db, [devnet.chainId]);
    assert.equal(
      sync?.offCanonical,
      status?.error,
      "the data stays marked off the canonical chain, with the reason",
    );
  });
});
