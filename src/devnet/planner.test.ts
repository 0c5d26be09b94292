import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeFunctionResult } from "viem";
import { v2PairAbi } from "./abis.js";
import { type Deployment, planDeployment, rawAmountForUsd } from "./deploy.js";
import { tradingActivity } from "./market-model.js";
import { createPlanner, historySchedule, type PlannedBlock, type Planner } from "./planner.js";
import { rawPriceFromUsd, sqrtPriceX96FromPrice } from "./pool-math.js";
import type { PoolState } from "./pool-state.js";
import { createRandom } from "./random.js";

// The planner runs without a node: the deployment is planned (addresses and prices follow from
// the accounts and the seed), and the pools' states are what the deployment would have made.
const accounts = Array.from({ length: 30 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}` as const);
const deployment = planDeployment({ chainId: 31337, seed: 42, accounts });
const start = 1_740_787_200; // 2025-03-01T00:00:00Z, a Saturday at midnight

/** Every pool at its initial price, both sides worth half its liquidity (`skew` multiplies reserve1 of some). */
function initialStates(d: Deployment, skew: Record<string, number> = {}): Map<string, PoolState> {
  const states = new Map<string, PoolState>();
  for (const pool of d.pools) {
    const t0 = d.tokens[pool.token0Key];
    const t1 = d.tokens[pool.token1Key];
    const reserve0 = rawAmountForUsd(t0, pool.initialLiquidityUsd / 2);
    const reserve1 = BigInt(
      Math.floor(Number(rawAmountForUsd(t1, pool.initialLiquidityUsd / 2)) * (skew[pool.key] ?? 1)),
    );
    if (pool.protocol === "v2") states.set(pool.key, { protocol: "v2", reserve0, reserve1 });
    else {
      const rawPrice =
        rawPriceFromUsd(
          { priceUsd: t0.initialPriceUsd, decimals: t0.unitDecimals },
          { priceUsd: t1.initialPriceUsd, decimals: t1.unitDecimals },
        ) * (skew[pool.key] ?? 1);
      const liquidity = BigInt(Math.floor(Math.sqrt(Number(reserve0) * Number(reserve1))));
      states.set(pool.key, { protocol: "v3", sqrtPriceX96: sqrtPriceX96FromPrice(rawPrice), liquidity });
    }
  }
  return states;
}

function plannerAt(seed: number, states = initialStates(deployment)): Planner {
  const planner = createPlanner({ deployment, random: createRandom(seed).fork("simulator") });
  planner.reset({ states, nextTokenId: 100n, startTimestamp: start });
  return planner;
}

/** Plans `count` history blocks 5 minutes apart, settling each without reads (as if nothing was read). */
function planHistory(planner: Planner, count: number, randomTrades = 2): PlannedBlock[] {
  const blocks: PlannedBlock[] = [];
  for (let i = 0; i < count; i++) {
    const block = planner.planBlock(start + 12 * 3600 + 300 * (i + 1), { randomTrades });
    planner.settle(block, { poolStates: undefined, results: block.reads.map(() => "0x") }, []);
    blocks.push(block);
  }
  return blocks;
}

const summary = (blocks: PlannedBlock[]) =>
  blocks.map((b) => b.txs.map((tx) => [tx.from, tx.to, tx.data, tx.gas, tx.value ?? 0n]));

describe("simulator planner (no node)", () => {
  it("plans the same transactions for the same seed, other ones for another seed", () => {
    const a = summary(planHistory(plannerAt(42), 60));
    const b = summary(planHistory(plannerAt(42), 60));
    const c = summary(planHistory(plannerAt(43), 60));
    assert.deepEqual(b, a);
    assert.notDeepEqual(c, a);
  });

  it("sends every trade through the periphery, from a trader, and counts a swap per hop", () => {
    const blocks = planHistory(plannerAt(7), 200);
    const trades = blocks.flatMap((b) => b.trades);
    assert.ok(trades.length >= 400, `${trades.length} trades`);
    const traders = new Set(deployment.accounts.traders);
    assert.ok(trades.every((t) => traders.has(t.from) && t.amountIn > 0n));
    assert.ok(
      trades.some((t) => t.hops.length >= 2),
      "some trades are routed",
    );
    const routers = new Set([
      deployment.v2.router,
      deployment.v3.swapRouter,
      deployment.v3.positionManager,
      deployment.v4.swapRouter,
      deployment.v4.modifyLiquidityRouter,
      deployment.v4.donateRouter,
      deployment.algebra.callee,
      // An Algebra position's owner burns and collects on the pool itself.
      ...deployment.pools.filter((p) => p.protocol === "algebra").map((p) => p.address),
    ]);
    for (const block of blocks) {
      assert.ok(block.txs.every((tx) => tx.to !== undefined && routers.has(tx.to)));
      assert.equal(
        block.expectedSwaps,
        block.trades.reduce((n, t) => n + t.hops.length, 0),
      );
      assert.ok(block.trades.length <= block.txs.length);
    }
  });

  it("reads the pools' state every eighth block and after a liquidity change", () => {
    const blocks = planHistory(plannerAt(42), 400);
    // An Algebra pool's change waits for the periodic read (planner.ts): its transactions go to
    // the callee (mint) or the pool (burn and collect, two transactions for one change).
    const algebra = new Set<string>([
      deployment.algebra.callee,
      ...deployment.pools.filter((p) => p.protocol === "algebra").map((p) => p.address),
    ]);
    const otherChanges = (block: (typeof blocks)[number]) =>
      block.liquidityChanges -
      block.txs.filter((tx) => tx.to !== undefined && algebra.has(tx.to) && /mint|burn/.test(tx.label))
        .length;
    blocks.forEach((block, i) => {
      const previous = blocks[i - 1];
      const afterChange = previous !== undefined && otherChanges(previous) > 0;
      if (i % 8 === 0 || afterChange) assert.ok(block.refresh, `block ${i} reads the pools`);
    });
    assert.ok(
      blocks.some((b) => b.liquidityChanges > 0),
      "some liquidity changes in 400 blocks",
    );
    assert.ok(
      blocks.some((b, i) => i % 8 !== 0 && !b.refresh),
      "other blocks go on the estimates",
    );
  });

  it("arbitrages a pool far from the market back towards it", () => {
    // WETH/USDC on V2 with 10 % more token1 than the market price: token0 is dear in the pool.
    const key = "v2:WETH/USDC";
    const planner = plannerAt(42, initialStates(deployment, { [key]: 1.1 }));
    const [block] = [planner.planBlock(start + 60, { randomTrades: 0 })];
    assert.ok(block);
    const arbs = block.trades.filter((t) => t.hops.length === 1 && t.hops[0]?.pool.key === key);
    assert.equal(arbs.length, 1, "one arbitrage trade on the pool");
    // Selling the dear side: token0 goes in.
    assert.equal(arbs[0]?.hops[0]?.zeroForOne, true);
    // Pools at the market price are left alone.
    assert.ok(
      block.trades.every((t) => t.hops[0]?.pool.key === key),
      "no other arbitrage",
    );
  });

  it("keeps live blocks within their 0-5 trades, arbitrage included", () => {
    const planner = plannerAt(42, initialStates(deployment, { "v2:WETH/USDC": 1.2, "v2:WETH/USDT": 0.8 }));
    for (let total = 0; total <= 5; total++) {
      const block = planner.planBlock(start + 60 * (total + 1), { totalTrades: total });
      assert.ok(block.trades.length <= total, `${block.trades.length} trades for a budget of ${total}`);
      planner.settle(block, { poolStates: undefined, results: [] }, []);
    }
  });

  it("removes V2 liquidity a block after reading the provider's balance", () => {
    const planner = plannerAt(5);
    const balance = 10n ** 18n;
    let removals = 0;
    for (let i = 0; i < 3000 && removals === 0; i++) {
      const block = planner.planBlock(start + 12 * 3600 + 300 * (i + 1), { randomTrades: 0 });
      const intent = block.intents.find((x) => x.protocol === "v2");
      const results = block.reads.map(() =>
        encodeFunctionResult({ abi: v2PairAbi, functionName: "balanceOf", result: balance }),
      );
      planner.settle(block, { poolStates: undefined, results }, []);
      if (intent?.protocol !== "v2") continue;
      const next = planner.planBlock(start + 12 * 3600 + 300 * (i + 1) + 1, { randomTrades: 0 });
      const removal = next.txs.find((tx) => tx.label.startsWith("V2 remove"));
      assert.ok(removal, "the removal follows the read");
      assert.equal(removal.from, intent.lp);
      assert.equal(removal.to, deployment.v2.router);
      const share = BigInt(Math.floor(intent.share * 1000));
      assert.ok(removal.label.includes(`${(balance * share) / 1000n} liquidity`), removal.label);
      assert.ok(next.liquidityChanges >= 1);
      // The pool is read again with the block after the removal (its estimate is off).
      planner.settle(next, { poolStates: undefined, results: [] }, []);
      const after = planner.planBlock(start + 12 * 3600 + 300 * (i + 1) + 2, { randomTrades: 0 });
      assert.ok(after.refresh && after.readDirty.includes(intent.pool.key));
      removals++;
    }
    assert.equal(removals, 1, "a V2 removal was planned");
  });
});

describe("history schedule", () => {
  it("dates blocks in order within the range, the same for the same random, busier by day", () => {
    const until = start + 7 * 86_400;
    const blocks = [...historySchedule(createRandom(1).fork("schedule"), start, until)];
    const again = [...historySchedule(createRandom(1).fork("schedule"), start, until)];
    assert.deepEqual(again, blocks);
    assert.ok(blocks.length > 500, `${blocks.length} blocks in a week`);
    blocks.forEach((b, i) => {
      assert.ok(b.time > (blocks[i - 1]?.time ?? start) && b.time <= until);
      assert.ok(b.randomTrades >= 1);
    });
    const hour = (t: number) => new Date(t * 1000).getUTCHours();
    const night = blocks.filter((b) => hour(b.time) < 6).length;
    const afternoon = blocks.filter((b) => hour(b.time) >= 12 && hour(b.time) < 18).length;
    assert.ok(night * 2 < afternoon, `night ${night}, afternoon ${afternoon}`);
    assert.ok(tradingActivity(start + 15 * 3600) > tradingActivity(start + 3 * 3600));
  });
});
