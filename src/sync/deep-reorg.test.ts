import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { type FlakyRpc, startFlakyRpc } from "../_test/flaky-rpc.js";
import { createApiClient } from "../_test/http-client.js";
import { assertEqualsFreshIndex, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { indexOnce, startIndexer, storedSwapsOf } from "../_test/indexer-run.js";
import { createCapturingLogger, waitFor } from "../_test/indexer-wait.js";
import { createTestDbs } from "../_test/test-dbs.js";
import { createApiServer } from "../api/server.js";
import { parseConfig } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { getSyncStatus, setOffCanonical } from "../store/chain-state.js";
import type { Db } from "../store/db.js";

/**
 * A reorg twice as deep as the kept window (the default 64 blocks), found while following the
 * head: the indexer walks back to the common ancestor, rolls back and indexes the new branch
 * without a restart, and the API never answers data of the abandoned branch with a 200.
 */

const WINDOW = 64;

describe("deep reorgs", { timeout: 900_000 }, () => {
  let devnet: IndexerDevnet;
  let proxy: FlakyRpc;
  const dbs = createTestDbs();
  const apps: FastifyInstance[] = [];
  const newDb = async () => (await dbs.create()).db;

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 0.1, seed: 13 });
    proxy = await startFlakyRpc({ target: devnet.rpcUrl, faults: {} });
  });
  after(async () => {
    for (const app of apps) await app.close();
    await proxy?.stop();
    await Promise.all([devnet?.stop(), dbs.drop()]);
  });

  const nodeHash = async (block: number) =>
    (await devnet.rpc.request<{ hash: string }>("eth_getBlockByNumber", [`0x${block.toString(16)}`, false]))
      .hash;
  const indexedIs = async (db: Db, block: number) => {
    const [status] = await getSyncStatus(db, [devnet.chainId]);
    return status?.indexedBlock === block && status.indexedBlockHash === (await nodeHash(block));
  };

  /** An API server on `db` (answer cache on), its clock at the devnet's. */
  const serve = async (db: Db, chain: ReturnType<IndexerDevnet["chain"]>) => {
    const config = parseConfig({
      api: { host: "127.0.0.1", port: 0 },
      devnet: { enabled: false },
      chains: [chain],
    });
    const { key } = await createApiKey(db, "deep-reorg");
    const now = (await devnet.devnet.latestBlock()).timestamp * 1000;
    const app = createApiServer({ config, db, logger: createSilentLogger(), now: () => new Date(now) });
    apps.push(app);
    await app.listen({ host: "127.0.0.1", port: 0 });
    return createApiClient(app, { key });
  };

  it("answers a chain's data with a 503 naming the reason while it is marked off the canonical chain", async () => {
    const db = await newDb();
    const chain = devnet.chain();
    await indexOnce(db, chain);
    const api = await serve(db, chain);
    const pool = devnet.deployment.pools[0] as IndexerDevnet["deployment"]["pools"][number];
    const query = {
      pair_id: `${pool.address}:${devnet.chainId}`,
      asset_id: `${pool.token0}:${devnet.chainId}`,
    };
    assert.equal((await api.get("/api/v1/trades", query)).status, 200, "served before the mark");
    await setOffCanonical(db, devnet.chainId, "chain 31337: a reorg is being rolled back (test)");
    await waitFor(async () => (await api.get("/api/v1/trades", query)).status === 503, "the mark is seen");
    const answer = await api.get("/api/v1/trades", query);
    assert.equal(answer.headers.get("retry-after"), "2");
    assert.match(
      (answer.body as { message: string }).message,
      /off the node's canonical chain: chain 31337: a reorg is being rolled back \(test\)/,
    );
    const ready = await api.get("/readyz", {});
    assert.equal(ready.status, 503, "not ready either");
    assert.match(ready.text, /off the node's canonical chain/);
    await setOffCanonical(db, devnet.chainId, null);
    await waitFor(async () => (await api.get("/api/v1/trades", query)).status === 200, "served again");
  });

  it("recovers from a reorg twice as deep as the kept window without a restart, never serving the abandoned branch", async (t) => {
    const db = await newDb();
    const chain = devnet.chain({ rpc: [proxy.url], pollIntervalMs: 50 });
    assert.equal(chain.reorgWindow, WINDOW, "the default kept window");
    const { logger, lines } = createCapturingLogger();
    const indexer = await startIndexer(db, chain, { logger });
    try {
      await waitFor(async () => indexedIs(db, await devnet.head()), "the history is indexed", {
        timeoutMs: 300_000,
      });
      const api = await serve(db, chain);
      const snapshot = await devnet.snapshot();
      const forkPoint = await devnet.head();
      // The branch to be abandoned: 2 × the window and a few blocks more, a swap in each.
      await devnet.mineSwaps({ blocks: 2 * WINDOW + 8, swapsPerBlock: 1, seed: 21 });
      const abandonedHead = await devnet.head();
      await waitFor(() => indexedIs(db, abandonedHead), "the abandoned branch is indexed", {
        timeoutMs: 300_000,
      });
      const { rows: orphaned } = await db.query<{ tx_hash: string; pool: string }>(
        "SELECT tx_hash, pool FROM swaps WHERE chain_id = $1 AND block_number > $2",
        [devnet.chainId, forkPoint],
      );
      assert.ok(
        orphaned.length >= 2 * WINDOW,
        `the abandoned branch's swaps are indexed (${orphaned.length})`,
      );
      const orphanedHashes = new Set(orphaned.map((r) => r.tx_hash.toLowerCase()));
      const pools = devnet.deployment.pools.filter((p) =>
        orphaned.some((r) => r.pool.toLowerCase() === p.address.toLowerCase()),
      );
      // Served (and cached) from the abandoned branch while it was the canonical one.
      const queries = pools.map((p) => ({
        pair_id: `${p.address}:${devnet.chainId}`,
        asset_id: `${p.token0}:${devnet.chainId}`,
      }));
      for (const query of queries) assert.equal((await api.get("/api/v1/trades", query)).status, 200);

      // The node switches to a longer branch from the fork point while the indexer cannot see it.
      proxy.hold();
      await devnet.revert(snapshot);
      await devnet.mineSwaps({ blocks: 2 * WINDOW + 16, swapsPerBlock: 1, seed: 22 });
      const newHead = await devnet.head();

      // From the moment the indexer is shown the new branch until it has indexed it. The episode
      // proper starts when the indexer knows of the reorg (its mark is committed, then logged)
      // and the API has looked at the database since (/readyz refreshes its view); answers
      // asked before that are counted apart: the indexer's detection time.
      const known = () =>
        lines.some(
          (l) =>
            l.msg ===
            "reorg found; the chain's data is marked off the canonical chain until it is rolled back",
        );
      let polling = true;
      const seen = {
        ok: 0,
        unavailable: 0,
        other: [] as string[],
        abandoned: [] as string[],
        beforeKnown: 0,
      };
      const poller = (async () => {
        while (polling) {
          const knew = known();
          await api.get("/readyz", {});
          for (const query of queries) {
            const inEpisode = knew;
            const answer = await api.get("/api/v1/trades", query);
            if (!inEpisode) {
              seen.beforeKnown++;
              continue;
            }
            if (answer.status === 503) {
              seen.unavailable++;
              continue;
            }
            if (answer.status !== 200) {
              seen.other.push(`${answer.status} ${answer.text}`);
              continue;
            }
            seen.ok++;
            const trades = answer.body as { hash: string }[];
            for (const trade of trades)
              if (orphanedHashes.has(trade.hash.toLowerCase()))
                seen.abandoned.push(
                  `${trade.hash} (x-indexed-block ${answer.headers.get("x-indexed-block")})`,
                );
          }
        }
      })();
      proxy.release();
      await waitFor(() => indexedIs(db, newHead), "the new branch is indexed", { timeoutMs: 300_000 });
      polling = false;
      await poller;

      assert.deepEqual(seen.abandoned, [], "no 200 answer carries a trade of the abandoned branch");
      assert.deepEqual(seen.other, [], "data answers are 200 or 503 only");
      assert.ok(
        seen.ok > 0,
        `answers were made during the episode (${seen.ok} × 200, ${seen.unavailable} × 503; ${seen.beforeKnown} before the indexer knew)`,
      );
      t.diagnostic(
        `during the episode: ${seen.ok} answers 200, ${seen.unavailable} answers 503; before the indexer knew: ${seen.beforeKnown}`,
      );
      const rollback = lines.find((l) => l.msg === "reorg: rolled back to the common ancestor");
      assert.ok(rollback, "the rollback is logged at warn");
      assert.equal(rollback.level, 40);
      assert.equal(rollback.ancestor_block, forkPoint, "walked back to the fork point");
      assert.equal(rollback.depth, abandonedHead - forkPoint, "the warning names the depth");
      assert.ok((rollback.depth as number) >= 2 * WINDOW);
      assert.equal(
        lines.filter((l) => l.level >= 50).length,
        0,
        "no error or fatal line: recovered without a restart",
      );
      const [status] = await getSyncStatus(db, [devnet.chainId]);
      assert.equal(status?.offCanonical, null, "the mark is cleared");
      const left = await storedSwapsOf(db, devnet.chainId, orphaned);
      assert.equal(left, 0, "no swap of the abandoned branch is left");
    } finally {
      await indexer.stop();
    }
    await assertEqualsFreshIndex(db, devnet, "after a reorg twice as deep as the window");
  });
});
