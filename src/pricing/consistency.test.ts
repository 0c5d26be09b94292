import * as assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { assertSameAggregates } from "../_test/aggregates.js";
import type { TestDb } from "../_test/db.js";
import { seededRandom } from "../_test/random.js";
import { snapshotAggregates } from "../_test/sql.js";
import {
  createSyntheticChain,
  ingestSyntheticChain,
  prepareSyntheticChain,
  rollbackSyntheticChain,
  type SyntheticChain,
} from "../_test/synthetic-chain.js";
import { createTestDbs } from "../_test/test-dbs.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import type { DerivedData } from "../sync/derived.js";
import { refreshPairLiquidity, refreshTokenStats } from "./market-stats.js";
import { createPricing } from "./pricing.js";

const CHAIN = 902;

type Market = { chain: SyntheticChain; tokens: Record<string, Hex>; pools: Hex[] };

/** A market with anchors, WETH, WBTC, tokens one and two hops away, thin pools and a token of unknown decimals. */
function createMarket(): Market {
  const chain = createSyntheticChain({
    chainId: CHAIN,
    startBlock: 1,
    startTime: Date.parse("2024-05-01T22:00:00Z") / 1000,
  });
  const spec = { USDC: 6, USDT: 6, WETH: 18, WBTC: 8, AAA: 18, BBB: 9, NODEC: null, DUST: 12 } as const;
  const tokens: Record<string, Hex> = {};
  for (const [symbol, decimals] of Object.entries(spec)) tokens[symbol] = chain.token(symbol, decimals);
  const t = (s: string) => tokens[s] as Hex;
  const u = (s: string, amount: number) =>
    BigInt(Math.round(amount * 1e6)) * 10n ** BigInt((spec[s as keyof typeof spec] ?? 18) - 6);
  const pools: Hex[] = [];
  const add = (a: string, b: string, amountA: number, amountB: number, protocol: "v2" | "v3" = "v2") => {
    const p = chain.pool(t(a), t(b), { protocol });
    chain.mint(p, { [t(a)]: u(a, amountA), [t(b)]: u(b, amountB) });
    pools.push(p);
  };
  add("USDC", "WETH", 3_000_000, 1000);
  add("USDT", "WETH", 1_500_000, 500, "v3");
  add("WBTC", "WETH", 10, 200);
  add("WBTC", "USDC", 5, 300_000, "v3");
  add("AAA", "WETH", 1_000_000, 100);
  add("AAA", "USDC", 3_000, 900); // thin
  add("BBB", "AAA", 50_000, 100_000);
  add("BBB", "WETH", 200_000, 60, "v3");
  add("NODEC", "WETH", 10_000, 10);
  add("DUST", "WETH", 100_000, 0.5); // thin
  chain.mine(12);
  return { chain, tokens, pools };
}

/** Random trades (and the odd mint) over `blocks` blocks. */
/** The pricing stage of the market's chain, its clock stopped at `now`. */
function pricingOf(
  market: Market,
  now: Date | (() => Date),
  deferFigures: Parameters<typeof createPricing>[0]["deferFigures"] = false,
  figuresPerBatch?: { tokens: number; pools: number; fromPools: number },
  slideChunks?: { first: number; ms: number; rest?: number },
) {
  return createPricing({
    deferFigures,
    ...(figuresPerBatch ? { figuresPerBatch } : {}),
    ...(slideChunks ? { slideChunks } : {}),
    config: {
      pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 },
      chains: [
        {
          id: CHAIN,
          referenceTokens: {
            stablecoins: [market.tokens.USDC as Hex, market.tokens.USDT as Hex],
            wrappedNative: market.tokens.WETH as Hex,
            wrappedBtc: [market.tokens.WBTC as Hex],
            others: [],
          },
        },
      ],
    },
    logger: createSilentLogger(),
    now: typeof now === "function" ? now : () => now,
  });
}

