import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, createPublicClient, http, parseAbi } from "viem";
import { createTestDb, type TestDb } from "../_test/db.js";
import { historyReceiptSwaps, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSwapsMatch, readSwapsFromReceipts } from "../_test/indexer-receipts.js";
import { indexOnce as indexChainOnce, startIndexer } from "../_test/indexer-run.js";
import { waitFor } from "../_test/indexer-wait.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Db } from "../store/db.js";

const poolAbi = parseAbi([
  "function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)",
  "function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16, uint16, uint16, uint8, bool)",
  "function liquidity() view returns (uint128)",
  "function balanceOf(address owner) view returns (uint256)",
]);

/** Indexes the devnet's chain into `db` until caught up with its head. */
async function indexOnce(db: Db, devnet: IndexerDevnet, chainOverrides: Record<string, unknown> = {}) {
  const status = await indexChainOnce(db, devnet.chain(chainOverrides));
  assert.equal(status?.phase, "stopped", `the run ended cleanly (${status?.error ?? "no error"})`);
  return status;
}

describe("indexing a devnet with the real Uniswap V2 and V3 contracts", () => {
  let devnet: IndexerDevnet;
  let testDb: TestDb;
  let head: number;
  /** The deployed V2 and V3 pools: the chain configured here has their factories only (not V4's PoolManager nor the Algebra factory). */
  const indexedPools = () =>
    devnet.deployment.pools.filter((p) => p.protocol === "v2" || p.protocol === "v3");

  before(async () => {
    [devnet, testDb] = await Promise.all([startIndexerDevnet({ historyDays: 1, seed: 11 }), createTestDb()]);
    head = await devnet.head();
    await indexOnce(testDb.db, devnet);
  });
  after(async () => {
    await Promise.all([devnet?.stop(), testDb?.drop()]);
  });

  it("stores the swaps of the receipts, one for one and field by field", async () => {
    const expected = await historyReceiptSwaps(devnet, head);
    const protocols = new Set(expected.map((s) => (s.sqrt_price_x96 === null ? "v2" : "v3")));
    assert.deepEqual([...protocols].sort(), ["v2", "v3"], "both V2 and V3 swaps");
    await assertSwapsMatch(testDb.db, devnet.chainId, expected, { fromBlock: 0, toBlock: head });
    const [status] = await getSyncStatus(testDb.db, [devnet.chainId]);
    assert.equal(status?.indexedBlock, head, "checkpoint at the head");
    assert.equal(status?.headBlock, head, "the head is recorded");
    assert.equal(status?.lagBlocks, 0, "no lag once caught up");
    assert.equal(status?.lagSeconds, 0, "no lag in time either");
    assert.ok(
      (status?.blocksPerSecond ?? 0) > 0 && (status?.swapsPerSecond ?? 0) > 0,
      "backfill speed recorded",
    );
  });

  it("stores every pool with its tokens and its latest state as the chain has it", async () => {
    const { rows } = await testDb.db.query<Record<string, string | number | null>>(
      "SELECT address, protocol, dex, token0, token1, fee, reserve0, reserve1, sqrt_price_x96, liquidity, tick FROM pools WHERE chain_id = $1",
      [devnet.chainId],
    );
    assert.equal(rows.length, indexedPools().length, "every deployed V2 and V3 pool");
    const client = createPublicClient({ transport: http(devnet.rpcUrl, { batch: true }) });
    const at = { blockNumber: BigInt(head) };
    for (const pool of indexedPools()) {
      const row = rows.find((r) => r.address === pool.address.toLowerCase());
      assert.ok(row, `pool ${pool.key} is stored`);
      assert.equal(row.token0, pool.token0.toLowerCase(), `${pool.key} token0`);
      assert.equal(row.token1, pool.token1.toLowerCase(), `${pool.key} token1`);
      assert.equal(row.fee, pool.fee, `${pool.key} fee`);
      assert.equal(row.dex, pool.protocol === "v2" ? "Uniswap V2" : "Uniswap V3", `${pool.key} dex name`);
      const address = pool.address as Address;
      if (pool.protocol === "v2") {
        const [r0, r1] = await client.readContract({
          address,
          abi: poolAbi,
          functionName: "getReserves",
          ...at,
        });
        assert.equal(row.reserve0, r0.toString(), `${pool.key} reserve0 is getReserves()`);
        assert.equal(row.reserve1, r1.toString(), `${pool.key} reserve1 is getReserves()`);
      } else {
        const [slot0, liquidity, b0, b1] = await Promise.all([
          client.readContract({ address, abi: poolAbi, functionName: "slot0", ...at }),
          client.readContract({ address, abi: poolAbi, functionName: "liquidity", ...at }),
          client.readContract({
            address: pool.token0,
            abi: poolAbi,
            functionName: "balanceOf",
            args: [address],
            ...at,
          }),
          client.readContract({
            address: pool.token1,
            abi: poolAbi,
            functionName: "balanceOf",
            args: [address],
            ...at,
          }),
        ]);
        assert.equal(row.reserve0, b0.toString(), `${pool.key} tracked balance0 is balanceOf()`);
        assert.equal(row.reserve1, b1.toString(), `${pool.key} tracked balance1 is balanceOf()`);
        assert.equal(row.sqrt_price_x96, slot0[0].toString(), `${pool.key} sqrtPriceX96 is slot0's`);
        assert.equal(row.tick, slot0[1], `${pool.key} tick is slot0's`);
        assert.equal(row.liquidity, liquidity.toString(), `${pool.key} active liquidity is liquidity()`);
      }
    }
  });

  it("reads a bytes32 symbol and survives a reverting decimals()", async () => {
    const { MKR, NODEC, USDC } = devnet.deployment.tokens;
    const { rows } = await testDb.db.query<{
      address: string;
      name: string | null;
      symbol: string | null;
      decimals: number | null;
    }>("SELECT address, name, symbol, decimals FROM tokens WHERE chain_id = $1", [devnet.chainId]);
    const token = (address: string) => rows.find((r) => r.address === address.toLowerCase());
    assert.deepEqual(
      token(MKR.address),
      { address: MKR.address.toLowerCase(), name: "Maker", symbol: "MKR", decimals: 18 },
      "bytes32 name and symbol decoded",
    );
    assert.deepEqual(
      token(NODEC.address),
      { address: NODEC.address.toLowerCase(), name: "No Decimals", symbol: "NODEC", decimals: null },
      "decimals() reverts: null",
    );
    assert.equal(token(USDC.address)?.decimals, 6);
    const nodecPool = devnet.deployment.pools.find((p) => p.token0Key === "NODEC" || p.token1Key === "NODEC");
    const { rows: swaps } = await testDb.db.query<{ n: number; priced: number }>(
      "SELECT count(*)::int AS n, count(price)::int AS priced FROM swaps WHERE chain_id = $1 AND pool = $2",
      [devnet.chainId, nodecPool?.address.toLowerCase()],
    );
    assert.ok((swaps[0]?.n ?? 0) > 0, "the NODEC pool's swaps are stored");
    assert.equal(swaps[0]?.priced, 0, "without decimals, no price");
  });

  it("stores liquidity events: V2 Mint/Burn with their Sync, V3 Initialize/Mint/Burn/Collect", async () => {
    const { rows } = await testDb.db.query<{ kind: string; n: number }>(
      "SELECT kind, count(*)::int AS n FROM pool_events WHERE chain_id = $1 GROUP BY kind",
      [devnet.chainId],
    );
    const counts = Object.fromEntries(rows.map((r) => [r.kind, r.n]));
    const v3Pools = devnet.deployment.pools.filter((p) => p.protocol === "v3").length;
    assert.equal(counts.initialize, v3Pools, "one Initialize per V3 pool");
    assert.ok((counts.mint ?? 0) >= indexedPools().length, "at least one Mint per pool");
    assert.ok((counts.sync ?? 0) >= indexedPools().length - v3Pools, "the Sync of each V2 Mint");
  });

  it("from a start block inside the history: older pools come from the factory scan, V3 balances from balanceOf at startBlock − 1", async () => {
    const startBlock = Math.floor(head / 2);
    const other = await createTestDb();
    try {
      await indexOnce(other.db, devnet, { startBlock });
      const expected = await readSwapsFromReceipts({
        rpcUrl: devnet.rpcUrl,
        pools: devnet.pools,
        fromBlock: startBlock,
        toBlock: head,
      });
      // Every history block carries a trade: the blocks above the start hold swaps.
      assert.ok(expected.length > 0, `swaps above the start block (${expected.length})`);
      await assertSwapsMatch(other.db, devnet.chainId, expected, { fromBlock: 0, toBlock: head });
      const { rows } = await other.db.query<{ n: number; based: number }>(
        "SELECT count(*)::int AS n, count(*) FILTER (WHERE base_block = $2)::int AS based FROM pools WHERE chain_id = $1",
        [devnet.chainId, startBlock - 1],
      );
      assert.equal(rows[0]?.n, indexedPools().length, "every pool, all created before the start block");
      assert.equal(rows[0]?.based, rows[0]?.n, "every pool's base state was read at startBlock − 1");
    } finally {
      await other.drop();
    }
  });

  it("ignores the pools of factories not configured, with or without an address filter on eth_getLogs", async () => {
    const v2Only = devnet.chain({
      dexes: [{ name: "Uniswap V2", protocol: "v2", factory: devnet.deployment.v2.factory, fee: 3000 }],
    });
    const expected = (
      await readSwapsFromReceipts({ rpcUrl: devnet.rpcUrl, pools: devnet.pools, fromBlock: 0, toBlock: head })
    ).filter((s) => s.sqrt_price_x96 === null);
    for (const addressFilterLimit of [1000, 0]) {
      const other = await createTestDb();
      try {
        await indexChainOnce(other.db, v2Only, { options: { addressFilterLimit } });
        await assertSwapsMatch(other.db, devnet.chainId, expected, { fromBlock: 0, toBlock: head });
        const { rows } = await other.db.query<{ protocol: string }>("SELECT DISTINCT protocol FROM pools");
        assert.deepEqual(
          rows,
          [{ protocol: "v2" }],
          `only V2 pools (address filter limit ${addressFilterLimit})`,
        );
      } finally {
        await other.drop();
      }
    }
  });

  it("follows new heads pushed over the WebSocket subscription, and refreshes token supplies", async () => {
    // Polling once a minute: only the newHeads subscription can bring the new block in time.
    const indexer = await startIndexer(
      testDb.db,
      devnet.chain({ ws: devnet.devnet.wsUrl, pollIntervalMs: 60_000 }),
      { options: { supplyRefreshMs: 200 } },
    );
    try {
      await waitFor(() => indexer.status()[0]?.phase === "following", "caught up");
      const before = await testDb.db.query<{ at: Date }>(
        "SELECT max(supply_at) AS at FROM tokens WHERE chain_id = $1",
        [devnet.chainId],
      );
      await devnet.mineSwaps({ blocks: 1, swapsPerBlock: 2, seed: 77 });
      const newHead = await devnet.head();
      await waitFor(
        () => indexer.status()[0]?.indexedBlock === newHead,
        "the new block is indexed within seconds",
        { timeoutMs: 15_000 },
      );
      await devnet.mineSwaps({ blocks: 1, swapsPerBlock: 1, seed: 78 });
      const newerHead = await devnet.head();
      await waitFor(() => indexer.status()[0]?.indexedBlock === newerHead, "and the next one", {
        timeoutMs: 15_000,
      });
      await waitFor(async () => {
        const { rows } = await testDb.db.query<{ at: Date }>(
          "SELECT min(supply_at) AS at FROM tokens WHERE chain_id = $1",
          [devnet.chainId],
        );
        return (rows[0]?.at.getTime() ?? 0) > (before.rows[0]?.at.getTime() ?? 0);
      }, "every token's totalSupply is read again");
    } finally {
      await indexer.stop();
    }
  });
});
