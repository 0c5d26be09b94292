import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { makerAndWindowRows } from "../_test/aggregates.js";
import { createAnswerServers } from "../_test/answer-servers.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { devnetReferenceTokens } from "../_test/devnet-config.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { indexOnce, startIndexer, waitIndexed } from "../_test/indexer-run.js";
import { referenceSwaps, referenceWindows } from "../_test/market-reference.js";
import { loadSwapsForMarket } from "../_test/sql.js";
import { parseConfig } from "../config/load.js";
import type { ChainConfig, Config } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing, type Pricing } from "../pricing/pricing.js";
import type { Db } from "../store/db.js";

/**
 * After a reorg on the devnet (evm_revert, then another branch), the market statistics the API
 * answers (tokens, pairs, pools/top, DEXes) equal those of a fresh index of the same chain, and
 * the reference computed from the stored swaps; the tables behind them (buckets, makers, windows)
 * are the same rows.
 */

const CHAIN = 31337;
const pricingOptions = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };

/** The market tables of a chain as plain sorted rows (the windows without the minute they were computed at). */
async function marketTables(db: Db): Promise<Record<string, unknown[]>> {
  const q = async (sql: string) => (await db.query(sql, [CHAIN])).rows;
  return {
    pool_trade_buckets: await q(
      "SELECT pool, resolution, bucket, volume_usd, trades, buys, first_key, last_key, first_time, open_price, close_price FROM pool_trade_buckets WHERE chain_id = $1 ORDER BY 1, 2, 3",
    ),
    token_trade_buckets: await q(
      "SELECT token, resolution, bucket, volume_usd, trades, buys, first_key, last_key, first_time, open_usd, close_usd FROM token_trade_buckets WHERE chain_id = $1 ORDER BY 1, 2, 3",
    ),
    ...(await makerAndWindowRows(db, CHAIN)),
  };
}

describe("market statistics after a devnet reorg equal those of a fresh index", { timeout: 600_000 }, () => {
  let devnet: IndexerDevnet;
  let chain: ChainConfig;
  let config: Config;
  let pricing: Pricing;
  const clock = { now: 0 };
  const dbs: TestDb[] = [];
  const servers = createAnswerServers(() => config);

  before(async () => {
    devnet = await startIndexerDevnet({ chainId: CHAIN, historyDays: 0.3, seed: 11 });
    chain = devnet.chain({ maxBlockRange: 25, referenceTokens: devnetReferenceTokens(devnet.deployment) });
    config = parseConfig({
      api: { host: "127.0.0.1", port: 0 },
      devnet: { enabled: false },
      pricing: pricingOptions,
      chains: [chain],
    });
    const latest = await devnet.devnet.latestBlock();
    clock.now = latest.timestamp * 1000;
    pricing = createPricing({ config, logger: createSilentLogger(), now: () => new Date(clock.now) });
  });
  after(async () => {
    await servers.close();
    await devnet?.stop();
    for (const t of dbs) await t.drop();
  });

  /** Everything the market endpoints answer about the chain. */
  async function answers(db: Db) {
    const get = await servers.serve(db);
    const tokenIds = Object.values(devnet.deployment.tokens).map((t) => `${t.address}:${CHAIN}`);
    const pairIds = devnet.deployment.pools.map((p) => `${p.address}:${CHAIN}`);
    return {
      tokens: await get("/v1/tokens/market", { tokenId: tokenIds.join(",") }),
      pairs: await get("/api/v1/pairs/market", { pair_id: pairIds.join(",") }),
      volume: await get("/api/v1/pools/top", { chain: CHAIN, sort: "volume", limit: 100 }),
      liquidity: await get("/api/v1/pools/top", { chain: CHAIN, sort: "liquidity", limit: 100 }),
      trending: await get("/api/v1/pools/top", { chain: CHAIN, sort: "trending", limit: 100 }),
      newest: await get("/api/v1/pools/top", { chain: CHAIN, sort: "new", limit: 100 }),
      dexes: await get("/v1/dexes", {}),
    };
  }

  it("the followed database, rolled back and re-indexed, answers what a fresh index answers", async () => {
    const followed = await createTestDb();
    dbs.push(followed);
    const snapshot = await devnet.snapshot();
    await devnet.mineSwaps({ blocks: 6, swapsPerBlock: 4, seed: 1 });
    const indexer = await startIndexer(followed.db, chain, {
      derived: pricing,
      options: { initialBlockRange: 10 },
    });
    let before: Awaited<ReturnType<typeof answers>>;
    try {
      await waitIndexed(followed.db, CHAIN, await devnet.head());
      clock.now = (await devnet.devnet.latestBlock()).timestamp * 1000 + 20_000;
      await pricing.refreshStats(followed.db, CHAIN, new Date(clock.now));
      before = await answers(followed.db);
      // The competing branch: from the snapshot, other trades (other makers) in more blocks.
      await devnet.revert(snapshot);
      await devnet.mineSwaps({ blocks: 8, swapsPerBlock: 3, seed: 2 });
      const latest = await devnet.devnet.latestBlock();
      await waitIndexed(followed.db, CHAIN, latest.number, latest.hash);
    } finally {
      await indexer.stop();
    }
    clock.now = (await devnet.devnet.latestBlock()).timestamp * 1000 + 20_000;
    await pricing.refreshStats(followed.db, CHAIN, new Date(clock.now));

    const fresh = await createTestDb();
    dbs.push(fresh);
    await indexOnce(fresh.db, chain, { derived: pricing });
    await pricing.refreshStats(fresh.db, CHAIN, new Date(clock.now));

    const after = await answers(followed.db);
    const expected = await answers(fresh.db);
    assert.notDeepEqual(after.pairs, before.pairs, "the reorg changed the figures");
    for (const key of Object.keys(expected) as (keyof typeof expected)[]) {
      assert.deepEqual(after[key], expected[key], key);
    }
    assert.deepEqual(await marketTables(followed.db), await marketTables(fresh.db), "the market tables");

    // And both equal the reference from the stored swaps.
    const swaps = referenceSwaps(await loadSwapsForMarket(followed.db, CHAIN));
    for (const t of after.tokens) {
      assert.deepEqual(
        t.windows,
        // The 24-hour change is to the token's USD price now (docs/API.md).
        referenceWindows(swaps, { token: t.contract as string }, clock.now, t.usd_price as number | null),
        String(t.symbol),
      );
    }
    for (const p of after.pairs) {
      assert.deepEqual(p.windows, referenceWindows(swaps, { pool: p.pair_address as string }, clock.now));
    }
    const recent = after.tokens.filter((t) => {
      const w5 = (t.windows as Record<string, Record<string, number>>)["5m"] as Record<string, number>;
      return (w5.buys as number) + (w5.sells as number) > 0 && (w5.makers as number) > 0;
    });
    assert.ok(recent.length > 0, "the new branch's trades are in the 5-minute windows");
  });
});
