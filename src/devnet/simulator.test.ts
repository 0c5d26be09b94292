import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, encodeEventTopics, type Hex } from "viem";
import { createSilentLogger } from "../internal/logger.js";
import { v2PairAbi, v3PoolAbi } from "./abis.js";
import { algebraPoolEventsAbi } from "./algebra.js";
import { type Deployment, deployMarket } from "./deploy.js";
import { type HardhatNode, startHardhatNode } from "./node.js";
import { decodePoolStates, poolRawPrice, poolStateCalls } from "./pool-state.js";
import { createDevnetRpc, type DevnetRpc } from "./rpc.js";
import { createSimulator, type HistoryStats, type Simulator } from "./simulator.js";
import { poolManagerEventsAbi } from "./v4.js";

const logger = createSilentLogger();
const v2Swap = encodeEventTopics({ abi: v2PairAbi, eventName: "Swap" })[0] as Hex;
const v3Swap = encodeEventTopics({ abi: v3PoolAbi, eventName: "Swap" })[0] as Hex;
const v4Swap = encodeEventTopics({ abi: poolManagerEventsAbi, eventName: "Swap" })[0] as Hex;
const algebraSwap = encodeEventTopics({ abi: algebraPoolEventsAbi, eventName: "Swap" })[0] as Hex;
const v2Mint = encodeEventTopics({ abi: v2PairAbi, eventName: "Mint" })[0] as Hex;
const v3Mint = encodeEventTopics({ abi: v3PoolAbi, eventName: "Mint" })[0] as Hex;

type Log = {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  transactionHash: Hex;
  logIndex: Hex;
};
type Market = {
  node: HardhatNode;
  rpc: DevnetRpc;
  deployment: Deployment;
  simulator: Simulator;
  stats: HistoryStats;
};

/** A node dated `days` before `until` with the market deployed and `days` of history written. */
async function marketWithHistory(until: Date, days: number): Promise<Market> {
  const node = await startHardhatNode({
    port: 0,
    chainId: 31337,
    initialDate: new Date(until.getTime() - days * 86_400_000),
    logger,
  });
  try {
    const deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: 42, logger });
    const simulator = createSimulator({ rpcUrl: node.rpcUrl, deployment, seed: 42, logger });
    const stats = await simulator.writeHistory({ days, until });
    return { node, rpc: createDevnetRpc(node.rpcUrl), deployment, simulator, stats };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

const swapLogs = (market: Market) =>
  market.rpc.request<Log[]>("eth_getLogs", [
    {
      fromBlock: `0x${market.stats.firstBlock.toString(16)}`,
      toBlock: `0x${market.stats.lastBlock.toString(16)}`,
      topics: [[v2Swap, v3Swap, v4Swap, algebraSwap]],
    },
  ]);