function trade(market: Market, random: () => number, blocks: number) {
  const { chain, pools } = market;
  for (let b = 0; b < blocks; b++) {
    const n = Math.floor(random() * 4);
    for (let i = 0; i < n; i++) {
      const pool = pools[Math.floor(random() * pools.length)] as Hex;
      const r = chain.reserves(pool);
      const zeroIn = random() < 0.5;
      const reserve = zeroIn ? r.reserve0 : r.reserve1;
      // Between 0.01 % and 5 % of the input side's balance; now and then a 10× push.
      const share = random() < 0.03 ? 2.2 : 0.0001 + random() * 0.05;
      const amount = (reserve * BigInt(Math.floor(share * 1e6))) / 1_000_000n;
      if (amount > 0n) chain.swap(pool, zeroIn ? r.token0 : r.token1, amount);
    }
    if (random() < 0.05) {
      const pool = pools[Math.floor(random() * pools.length)] as Hex;
      const r = chain.reserves(pool);
      chain.mint(pool, { [r.token0]: r.reserve0 / 10n, [r.token1]: r.reserve1 / 10n });
    }
    const gap = random() < 0.02 ? 6 * 3600 : 12 + Math.floor(random() * 600);
    chain.mine(gap);
  }
}

/** The market with `blocks` blocks of random trades, drawn from `seed`. */
function tradedMarket(seed: number, blocks: number): Market {
  const market = createMarket();
  trade(market, seededRandom(seed), blocks);
  return market;
}

/** The file's test databases, dropped once its tests have run. */
const dbs = createTestDbs();
after(() => dbs.drop());

/** A new database, prepared for the synthetic chain. */
async function preparedDb(): Promise<TestDb> {
  const testDb = await dbs.create();
  await prepareSyntheticChain(testDb.db, CHAIN, 1);
  return testDb;
}

