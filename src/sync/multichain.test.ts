import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSwapsMatch, readSwapsFromReceipts } from "../_test/indexer-receipts.js";
import { indexOnce } from "../_test/indexer-run.js";
import { createCapturingLogger, waitFor } from "../_test/indexer-wait.js";
import { type ChainConfig, chainSchema } from "../config/schema.js";
import { startHardhatNode } from "../devnet/node.js";
import { createDevnetRpc } from "../devnet/rpc.js";
import { createSilentLogger } from "../internal/logger.js";
import { getSyncStatus } from "../store/chain-state.js";
import { noDerivedData } from "./derived.js";
import { createIndexer } from "./indexer.js";

describe("several chains", () => {
  let a: IndexerDevnet;
  let b: IndexerDevnet;
  let testDb: TestDb;

  before(async () => {
    [a, b, testDb] = await Promise.all([
      startIndexerDevnet({ chainId: 31337, historyDays: 0.4, seed: 1 }),
      startIndexerDevnet({ chainId: 31338, historyDays: 0.4, seed: 2 }),
      createTestDb(),
    ]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop(), testDb?.drop()]);
  });

  it("index concurrently into one database, each chain on its own, and a dead chain stops neither", async () => {
    const deadPort = await freePort();
    const dead = chainSchema.parse({
      ...a.chain(),
      id: 99,
      name: "Unreachable",
      rpc: [`http://127.0.0.1:${deadPort}`],
    });
    const { logger, lines } = createCapturingLogger("info");
    const indexer = createIndexer({
      config: { chains: [a.chain(), b.chain(), dead] },
      db: testDb.db,
      logger,
      derived: noDerivedData,
      options: {
        progressBar: false,
        restartDelayMs: [50, 200],
        rpc: { attempts: 2, baseDelayMs: 10, timeoutMs: 500 },
      },
    });
    await indexer.start();
    try {
      const [headA, headB] = await Promise.all([a.head(), b.head()]);
      await waitFor(() => {
        const status = indexer.status();
        const following = (chainId: number, head: number) =>
          status.some((s) => s.chainId === chainId && s.phase === "following" && s.indexedBlock === head);
        return following(a.chainId, headA) && following(b.chainId, headB);
      }, "both chains are indexed and following their heads");
      const statuses = indexer.status();
      const unreachable = statuses.find((s) => s.chainId === 99);
      assert.notEqual(unreachable?.phase, "following", "the unreachable chain is not indexed");
      assert.ok(unreachable?.error, "and says why");
      assert.ok(
        lines.some(
          (l) => l.chain_id === 99 && l.msg === "chain indexing failed; restarting from the checkpoint",
        ),
        "its failure is logged",
      );

      // New blocks on one chain are followed while the other stays put.
      await a.mineSwaps({ blocks: 2, swapsPerBlock: 2, seed: 9 });
      const newHeadA = await a.head();
      await waitFor(
        async () => (await getSyncStatus(testDb.db, [a.chainId]))[0]?.indexedBlock === newHeadA,
        "chain A follows its head",
      );
    } finally {
      await indexer.stop();
    }
    for (const devnet of [a, b]) {
      const head = await devnet.head();
      const expected = await readSwapsFromReceipts({
        rpcUrl: devnet.rpcUrl,
        pools: devnet.pools,
        fromBlock: 0,
        toBlock: head,
      });
      await assertSwapsMatch(testDb.db, devnet.chainId, expected, { fromBlock: 0, toBlock: head });
    }
    const { rows } = await testDb.db.query<{ chain_id: number; n: number }>(
      "SELECT chain_id, count(*)::int AS n FROM pools GROUP BY chain_id ORDER BY chain_id",
    );
    assert.deepEqual(
      rows,
      [
        { chain_id: 31337, n: a.pools.length },
        { chain_id: 31338, n: b.pools.length },
      ],
      "each chain's pools under its own id (the same addresses on both)",
    );
  });

  it("a devnet reborn with a new genesis is dropped and indexed afresh; a real chain with a new genesis stops", async () => {
    const other = await createTestDb();
    // Another node under chain A's id, started at another date: another genesis for the same chain id.
    const node = await startHardhatNode({
      port: 0,
      chainId: a.chainId,
      initialDate: new Date("2020-01-01T00:00:00Z"),
      logger: createSilentLogger(),
    });
    try {
      const run = (chain: ChainConfig) => indexOnce(other.db, chain);
      assert.equal((await run(a.chain()))?.phase, "stopped");
      const count = async () =>
        (
          await other.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pools WHERE chain_id = $1", [
            a.chainId,
          ])
        ).rows[0]?.n;
      assert.equal(await count(), a.pools.length, "chain A is indexed");

      const reborn = a.chain({ rpc: [node.rpcUrl] });
      const realChain = await run({ ...reborn, devnet: false });
      assert.equal(realChain?.phase, "failed", "a real chain whose genesis changed is not indexed");
      assert.match(realChain?.error ?? "", /genesis/, "GenesisMismatchError says so");
      assert.equal(await count(), a.pools.length, "and its data is kept");

      assert.equal((await run(reborn))?.phase, "stopped", "a devnet whose genesis changed is indexed afresh");
      assert.equal(await count(), 0, "its old data is dropped (the new node has no pools)");
      const { rows } = await other.db.query<{ genesis_hash: string }>(
        "SELECT genesis_hash FROM chains WHERE chain_id = $1",
        [a.chainId],
      );
      const genesis = await createDevnetRpc(node.rpcUrl).request<{ hash: string }>("eth_getBlockByNumber", [
        "0x0",
        false,
      ]);
      assert.equal(rows[0]?.genesis_hash, genesis.hash, "the chain's row holds the new genesis");
    } finally {
      await Promise.all([node.stop(), other.drop()]);
    }
  });
});
