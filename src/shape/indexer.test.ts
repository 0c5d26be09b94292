import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { assertSwapsMatch, readSwapsFromReceipts } from "../_test/indexer-receipts.js";
import { indexOnce } from "../_test/indexer-run.js";
import { chainSchema } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { shapeChainConfig } from "./profiles.js";
import { type ShapeServer, startShapeServer } from "./server.js";

// The project's own indexer and pricing against the synthetic Ethereum: every swap the server
// generated is stored, field by field as an independent reading of the receipts says, and the
// reference tokens get the USD prices the synthetic market was built around.
describe("the indexer on a mainnet-shaped synthetic Ethereum", () => {
  let server: ShapeServer;
  let testDb: TestDb;
  let head: number;
  let seconds: number;
  before(async () => {
    [server, testDb] = await Promise.all([
      startShapeServer({
        profile: "ethereum",
        // The independent reading of the receipts below knows V2 and V3 swaps: the Ethereum of
        // those two (every family is indexed in families.test.ts).
        families: ["v2", "v3"],
        pools: 2000,
        tokens: 600,
        historyBlocks: 160,
        live: false,
        port: 0,
      }),
      createTestDb(),
    ]);
    head = server.chain.head();
    const chain = chainSchema.parse({
      ...shapeChainConfig(server.chain.universe.profile, server.url),
      confirmations: 0,
    });
    const config = { chains: [chain], pricing: { liquidityFloorUsd: 50_000, maxDeviation: 0.05 } };
    const logger = process.env.SHAPE_DEBUG
      ? (await import("../internal/logger.js")).createLogger({ level: "debug" })
      : createSilentLogger();
    const started = performance.now();
    // The indexer's default ranges: the first 100-block eth_getLogs answer is over viem's 10 MB
    // cap and is halved, without failing the eth_calls in flight (see docs/SHAPE.md, findings).
    const status = await indexOnce(testDb.db, chain, { logger, derived: createPricing({ config, logger }) });
    seconds = (performance.now() - started) / 1000;
    assert.equal(status?.phase, "stopped", `the run ended cleanly (${status?.error ?? "no error"})`);
  });
  after(async () => {
    await Promise.all([server?.close(), testDb?.drop()]);
  });

  it("stores every generated swap, field by field as the receipts say", async () => {
    const u = server.chain.universe;
    let generated = 0;
    server.chain.blocks(0, head, (block) => {
      for (const tx of block.txs) if (tx.kind === "swap") generated++;
      return true;
    });
    const { rows } = await testDb.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM swaps WHERE chain_id = 1",
    );
    assert.equal(Number(rows[0]?.n), generated, "one stored swap per generated swap");
    assert.ok(generated > 20_000, `a mainnet-like volume (${generated} swaps)`);
    process.stderr.write(`# indexed ${generated} swaps of ${head + 1} blocks in ${seconds.toFixed(1)} s\n`);

    // The independent reading (viem's decoding of receipts, balances from Transfer logs) on a
    // window of the history, all pools that exist at its end.
    const from = head - 20;
    const pools = Array.from({ length: u.poolsAt(head) }, (_, i) => u.poolInfo(i)).map((p) => ({
      address: p.address,
      protocol: p.protocol,
      token0: u.tokenAddress(p.token0),
      token1: u.tokenAddress(p.token1),
    }));
    const expected = await readSwapsFromReceipts({
      rpcUrl: server.url,
      pools,
      fromBlock: from,
      toBlock: head,
    });
    assert.ok(expected.length > 2000, `a sample of swaps (${expected.length})`);
    await assertSwapsMatch(testDb.db, 1, expected, { fromBlock: from, toBlock: head });
  });

  it("refreshes the planner's statistics of the growing tables while the pools multiply", async () => {
    // Set by an ANALYZE statement only (autovacuum's own sets last_autoanalyze).
    const { rows } = await testDb.db.query<{ relname: string; analyzed: boolean }>(
      `SELECT relname, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables
       WHERE relname IN ('pools', 'tokens', 'pair_windows', 'token_prices') ORDER BY relname`,
    );
    assert.deepEqual(
      rows.map((r) => [r.relname, r.analyzed]),
      [
        ["pair_windows", true],
        ["pools", true],
        ["token_prices", true],
        ["tokens", true],
      ],
    );
  });

  it("stores every pool and token, oddities included, and prices the reference tokens", async () => {
    const u = server.chain.universe;
    const pools = await testDb.db.query<{ n: string }>("SELECT count(*) AS n FROM pools WHERE chain_id = 1");
    assert.equal(
      Number(pools.rows[0]?.n),
      u.poolsAt(head),
      "the pools of the creation era and those created later",
    );
    const tokens = await testDb.db.query<{ address: string; symbol: string | null; decimals: number | null }>(
      "SELECT address, symbol, decimals FROM tokens WHERE chain_id = 1",
    );
    const byAddress = new Map(tokens.rows.map((t) => [t.address, t]));
    let oddities = 0;
    for (const t of tokens.rows) {
      const index = u.tokenIndex(t.address);
      assert.ok(index !== null, `a token of the universe (${t.address})`);
      const meta = u.tokenMeta(index);
      assert.equal(t.decimals, meta.decimals, `decimals of ${t.address}`);
      if (meta.decimals === null || meta.symbol.kind !== "string") oddities++;
    }
    assert.ok(oddities > 0, "odd tokens among the indexed ones");
    assert.equal(byAddress.get(u.tokenAddress(0))?.symbol, "WETH");
    const prices = await testDb.db.query<{ token: string; usd_price: number | null }>(
      "SELECT token, usd_price FROM token_prices WHERE chain_id = 1",
    );
    const price = new Map(prices.rows.map((r) => [r.token, r.usd_price]));
    const weth = price.get(u.tokenAddress(0));
    const wbtc = price.get(u.tokenAddress(4));
    assert.ok(weth && Math.abs(weth / 3000 - 1) < 0.1, `WETH near 3000 USD (${weth})`);
    assert.ok(wbtc && Math.abs(wbtc / 60_000 - 1) < 0.15, `WBTC near 60,000 USD (${wbtc})`);
  });
});
