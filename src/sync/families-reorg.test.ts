import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertEqualsFreshIndex, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { indexOnce as indexChainOnce } from "../_test/indexer-run.js";
import { createCapturingLogger } from "../_test/indexer-wait.js";
import { createTestDbs } from "../_test/test-dbs.js";
import type { Logger } from "../internal/logger.js";
import type { Db } from "../store/db.js";

// A reorg over the V4 PoolManager's and the Algebra factory's pools: a pool born (V4 Initialize,
// Algebra Pool event) and liquidity moved (V4 ModifyLiquidity ±, Algebra Mint/Burn/Collect) in
// blocks that the reorg takes away; the database must then equal a fresh index of the node's
// chain. (crash.test.ts SIGKILLs a backfill over every family's pools.)

const chainOverrides = { reorgWindow: 16, pollIntervalMs: 50 };

const indexOnce = (db: Db, devnet: IndexerDevnet, logger?: Logger) =>
  indexChainOnce(db, devnet.chain(chainOverrides), { logger });

/** The pools stored, by address, with their family. */
async function storedPools(db: Db, chainId: number): Promise<Map<string, string>> {
  const { rows } = await db.query<{ address: string; protocol: string }>(
    "SELECT address, protocol FROM pools WHERE chain_id = $1",
    [chainId],
  );
  return new Map(rows.map((r) => [r.address, r.protocol]));
}

/** Pool events of one block per kind and family, as "family:kind" → count. */
async function eventsOfBlock(db: Db, chainId: number, block: number): Promise<Record<string, number>> {
  const { rows } = await db.query<{ key: string; n: number }>(
    `SELECT p.protocol || ':' || e.kind AS key, count(*)::int AS n
       FROM pool_events e JOIN pools p ON p.chain_id = e.chain_id AND p.address = e.pool
      WHERE e.chain_id = $1 AND e.block_number = $2
      GROUP BY 1 ORDER BY 1`,
    [chainId, block],
  );
  return Object.fromEntries(rows.map((r) => [r.key, r.n]));
}

describe("reorgs with V4 and Algebra pools", () => {
  let devnet: IndexerDevnet;
  const dbs = createTestDbs();

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 0.1, seed: 17, allFamilies: true });
  });
  after(async () => {
    await Promise.all([devnet?.stop(), dbs.drop()]);
  });

  it("rolls back a V4 Initialize, an Algebra pool's creation and their liquidity changes, and ends equal to a fresh index", async () => {
    const { db } = await dbs.create();
    const { chainId } = devnet;
    const snapshot = await devnet.snapshot();
    const orphan = await devnet.mineFamilyEvents({
      newV4Pool: { tokens: ["LINK", "USDC"], fee: 500, tickSpacing: 10 },
      newAlgebraPool: ["UNI", "USDC"],
    });
    await devnet.mineFamilyEvents({ size: 2 });
    await indexOnce(db, devnet);
    const v4Id = orphan.v4PoolId as string;
    const algebraPool = orphan.algebraPool as string;
    const before = await storedPools(db, chainId);
    assert.equal(before.get(v4Id), "v4", "the new V4 pool was indexed from its Initialize");
    assert.equal(
      before.get(algebraPool),
      "algebra",
      "the new Algebra pool was indexed from the factory's Pool event",
    );
    // Liquidity moved on both families in the soon-orphaned block: V4 ModifyLiquidity (+ and −)
    // and Initialize, Algebra Initialize, Mint, Burn (Integral's own layout) and Collect.
    const kinds = await eventsOfBlock(db, chainId, orphan.block);
    for (const key of [
      "v4:initialize",
      "v4:mint",
      "v4:burn",
      "algebra:initialize",
      "algebra:mint",
      "algebra:burn",
      "algebra:collect",
    ])
      assert.ok((kinds[key] ?? 0) > 0, `${key} in the orphaned block: ${JSON.stringify(kinds)}`);
    const { rows: orphanedSwaps } = await db.query<{ protocol: string; n: number }>(
      `SELECT p.protocol, count(*)::int AS n FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
        WHERE s.chain_id = $1 AND s.block_number >= $2 GROUP BY 1 ORDER BY 1`,
      [chainId, orphan.block],
    );
    assert.deepEqual(
      orphanedSwaps.map((r) => r.protocol),
      ["algebra", "v4"],
      "swaps of both families in the orphaned blocks",
    );

    await devnet.revert(snapshot);
    const canonical = await devnet.mineFamilyEvents({
      newV4Pool: { tokens: ["LINK", "USDC"], fee: 100, tickSpacing: 1 },
      size: 0.5,
    });
    await devnet.mineFamilyEvents({ size: 3 });
    const { logger, lines } = createCapturingLogger();
    const status = await indexOnce(db, devnet, logger);
    assert.equal(status?.phase, "stopped", "the restarted run ends cleanly");
    const rollback = lines.find((l) => l.msg === "reorg: rolled back to the common ancestor");
    assert.ok(rollback, "the rollback is logged");
    assert.equal(rollback.ancestor_block, orphan.block - 1, "the common ancestor is the fork point");
    const after = await storedPools(db, chainId);
    assert.equal(after.has(v4Id), false, "the orphaned V4 pool is gone");
    assert.equal(after.has(algebraPool), false, "the orphaned Algebra pool is gone");
    assert.equal(after.get(canonical.v4PoolId as string), "v4", "the canonical branch's V4 pool is there");

    await assertEqualsFreshIndex(
      db,
      devnet,
      "after a reorg of V4 and Algebra pools",
      devnet.chain(chainOverrides),
    );
  });
});
