import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { makerAndWindowRows } from "../_test/aggregates.js";
import { createAnswerServers } from "../_test/answer-servers.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { indexOnce, startIndexer } from "../_test/indexer-run.js";
import { snapshotAggregates } from "../_test/sql.js";
import { parseConfig } from "../config/load.js";
import { type ChainConfig, type Config, chainSchema } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing, type Pricing } from "../pricing/pricing.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { shapeChainConfig, shapeProfiles } from "./profiles.js";
import { type ShapeServer, startShapeServer } from "./server.js";

// Reorganisations on the mainnet-shaped chain: the synthetic Ethereum (a few thousand
// pools, ~150 swaps a block) indexed with pricing while it reorganises its last blocks several
// times, once while a batch is in flight; afterwards every table and the API's answers equal
// those of a fresh index of the final branch into a second database.

const CHAIN = 1;
const profile = shapeProfiles.ethereum;

/** Every table the ingestion and pricing write for a chain, as plain sorted rows. */
async function allTables(db: Db): Promise<Record<string, unknown[]>> {
  const q = async (sql: string) => (await db.query(sql, [CHAIN])).rows;
  return {
    ...(await snapshotAggregates(db, CHAIN)),
    swap_rows: await q(
      "SELECT to_jsonb(s) - 'chain_id' AS s FROM swaps s WHERE chain_id = $1 ORDER BY block_number, log_index",
    ),
    pool_events: await q(
      "SELECT to_jsonb(e) - 'chain_id' AS e FROM pool_events e WHERE chain_id = $1 ORDER BY block_number, log_index",
    ),
    pools: await q("SELECT to_jsonb(p) - 'chain_id' AS p FROM pools p WHERE chain_id = $1 ORDER BY address"),
    // Less when the metadata and supply were read (wall-clock times).
    tokens: await q(
      "SELECT to_jsonb(t) - 'chain_id' - 'metadata_at' - 'supply_at' AS t FROM tokens t WHERE chain_id = $1 ORDER BY address",
    ),
    pool_trade_buckets: await q(
      "SELECT to_jsonb(b) - 'chain_id' AS b FROM pool_trade_buckets b WHERE chain_id = $1 ORDER BY pool, resolution, bucket",
    ),
    token_trade_buckets: await q(
      "SELECT to_jsonb(b) - 'chain_id' AS b FROM token_trade_buckets b WHERE chain_id = $1 ORDER BY token, resolution, bucket",
    ),
    ...(await makerAndWindowRows(db, CHAIN)),
  };
}

