import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import type { Hex } from "../model/index.js";
import { insertChainRow } from "./chain-state.js";
import { saveWindows } from "./market-windows.js";
import { migrate } from "./migrate.js";
import { findPoolsOfToken, insertPools } from "./pools.js";
import { type PairLiquidityRow, savePairLiquidity } from "./stats.js";

const CHAIN = 913;
const address = (prefix: string, i: number) =>
  `0x${prefix}${i.toString(16).padStart(40 - prefix.length, "0")}` as Hex;
const TOKEN = address("a", 1);
/** 60 pools of TOKEN (on both sides: some tokens sort below it, some above), 20 of others. */
const POOLS = Array.from({ length: 80 }, (_, i) => {
  const other = address(i % 3 === 0 ? "0" : "b", i + 2);
  const [token0, token1] = i < 60 ? [TOKEN, other].sort() : [address("c", i), other].sort();
  return { address: address("f", i), token0: token0 as Hex, token1: token1 as Hex };
});

/** Statistics with ties (the same volume, the same liquidity), unknown liquidity and zero volume. */
function statsOf(i: number): (PairLiquidityRow & { volume: number }) | null {
  if (i % 10 === 9) return null; // no statistics row: ranks (0, unknown), by address
  const volume = i % 7 === 0 ? 0 : [500, 120, 120, 40][i % 4];
  const liquidity = i % 5 === 0 ? null : [9e6, 3e5, 3e5][i % 3];
  const pool = POOLS[i] as (typeof POOLS)[number];
  return {
    pool: pool.address,
    token0: pool.token0,
    token1: pool.token1,
    liquidityUsd: liquidity ?? null,
    liquidityExact:
      liquidity === undefined || liquidity === null ? null : { digits: BigInt(liquidity), scale: 0 },
    volume: volume ?? 0,
  };
}

/** The answer's order, computed over every pool of TOKEN. */
function expected(limit: number): string[] {
  const rank = (i: number) => {
    const s = statsOf(i);
    return { volume: s?.volume ?? 0, liquidity: s?.liquidityUsd ?? null };
  };
  const mine = POOLS.map((p, i) => ({ ...p, ...rank(i) })).filter(
    (p) => p.token0 === TOKEN || p.token1 === TOKEN,
  );
  const ranked = mine.filter((p) => p.volume !== 0 || p.liquidity !== null);
  const rest = mine.filter((p) => p.volume === 0 && p.liquidity === null);
  ranked.sort(
    (a, b) =>
      b.volume - a.volume ||
      (b.liquidity ?? Number.NEGATIVE_INFINITY) - (a.liquidity ?? Number.NEGATIVE_INFINITY) ||
      (a.address < b.address ? -1 : 1),
  );
  rest.sort((a, b) => (a.address < b.address ? -1 : 1));
  return [...ranked, ...rest].slice(0, limit).map((p) => p.address);
}

describe("the pairs of a token (findPoolsOfToken, migration 052's per-token rank indexes)", () => {
  let t: TestDb;
  before(async () => {
    t = await createTestDb();
    await insertChainRow(t.db, { chainId: CHAIN, name: "pairs", genesisHash: address("e", 0), devnet: true });
    await insertPools(
      t.db,
      CHAIN,
      POOLS.map((p, i) => ({
        ...p,
        dex: "uniswap-v2",
        protocol: "v2" as const,
        factory: address("d", 0),
        fee: null,
        tickSpacing: null,
        createdBlock: 1,
        createdLogIndex: i,
        base: null,
      })),
    );
    // Figures as the pricing writes them: the windows, then the liquidity.
    const rows = POOLS.map((_, i) => statsOf(i)).filter((r) => r !== null);
    const minute = Date.parse("2026-11-27T00:00:00Z");
    const none = { priceChange: null, volumeUsd: 0, buys: 0, sells: 0, makers: 0 };
    const day = (volumeUsd: number) => ({ priceChange: null, volumeUsd, buys: 1, sells: 1, makers: 1 });
    await saveWindows(
      t.db,
      CHAIN,
      "pool",
      rows.map((r) => ({
        owner: r.pool,
        minute,
        windows: [none, none, none, day(r.volume)],
        last: null,
        firstTradeAt: minute,
      })),
    );
    await savePairLiquidity(t.db, CHAIN, rows);
  });
  after(async () => {
    await t?.drop();
  });

  it("stores each pair's row with its pool's tokens", async () => {
    const { rows } = await t.db.query<{ pool: string; token0: string; token1: string }>(
      "SELECT pool, token0, token1 FROM pair_windows WHERE chain_id = $1 ORDER BY pool",
      [CHAIN],
    );
    assert.equal(rows.length, POOLS.filter((_, i) => statsOf(i) !== null).length);
    for (const row of rows) {
      const pool = POOLS.find((p) => p.address === row.pool);
      assert.deepEqual([row.token0, row.token1], [pool?.token0, pool?.token1], row.pool);
    }
  });

  it("answers the pools in the order of volume, liquidity, address, for every page size", async () => {
    for (const limit of [1, 5, 17, 30, 51, 60, 100]) {
      const pools = await findPoolsOfToken(t.db, { chainId: CHAIN, token: TOKEN, limit });
      assert.deepEqual(
        pools.map((p) => p.address),
        expected(limit),
        `limit ${limit}`,
      );
    }
    assert.deepEqual(await findPoolsOfToken(t.db, { chainId: CHAIN, token: address("9", 9), limit: 10 }), []);
  });

  it("keeps a rank index for each side of the pair, in the answer's order", async () => {
    const { rows: indexes } = await t.db.query<{ def: string }>(
      "SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'pair_windows'::regclass",
    );
    for (const side of ["token0", "token1"]) {
      assert.ok(
        indexes.some((i) =>
          i.def.includes(`(chain_id, ${side}, volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool)`),
        ),
        `a rank index of ${side}: ${indexes.map((i) => i.def).join("; ")}`,
      );
    }
  });
});

describe("migration 018 on stored statistics", () => {
  it("gives every existing row its pool's tokens", async () => {
    const t = await createTestDb({ empty: true });
    try {
      await migrate(t.db, { until: "017_figures_block.sql" });
      await insertChainRow(t.db, {
        chainId: CHAIN,
        name: "pairs",
        genesisHash: address("e", 0),
        devnet: true,
      });
      for (const [i, p] of POOLS.slice(0, 3).entries()) {
        await t.db.query(
          `INSERT INTO pools (chain_id, address, dex, protocol, factory, token0, token1, created_block, created_log_index)
           VALUES ($1, $2, 'uniswap-v2', 'v2', $3, $4, $5, 1, $6)`,
          [CHAIN, p.address, address("d", 0), p.token0, p.token1, i],
        );
        await t.db.query("INSERT INTO pair_stats (chain_id, pool, volume_usd_24h) VALUES ($1, $2, $3)", [
          CHAIN,
          p.address,
          i,
        ]);
      }
      assert.deepEqual(await migrate(t.db, { until: "018_pair_stats_tokens.sql" }), [
        "018_pair_stats_tokens.sql",
      ]);
      const { rows } = await t.db.query("SELECT pool, token0, token1 FROM pair_stats ORDER BY pool");
      assert.deepEqual(
        rows,
        POOLS.slice(0, 3).map((p) => ({ pool: p.address, token0: p.token0, token1: p.token1 })),
      );
    } finally {
      await t.drop();
    }
  });
});