describe("aggregates equal those of a fresh index", () => {
  it("whatever the batches, after a reorg rollback and on the new branch", async () => {
    const random = seededRandom(7);
    const market = createMarket();
    trade(market, random, 150);
    const forkPoint = market.chain.blocks[market.chain.blocks.length - 1]?.number as number;
    const branch: Market = { ...market, chain: market.chain.fork() };
    trade(market, random, 60);
    trade(branch, seededRandom(99), 40);
    const lastTime = Math.max(
      ...[market, branch].map((m) => m.chain.blocks[m.chain.blocks.length - 1]?.timestamp as number),
    );
    const now = new Date((lastTime + 90) * 1000);
    const pricing = pricingOf(market, now);
    const fresh = async (chain: SyntheticChain, toBlock?: number) => {
      const t = await preparedDb();
      await ingestSyntheticChain(t.db, pricing, chain, { ...(toBlock ? { toBlock } : {}) });
      return t;
    };

    const a = await preparedDb();
    const batchRandom = seededRandom(3);
    await ingestSyntheticChain(a.db, pricing, market.chain, {
      batchSize: () => 1 + Math.floor(batchRandom() * 12),
    });
    const whole = await fresh(market.chain);
    const snapshot = await snapshotAggregates(a.db, CHAIN);
    assert.ok((snapshot.candles?.length ?? 0) > 300, `a busy market: ${snapshot.candles?.length} candles`);
    assert.ok((snapshot.token_usd_candles?.length ?? 0) > 100, "USD series");
    // The candles' USD sides (migration 010) are compared too: present, and null where unpriced.
    const candleRows = (snapshot.candles ?? []) as Record<string, unknown>[];
    const usdSides = candleRows.filter((r) => r.open_usd0 !== null).length;
    assert.ok(usdSides > 300, `${usdSides} candles with token0's USD candle`);
    assert.ok(
      candleRows.some((r) => r.open_usd0 === null || r.open_usd1 === null),
      "a thin token without USD price leaves its side null",
    );
    assert.deepEqual(snapshot, await snapshotAggregates(whole.db, CHAIN), "batch by batch = one batch");
    // The batches computed the pools' USD liquidity from the market in memory: the same figures
    // as the database's own inputs give (the liquidity-only refresh, every pool).
    const { rows: allPools } = await a.db.query<{ address: string }>(
      "SELECT address FROM pools WHERE chain_id = $1",
      [CHAIN],
    );
    const pairStats = (s: Record<string, unknown[]>) => s.pair_windows;
    assert.ok((pairStats(snapshot)?.length ?? 0) >= 8, "pair statistics");
    await refreshPairLiquidity(
      a.db,
      CHAIN,
      allPools.map((p) => p.address),
    );
    assert.deepEqual(
      pairStats(await snapshotAggregates(a.db, CHAIN)),
      pairStats(snapshot),
      "liquidity from memory = liquidity from the database",
    );

    const later = new Date(now.getTime() + 5 * 3600_000);
    await assertSameAggregates(pricing, [a.db, whole.db], CHAIN, later, "the window slid the same way");
    await pricing.refreshStats(a.db, CHAIN, now);

    await rollbackSyntheticChain(a.db, pricing, market.chain, forkPoint);
    const upToFork = await fresh(market.chain, forkPoint);
    assert.deepEqual(
      await snapshotAggregates(a.db, CHAIN),
      await snapshotAggregates(upToFork.db, CHAIN),
      "after the rollback: a fresh index up to the common ancestor",
    );

    await ingestSyntheticChain(a.db, pricing, branch.chain, {
      batchSize: () => 1 + Math.floor(batchRandom() * 12),
    });
    const freshBranch = await fresh(branch.chain);
    assert.deepEqual(
      await snapshotAggregates(a.db, CHAIN),
      await snapshotAggregates(freshBranch.db, CHAIN),
      "on the new branch: a fresh index of it",
    );
  });

  it("after a batch whose transaction failed once priced: the market kept in memory is not ahead", async () => {
    const market = tradedMarket(11, 80);
    const blocks = market.chain.blocks;
    const now = new Date(((blocks[blocks.length - 1]?.timestamp as number) + 90) * 1000);
    const makePricing = () => pricingOf(market, now);
    const pricing = makePricing();
    const a = await preparedDb();
    const middle = blocks[Math.floor(blocks.length / 2)]?.number as number;
    await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: middle, batchSize: () => 5 });

    // The next batch is priced and its derived data written, then its transaction fails.
    let priced = 0;
    const failing: DerivedData = {
      priceBatch: async (client, batch) => {
        priced += 1;
        const result = await pricing.priceBatch(client, batch);
        return {
          usdOf: result.usdOf,
          write: async (writer, inserted) => {
            await result.write(writer, inserted);
            throw new Error("the commit fails after the pricing");
          },
        };
      },
      afterRollback: (client, rollback) => pricing.afterRollback(client, rollback),
    };
    await assert.rejects(
      ingestSyntheticChain(a.db, failing, market.chain, { batchSize: () => 10 }),
      /the commit fails/,
    );
    assert.equal(priced, 1, "the failed batch was priced before its swaps were inserted");
    await ingestSyntheticChain(a.db, pricing, market.chain, { batchSize: () => 7 });

    const whole = await preparedDb();
    await ingestSyntheticChain(whole.db, makePricing(), market.chain);
    const snapshot = await snapshotAggregates(a.db, CHAIN);
    assert.ok((snapshot.swaps?.length ?? 0) > 50, `${snapshot.swaps?.length} swaps`);
    assert.deepEqual(snapshot, await snapshotAggregates(whole.db, CHAIN), "as a fresh index");
  });
});