describe("market simulator", () => {
  const until = new Date();
  const days = 1;
  let a: Market | undefined;
  let b: Market | undefined;

  before(async () => {
    // Two markets with the same seed and range, side by side (one per core).
    const [first, second] = await Promise.allSettled([
      marketWithHistory(until, days),
      marketWithHistory(until, days),
    ]);
    a = first.status === "fulfilled" ? first.value : undefined;
    b = second.status === "fulfilled" ? second.value : undefined;
    if (first.status === "rejected") throw first.reason;
    if (second.status === "rejected") throw second.reason;
  });
  after(async () => {
    await a?.simulator.stop();
    await Promise.all([a?.node.stop(), b?.node.stop()]);
  });

  it("writes a day of swaps on both protocols, none reverted, timestamps rising within the range", async () => {
    assert.ok(a);
    const { stats } = a;
    assert.ok(stats.swaps > 300, `${stats.swaps} swaps in a day`);
    assert.equal(stats.swaps, stats.expectedSwaps, "every trade went through");
    const logs = await swapLogs(a);
    assert.equal(logs.length, stats.swaps);
    assert.ok(
      logs.some((l) => l.topics[0] === v2Swap) && logs.some((l) => l.topics[0] === v3Swap),
      "V2 and V3",
    );
    const pools = new Set(logs.map((l) => l.address));
    assert.ok(pools.size >= 15, `${pools.size} pools traded`);

    const blocks = await a.rpc.batch<{
      number: Hex;
      timestamp: Hex;
      transactions: { from: Address; to: Address; hash: Hex }[];
    }>(
      Array.from({ length: stats.lastBlock - stats.firstBlock + 1 }, (_, i) => ({
        method: "eth_getBlockByNumber",
        params: [`0x${(stats.firstBlock + i).toString(16)}`, true],
      })),
    );
    const times = blocks.map((block) => Number(block.timestamp));
    times.forEach((time, i) => {
      if (i > 0)
        assert.ok(time > (times[i - 1] ?? 0), `block ${stats.firstBlock + i} is later than the one before`);
    });
    const from = until.getTime() / 1000 - days * 86_400;
    assert.ok(
      (times[0] ?? 0) >= from - 5 && (times.at(-1) ?? 0) <= until.getTime() / 1000,
      "within the range",
    );

    const txs = blocks.flatMap((block) => block.transactions);
    const routers = new Set([
      a.deployment.v2.router,
      a.deployment.v3.swapRouter,
      a.deployment.v3.positionManager,
      a.deployment.v4.swapRouter,
      a.deployment.v4.modifyLiquidityRouter,
      a.deployment.v4.donateRouter,
      a.deployment.algebra.callee,
      // An Algebra position's owner burns and collects on the pool itself.
      ...a.deployment.pools.filter((p) => p.protocol === "algebra").map((p) => p.address),
    ]);
    assert.ok(
      txs.every((tx) => routers.has(tx.to)),
      "every transaction goes through the periphery",
    );
    const wallets = new Set(txs.map((tx) => tx.from));
    assert.ok(wallets.size >= 20, `${wallets.size} wallets`);
    const swapsPerTx = new Map<Hex, number>();
    for (const log of logs)
      swapsPerTx.set(log.transactionHash, (swapsPerTx.get(log.transactionHash) ?? 0) + 1);
    assert.ok(
      [...swapsPerTx.values()].some((n) => n >= 2),
      "some trades are multi-hop",
    );
  });

  it("trades less at night (UTC) than in the afternoon", async () => {
    assert.ok(a);
    const logs = await swapLogs(a);
    const numbers = [...new Set(logs.map((l) => l.blockNumber))];
    const blocks = await a.rpc.batch<{ number: Hex; timestamp: Hex }>(
      numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [n, false] })),
    );
    const hourOf = new Map(
      blocks.map((block) => [block.number, new Date(Number(block.timestamp) * 1000).getUTCHours()]),
    );
    const night = logs.filter((l) => (hourOf.get(l.blockNumber) ?? 0) < 6).length;
    const afternoon = logs.filter((l) => {
      const hour = hourOf.get(l.blockNumber) ?? 0;
      return hour >= 12 && hour < 18;
    }).length;
    assert.ok(night * 2 < afternoon, `night ${night}, afternoon ${afternoon}`);
  });

  it("adds and removes liquidity now and then", async () => {
    assert.ok(a);
    assert.ok(a.stats.liquidityChanges > 0, `${a.stats.liquidityChanges} liquidity changes`);
    const mints = await a.rpc.request<Log[]>("eth_getLogs", [
      { fromBlock: `0x${a.stats.firstBlock.toString(16)}`, toBlock: "latest", topics: [[v2Mint, v3Mint]] },
    ]);
    assert.ok(mints.length > 0, "liquidity added during the history");
  });

  it("keeps the pools of a token near one market price", async () => {
    assert.ok(a);
    const { deployment, stats, rpc } = a;
    const keys = [
      "v3:WETH/USDC:500",
      "v3:WETH/USDC:3000",
      "v3:WETH/USDT:500",
      "v2:WETH/USDC",
      "v2:WETH/USDT",
      "v2:WETH/DAI",
    ];
    /** The spread (highest / lowest) of the USD price of WETH over its stablecoin pools at `block`. */
    const spreadAt = async (block: number) => {
      const tag = `0x${block.toString(16)}`;
      const calls = poolStateCalls(deployment.pools).map((c) => ({
        ...c,
        params: [...(c.params ?? []).slice(0, -1), tag],
      }));
      const states = decodePoolStates(deployment.pools, await rpc.batch<Hex>(calls));
      const prices = keys.map((key) => {
        const pool = deployment.pools.find((p) => p.key === key);
        const state = states.get(key);
        assert.ok(pool && state);
        const t0 = deployment.tokens[pool.token0Key];
        const t1 = deployment.tokens[pool.token1Key];
        const price0In1 = poolRawPrice(state) * 10 ** (t0.unitDecimals - t1.unitDecimals);
        return pool.token0Key === "WETH" ? price0In1 : 1 / price0In1;
      });
      assert.ok(
        Math.min(...prices) > 1500 && Math.max(...prices) < 6000,
        `ETH stays near $3,000 at ${block}`,
      );
      return Math.max(...prices) / Math.min(...prices);
    };
    // Sampled over the day, the end included. Each block's random trades (up to 3 % of a pool's
    // liquidity, a few a whale's) can move a pool several percent until the next block's
    // arbitrage: at one instant the spread may be wide, over the day it must stay narrow.
    const samples = 25;
    const spreads: number[] = [];
    for (let i = 1; i <= samples; i++) {
      const block = stats.firstBlock + Math.round(((stats.lastBlock - stats.firstBlock) * i) / samples);
      spreads.push(await spreadAt(block));
    }
    spreads.sort((x, y) => x - y);
    const median = spreads[Math.floor(samples / 2)] as number;
    const widest = spreads.at(-1) as number;
    assert.ok(
      median < 1.03,
      `median spread ${median.toFixed(4)} (${spreads.map((x) => x.toFixed(3)).join(" ")})`,
    );
    assert.ok(widest < 1.15, `widest spread ${widest.toFixed(4)}: no pool left far from the market`);
  });

  it("writes the same history for the same seed and range", async () => {
    assert.ok(a && b);
    assert.deepEqual(b.stats.swaps, a.stats.swaps);
    const [logsA, logsB] = await Promise.all([swapLogs(a), swapLogs(b)]);
    assert.deepEqual(
      logsB.map((l) => [l.blockNumber, l.address, l.data]),
      logsA.map((l) => [l.blockNumber, l.address, l.data]),
    );
  });

  it("refuses a history that would start before the chain's head", async () => {
    assert.ok(a);
    await assert.rejects(
      a.simulator.writeHistory({ days: 1, until }),
      /date the node's genesis at or before it/,
    );
    assert.equal(await a.rpc.request("hardhat_getAutomine"), true, "automining is back on");
  });

  it("trades live at wall-clock time until stopped, then automines again", async () => {
    assert.ok(a);
    const startBlock = Number(await a.rpc.request<Hex>("eth_blockNumber"));
    const startedAt = Math.floor(Date.now() / 1000);
    a.simulator.startLive({ blockIntervalMs: 150 });
    const deadline = Date.now() + 15_000;
    while (Number(await a.rpc.request<Hex>("eth_blockNumber")) < startBlock + 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await a.simulator.stop();
    const head = Number(await a.rpc.request<Hex>("eth_blockNumber"));
    assert.ok(head >= startBlock + 3, `${head - startBlock} live blocks`);
    const block = await a.rpc.request<{ timestamp: Hex; transactions: unknown[] }>("eth_getBlockByNumber", [
      "latest",
      false,
    ]);
    const now = Math.floor(Date.now() / 1000);
    assert.ok(
      Number(block.timestamp) >= startedAt - 1 && Number(block.timestamp) <= now + 1,
      "dated by the wall clock",
    );
    assert.ok(block.transactions.length <= 5, "0 to 5 trades a block");
    assert.equal(await a.rpc.request("hardhat_getAutomine"), true);
    const after = Number(await a.rpc.request<Hex>("eth_blockNumber"));
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(Number(await a.rpc.request<Hex>("eth_blockNumber")), after, "no block after stop()");
  });
});
