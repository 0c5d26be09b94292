/**
 * The batches compute their tokens' liquidity and 24-hour change from the market in memory and a
 * copy of the pools' liquidity (market-stats.ts `memoryTokenStats`): the very figures the database's own inputs give
 * (`refreshTokenStats`), bit for bit, after batches of every size, a minute slide and a failed slide.
 */
import * as assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { seededRandom } from "../_test/random.js";
import { snapshotAggregates } from "../_test/sql.js";
import {
  createSyntheticChain,
  ingestSyntheticChain,
  prepareSyntheticChain,
} from "../_test/synthetic-chain.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import type { Db } from "../store/db.js";
import { refreshTokenStats } from "./market-stats.js";
import { createPricing } from "./pricing.js";

const CHAIN = 903;
const FLOOR = 10_000;

describe("token statistics from memory", () => {
  const dbs: TestDb[] = [];
  after(async () => {
    for (const db of dbs) await db.drop();
  });

  it("equal those computed from the database", async () => {
    const chain = createSyntheticChain({
      chainId: CHAIN,
      startBlock: 1,
      startTime: Date.parse("2024-05-01T22:00:00Z") / 1000,
    });
    const spec = { USDC: 6, WETH: 18, AAA: 18, BBB: 9, NODEC: null } as const;
    const tokens: Record<string, Hex> = {};
    for (const [symbol, decimals] of Object.entries(spec)) tokens[symbol] = chain.token(symbol, decimals);
    const t = (s: keyof typeof spec) => tokens[s] as Hex;
    const u = (s: keyof typeof spec, amount: number) =>
      BigInt(Math.round(amount * 1e6)) * 10n ** BigInt((spec[s] ?? 18) - 6);
    const pools: Hex[] = [];
    const add = (a: keyof typeof spec, b: keyof typeof spec, x: number, y: number, v3 = false) => {
      const p = chain.pool(t(a), t(b), { protocol: v3 ? "v3" : "v2" });
      chain.mint(p, { [t(a)]: u(a, x), [t(b)]: u(b, y) });
      pools.push(p);
    };
    add("USDC", "WETH", 3_000_000, 1000);
    add("USDC", "WETH", 900_000, 300, true);
    add("AAA", "WETH", 1_000_000, 100);
    add("AAA", "USDC", 3_000, 900); // below the floor
    add("BBB", "AAA", 50_000, 100_000);
    add("BBB", "WETH", 200_000, 60, true);
    add("NODEC", "WETH", 10_000, 10);
    chain.mine(12);
    const random = seededRandom(5);
    for (let b = 0; b < 200; b++) {
      for (let i = Math.floor(random() * 4); i > 0; i--) {
        const pool = pools[Math.floor(random() * pools.length)] as Hex;
        const r = chain.reserves(pool);
        const zeroIn = random() < 0.5;
        const amount =
          ((zeroIn ? r.reserve0 : r.reserve1) * BigInt(Math.floor((0.0001 + random() * 0.05) * 1e6))) /
          1_000_000n;
        if (amount > 0n) chain.swap(pool, zeroIn ? r.token0 : r.token1, amount);
      }
      chain.mine(12 + Math.floor(random() * 900));
    }
    const last = chain.blocks[chain.blocks.length - 1]?.timestamp as number;
    const clock = { now: new Date((last + 90) * 1000) };
    const pricing = createPricing({
      config: {
        pricing: { liquidityFloorUsd: FLOOR, maxDeviation: 0.1 },
        chains: [
          {
            id: CHAIN,
            referenceTokens: {
              stablecoins: [t("USDC")],
              wrappedNative: t("WETH"),
              wrappedBtc: [],
              others: [],
            },
          },
        ],
      },
      logger: createSilentLogger(),
      now: () => clock.now,
    });
    const test = await createTestDb();
    dbs.push(test);
    const { db } = test;
    await prepareSyntheticChain(db, CHAIN, 1);

    /** The token figures as stored, then as the database's inputs give them at the same clock. */
    const compare = async (db: Db, label: string) => {
      const stored = (await snapshotAggregates(db, CHAIN)).token_windows;
      assert.ok((stored?.length ?? 0) >= 4, `${label}: token statistics`);
      await refreshTokenStats(db, CHAIN, Object.values(tokens), clock.now.getTime(), FLOOR);
      assert.deepEqual((await snapshotAggregates(db, CHAIN)).token_windows, stored, label);
    };

    const middle = chain.blocks[Math.floor(chain.blocks.length / 2)]?.number as number;
    const batchRandom = seededRandom(8);
    await ingestSyntheticChain(db, pricing, chain, {
      toBlock: middle,
      batchSize: () => 1 + Math.floor(batchRandom() * 9),
    });
    clock.now = new Date(clock.now.getTime() + 7 * 60_000);
    // A slide in between: its rows are applied to the copy the next batches read.
    await pricing.refreshStats(db, CHAIN, clock.now);
    // A slide that fails (before its first chunk: nothing applied to the copy).
    await assert.rejects(
      pricing.refreshStats(db, CHAIN, new Date(Number.NaN)),
      "a slide at an invalid time fails",
    );
    await ingestSyntheticChain(db, pricing, chain, { batchSize: () => 1 + Math.floor(batchRandom() * 9) });
    await compare(db, "after batches and slides: as from the database");
  });
});