describe("aggregates equal those of a fresh index: figures deferred or shared", () => {
  it("with the market-wide figures deferred in a backfill, and after a restart while they were", async () => {
    const market = tradedMarket(21, 160);
    const blocks = market.chain.blocks;
    const head = blocks[blocks.length - 1]?.number as number;
    const now = new Date(((blocks[blocks.length - 1]?.timestamp as number) + 90) * 1000);
    const deferring = { minBlocks: 20, maxAgeMs: 3_600_000 };
    const whole = await preparedDb();
    await ingestSyntheticChain(whole.db, pricingOf(market, now), market.chain);
    // The market windows too (pricing.ts defers them with the figures).
    const snapshot = async (t: TestDb) => {
      const q = async (sql: string) => (await t.db.query(sql, [CHAIN])).rows;
      return {
        ...(await snapshotAggregates(t.db, CHAIN)),
        pool_trade_buckets: await q("SELECT * FROM pool_trade_buckets WHERE chain_id = $1 ORDER BY 2, 3, 4"),
        token_trade_buckets: await q(
          "SELECT * FROM token_trade_buckets WHERE chain_id = $1 ORDER BY 2, 3, 4",
        ),
        pool_makers: await q("SELECT * FROM pool_makers WHERE chain_id = $1 ORDER BY 2, 3"),
        token_makers: await q("SELECT * FROM token_makers WHERE chain_id = $1 ORDER BY 2, 3"),
        pair_windows: await q("SELECT * FROM pair_windows WHERE chain_id = $1 ORDER BY 2"),
        token_windows: await q("SELECT * FROM token_windows WHERE chain_id = $1 ORDER BY 2"),
      };
    };
    const expected = await snapshot(whole);
    assert.ok(expected.pair_windows.length > 0 && expected.pool_trade_buckets.length > 0, "market windows");
    const figures = async (t: TestDb) =>
      (
        await t.db.query<{ priced_block: number; figures_block: number }>(
          "SELECT priced_block, figures_block FROM pricing_sync WHERE chain_id = $1",
          [CHAIN],
        )
      ).rows[0];

    // In batches of up to 12 blocks heading for the last block: those more than 20 below it defer.
    const a = await preparedDb();
    const sizes = seededRandom(5);
    const middle = blocks[Math.floor(blocks.length / 2)]?.number as number;
    const pricing = pricingOf(market, now, deferring);
    const batchSize = () => 1 + Math.floor(sizes() * 12);
    await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: middle, headBlock: head, batchSize });
    const behind = await figures(a);
    assert.equal(behind?.priced_block, middle);
    assert.ok((behind?.figures_block ?? middle) < middle, `figures left at ${behind?.figures_block}`);
    const { rows: stale } = await a.db.query("SELECT 1 FROM token_prices WHERE chain_id = $1", [CHAIN]);
    assert.equal(stale.length, 0, "no token_prices row written while deferred from the start");
    await ingestSyntheticChain(a.db, pricing, market.chain, { headBlock: head, batchSize });
    assert.deepEqual(await figures(a), { priced_block: head, figures_block: head });
    assert.deepEqual(await snapshot(a), expected, "deferred, then brought up to date");

    // A new process (its market loaded afresh) finds the figures behind: every pool is refreshed.
    const b = await preparedDb();
    await ingestSyntheticChain(b.db, pricingOf(market, now, deferring), market.chain, {
      toBlock: middle,
      headBlock: head,
      batchSize,
    });
    await ingestSyntheticChain(b.db, pricingOf(market, now, deferring), market.chain, {
      headBlock: head,
      batchSize,
    });
    assert.deepEqual(await snapshot(b), expected, "restarted while deferred");
  });

  it("with a large chain's figures a share per batch: behind while trading, equal once every share came round", async () => {
    const market = tradedMarket(33, 120);
    // Last, WETH's price alone moves (a push in USDC/WETH): the USD price of every token priced
    // through WETH moves with it, in a batch that stores only USDC's and WETH's.
    const [usdcWeth] = market.pools as [Hex];
    const r = market.chain.reserves(usdcWeth);
    const usdcReserve = r.token0 === market.tokens.USDC ? r.reserve0 : r.reserve1;
    market.chain.swap(usdcWeth, market.tokens.USDC as Hex, usdcReserve / 50n);
    market.chain.mine(12);
    const tradedTo = market.chain.blocks.at(-1)?.number as number;
    // Blocks without events: each batch of one still refreshes its share (a token, two pools).
    for (let i = 0; i < 20; i++) market.chain.mine(12);
    const blocks = market.chain.blocks;
    const now = new Date(((blocks.at(-1)?.timestamp as number) + 90) * 1000);
    const fresh = async (toBlock?: number) => {
      const t = await preparedDb();
      await ingestSyntheticChain(t.db, pricingOf(market, now), market.chain, toBlock ? { toBlock } : {});
      return snapshotAggregates(t.db, CHAIN);
    };
    const share = { tokens: 1, pools: 2, fromPools: 0 };
    const a = await preparedDb();
    const pricing = pricingOf(market, now, false, share);
    const sizes = seededRandom(8);
    const batchSize = () => 1 + Math.floor(sizes() * 6);
    await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: tradedTo - 1, batchSize });
    await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: tradedTo });
    // Untraded tokens' prices (their quotes moved) and the liquidity of untraded pools wait their turn.
    const behind = await snapshotAggregates(a.db, CHAIN);
    const whole = await fresh(tradedTo);
    assert.notDeepEqual(behind.token_prices, whole.token_prices, "prices behind");
    assert.notDeepEqual(behind.pair_windows, whole.pair_windows, "liquidity behind");
    await ingestSyntheticChain(a.db, pricing, market.chain, { batchSize: () => 1 });
    assert.deepEqual(await snapshotAggregates(a.db, CHAIN), await fresh(), "every share came round");
  });
});