describe("reorgs on the mainnet-shaped Ethereum, with pricing", { timeout: 900_000 }, () => {
  let server: ShapeServer;
  let chain: ChainConfig;
  let config: Config;
  let pricing: Pricing;
  const clock = { now: 0 };
  const dbs: TestDb[] = [];
  const servers = createAnswerServers(() => config);

  before(async () => {
    server = await startShapeServer({
      profile: "ethereum",
      pools: 3000,
      tokens: 800,
      historyBlocks: 40,
      live: false,
      port: 0,
    });
    // At the head (no confirmations), so that every reorg below reaches indexed blocks.
    chain = chainSchema.parse({
      ...shapeChainConfig(profile, server.url),
      confirmations: 0,
      pollIntervalMs: 100,
    });
    config = parseConfig({
      api: { host: "127.0.0.1", port: 0 },
      devnet: { enabled: false },
      pricing: { liquidityFloorUsd: 50_000, maxDeviation: 0.05 },
      chains: [chain],
    });
  });
  after(async () => {
    await servers.close();
    await server?.close();
    for (const t of dbs) await t.drop();
  });

  const newDb = async () => {
    const t = await createTestDb();
    dbs.push(t);
    return t.db;
  };
  const headTimeMs = () => server.chain.timestamp(server.chain.head()) * 1000;

  /** Waits until `db` holds the node's current head, by hash. */
  async function waitAtHead(db: Db, timeoutMs = 300_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const head = server.chain.head();
      const [status] = await getSyncStatus(db, [CHAIN]);
      if (status?.indexedBlock === head && status.indexedBlockHash === server.chain.blockHash(head)) return;
      if (Date.now() > deadline) throw new Error(`not at head ${head} (at ${status?.indexedBlock})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  let candlesTo: string | undefined;
  /** What the API answers about the chain: markets, top pools, candles and trades of the deepest pools. */
  async function answers(db: Db) {
    const get = await servers.serve(db);
    const u = server.chain.universe;
    const id = (address: string) => `${address}:${CHAIN}`;
    const deep = Array.from({ length: 8 }, (_, i) => u.poolInfo(i));
    const from = new Date(clock.now - 3 * 3_600_000).toISOString();
    // Candles are gap-filled up to `to` capped at the wall clock: one `to` for every call, at the
    // start of a minute already begun, so two databases' answers cannot differ by a minute the clock crossed between them.
    candlesTo ??= new Date(Math.min(clock.now, Math.floor(Date.now() / 60_000) * 60_000)).toISOString();
    const to = candlesTo;
    const out: Record<string, unknown> = {
      tokens: await get("/v1/tokens/market", {
        tokenId: [0, 1, 2, 3, 4].map((i) => id(u.tokenAddress(i))).join(","),
      }),
      pairs: await get("/api/v1/pairs/market", { pair_id: deep.map((p) => id(p.address)).join(",") }),
      volume: await get("/api/v1/pools/top", { chain: CHAIN, sort: "volume", limit: 100 }),
      liquidity: await get("/api/v1/pools/top", { chain: CHAIN, sort: "liquidity", limit: 100 }),
      dexes: await get("/v1/dexes", {}),
    };
    for (const p of deep.slice(0, 3)) {
      const asset = id(u.tokenAddress(p.token0));
      out[`candles ${p.address}`] = await get("/api/v1/candles", {
        asset_id: asset,
        pair_id: id(p.address),
        interval: "1m",
        from,
        to,
      });
      out[`trades ${p.address}`] = await get("/api/v1/trades", { asset_id: asset, pair_id: id(p.address) });
    }
    return out;
  }

  it("rolls back and re-indexes to exactly what a fresh index of the final branch stores and answers", async () => {
    const followed = await newDb();
    // The clock of the market windows: fixed past the last block the test will make.
    clock.now = headTimeMs() + 60 * 12_000;
    pricing = createPricing({ config, logger: createSilentLogger(), now: () => new Date(clock.now) });
    const indexer = await startIndexer(followed, chain, { derived: pricing });
    const swapsOf = async (from: number) =>
      (
        await followed.query<{ txs: string | null }>(
          "SELECT string_agg(tx_hash, ',' ORDER BY block_number, log_index) AS txs FROM swaps WHERE chain_id = $1 AND block_number >= $2",
          [CHAIN, from],
        )
      ).rows[0]?.txs;
    const reorgs: { depth: number; from: number; inFlight: boolean; replaced: boolean }[] = [];
    try {
      await waitAtHead(followed);
      const before = await answers(followed);

      // Reorgs at rest, of several depths within the window (65 blocks), each followed by new blocks.
      for (const [depth, advance] of [
        [3, 2],
        [12, 1],
        [1, 3],
      ] as const) {
        const head = server.chain.head();
        const old = await swapsOf(head - depth + 1);
        const { from } = server.chain.reorg(depth);
        server.chain.advance(advance);
        await waitAtHead(followed);
        reorgs.push({ depth, from, inFlight: false, replaced: (await swapsOf(from)) !== old });
      }

      // A reorg while a batch is in flight: new blocks appear; once the indexer has their logs and
      // asks for their block data (full blocks, the probe's choice, or receipts), the node stalls,
      // replaces the last blocks (those of the batch), and answers from the new branch.
      const inFlight = server.pauseAt(
        (method, params) =>
          method === "eth_getBlockReceipts" || (method === "eth_getBlockByNumber" && params[1] === true),
      );
      const headBefore = server.chain.head();
      server.chain.advance(5);
      await inFlight;
      const { from } = server.chain.reorg(4);
      assert.ok(from > headBefore, "the replaced blocks are those of the batch in flight");
      server.resume();
      await waitAtHead(followed);
      reorgs.push({ depth: 4, from, inFlight: true, replaced: true });

      assert.ok(
        reorgs.every((r) => r.replaced),
        `each reorg replaced indexed swaps: ${JSON.stringify(reorgs)}`,
      );
      const { rows } = await followed.query<{ n: string }>(
        "SELECT count(*) AS n FROM swaps WHERE chain_id = $1",
        [CHAIN],
      );
      assert.ok(Number(rows[0]?.n) > 3000, `a mainnet-like volume (${rows[0]?.n} swaps)`);
      // The API answers changed with the branch (then they are compared with the fresh index's).
      assert.notDeepEqual((await answers(followed)).pairs, before.pairs, "the reorgs changed the figures");
    } finally {
      await indexer.stop();
    }

    const fresh = await newDb();
    const freshPricing = createPricing({
      config,
      logger: createSilentLogger(),
      now: () => new Date(clock.now),
    });
    const status = await indexOnce(fresh, chain, { derived: freshPricing });
    assert.equal(status?.phase, "stopped", status?.error ?? "");

    await pricing.refreshStats(followed, CHAIN, new Date(clock.now));
    await freshPricing.refreshStats(fresh, CHAIN, new Date(clock.now));
    const expected = await allTables(fresh);
    assert.ok((expected.candles?.length ?? 0) > 1000, `candles: ${expected.candles?.length}`);
    assert.ok((expected.token_prices?.length ?? 0) > 100, `token prices: ${expected.token_prices?.length}`);
    const actual = await allTables(followed);
    for (const table of Object.keys(expected)) {
      assert.ok((expected[table]?.length ?? 0) > 0, `${table} has rows`);
      assert.deepEqual(actual[table], expected[table], table);
    }
    candlesTo = undefined;
    const got = await answers(followed);
    const want = await answers(fresh);
    for (const key of Object.keys(want)) assert.deepEqual(got[key], want[key], key);
  });
});