describe("aggregates equal those of a fresh index: the minute's slide", () => {
  it("statistics slid a minute at a time (only what the clock moved) equal those recomputed whole", async () => {
    const market = tradedMarket(55, 150);
    const blocks = market.chain.blocks;
    const first = (blocks[1]?.timestamp as number) * 1000;
    const last = (blocks.at(-1)?.timestamp as number) * 1000;
    const t = await preparedDb();
    const pricing = pricingOf(market, new Date(Math.max(last, first) + 60_000));
    await ingestSyntheticChain(t.db, pricing, market.chain);
    const stats = async () => {
      const { pair_windows, token_windows } = await snapshotAggregates(t.db, CHAIN);
      return { pair_windows, token_windows };
    };
    // 150 slides a minute apart from where the first trades leave the window: trades leave, hours
    // turn whole and the first hour turns partial (later trades, if any, stay in it throughout).
    let at = first + 86_400_000 + 10 * 60_000;
    let fewer = 0;
    let moved = 0;
    let before = await stats();
    for (let i = 0; i < 150; i++) {
      at += 60_000;
      const slid = await pricing.refreshStats(t.db, CHAIN, new Date(at));
      const incremental = await stats();
      if (JSON.stringify(incremental) !== JSON.stringify(before)) moved += 1;
      // A pricing that never slid recomputes every token with trades in the window.
      const whole = await pricingOf(market, new Date(at)).refreshStats(t.db, CHAIN, new Date(at));
      if (slid.tokens < whole.tokens) fewer += 1;
      assert.deepEqual(await stats(), incremental, `slide ${i} at ${new Date(at).toISOString()}`);
      before = incremental;
    }
    assert.ok(fewer > 100, `slides that recomputed fewer tokens than the whole: ${fewer}`);
    assert.ok(moved > 10, `slides that moved a figure: ${moved}`);
  });

  it("a slide in chunks of one pool or token, batches running between them, ends as a fresh index", async () => {
    const market = tradedMarket(61, 90);
    const blocks = market.chain.blocks;
    const now = new Date(((blocks.at(-1)?.timestamp as number) + 90) * 1000);
    const at = (i: number) => blocks[Math.floor((blocks.length * i) / 6)] as (typeof blocks)[number];
    // From the second third on, the clock is a day after the first sixth: those trades left the window.
    const later = new Date((at(1).timestamp + 86_400) * 1000);
    const a = await preparedDb();
    const clock = { now };
    // One pool or token a transaction: a batch can take the statistics lock between any two. After
    // each, a rest three times as long as the chunk held the lock (scaled with the machine's load,
    // as the service's own rest is): the batches then run between the chunks however loaded the
    // machine, rather than only when the scheduler lets them.
    const pricing = pricingOf(market, () => clock.now, false, undefined, { first: 1, ms: 0, rest: 3 });
    const sizes = seededRandom(9);
    const batchSize = () => 1 + Math.floor(sizes() * 4);
    await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: at(2).number, batchSize });
    clock.now = later;
    // A slide stopped (the service stopping) before its first chunk: nothing stored, nothing lost.
    await assert.rejects(
      pricing.refreshStats(a.db, CHAIN, later, AbortSignal.abort(new Error("stop"))),
      /stop/,
    );
    // The process's first slide recomputes every pool with trades in the window, and their tokens;
    // meanwhile batches of one block each, until it has finished.
    let finished = false;
    const slide = pricing.refreshStats(a.db, CHAIN, later).finally(() => {
      finished = true;
    });
    let between = 0;
    for (const block of blocks.filter((b) => b.number > at(2).number && b.number <= at(4).number)) {
      await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: block.number });
      if (!finished) between += 1;
    }
    const slid = await slide;
    assert.ok(between >= 2, `batches that ran while the slide was in flight: ${between}`);
    assert.ok(
      slid.windows.pools >= 5 && slid.tokens >= 5,
      `slid ${slid.windows.pools} pools, ${slid.tokens} tokens`,
    );
    // Fifty minutes later, a slide alone: then a batch of one block reads the copy of the liquidity the
    // chunks kept up to date for its tokens' statistics (sums over their pools, most untraded in it).
    const later2 = new Date(later.getTime() + 50 * 60_000);
    clock.now = later2;
    assert.ok(
      (await pricing.refreshStats(a.db, CHAIN, later2)).windows.pools >= 3,
      "pools whose trades left",
    );
    const next = blocks.find((b) => b.number > at(4).number && b.swaps.length > 0) as (typeof blocks)[number];
    await ingestSyntheticChain(a.db, pricing, market.chain, { toBlock: next.number });
    const stored = (await snapshotAggregates(a.db, CHAIN)).token_windows;
    await refreshTokenStats(a.db, CHAIN, Object.values(market.tokens), later2.getTime(), 10_000);
    assert.deepEqual(
      (await snapshotAggregates(a.db, CHAIN)).token_windows,
      stored,
      "token statistics after the slide",
    );
    await ingestSyntheticChain(a.db, pricing, market.chain, { batchSize });
    // Nothing moved since: this slide recomputes nothing.
    const again = await pricing.refreshStats(a.db, CHAIN, later2);
    assert.deepEqual([again.tokens, again.windows.pools, again.windows.tokens], [0, 0, 0]);

    const b = await preparedDb();
    const wholeClock = { now };
    const whole = pricingOf(market, () => wholeClock.now);
    await ingestSyntheticChain(b.db, whole, market.chain, { toBlock: at(2).number });
    wholeClock.now = later;
    await ingestSyntheticChain(b.db, whole, market.chain, { toBlock: at(4).number });
    wholeClock.now = later2;
    await ingestSyntheticChain(b.db, whole, market.chain);
    await whole.refreshStats(b.db, CHAIN, later2);
    assert.deepEqual(await snapshotAggregates(a.db, CHAIN), await snapshotAggregates(b.db, CHAIN));
  });
});
