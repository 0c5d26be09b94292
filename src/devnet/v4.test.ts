import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, decodeEventLog, encodeEventTopics, type Hex, numberToHex } from "viem";
import { createSilentLogger } from "../internal/logger.js";
import { hookRewritesAmounts } from "../protocols/uniswap-v4/index.js";
import { type Deployment, deployMarket, v4KeyOf } from "./deploy.js";
import { poolSpecs } from "./market.js";
import { type DevnetNode, startHardhatNode } from "./node.js";
import { fullRangeTicks } from "./pool-math.js";
import { decodePoolStates, poolRawPrice, poolStateCalls } from "./pool-state.js";
import { createDevnetRpc, type DevnetRpc } from "./rpc.js";
import { createSimulator, type HistoryStats } from "./simulator.js";
import { executeTransactions, readNonces } from "./transactions.js";
import {
  hookAddresses,
  poolIdOf,
  poolManagerEventsAbi,
  saltOf,
  v4DonateTx,
  v4ModifyLiquidityTx,
} from "./v4.js";

const logger = createSilentLogger();

type Log = { address: Address; topics: [Hex, ...Hex[]]; data: Hex; transactionHash: Hex; blockNumber: Hex };

describe("Uniswap V4 on the devnet (v4-core's PoolManager and test routers from npm)", () => {
  let node: DevnetNode;
  let rpc: DevnetRpc;
  let deployment: Deployment;
  let stats: HistoryStats;
  let logs: Log[];
  const SIMULATOR_SEED = 3;

  before(async () => {
    // A fixed day (a Wednesday, mid-month) and seed: the history is then the same at every run,
    // whatever the calendar says. Liquidity changes are rare (a few a day over 26 pools), so the
    // seed is one whose two days hold V4 adds, removals and donations (42 and 1, 2 do not).
    const until = Math.floor(Date.parse("2026-03-04T12:00:00Z") / 1000);
    node = await startHardhatNode({
      port: 0,
      chainId: 31337,
      initialDate: new Date((until - 3 * 86_400) * 1000),
      logger,
    });
    rpc = createDevnetRpc(node.rpcUrl);
    deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: 42, logger });
    const simulator = createSimulator({ rpcUrl: node.rpcUrl, deployment, seed: SIMULATOR_SEED, logger });
    stats = await simulator.writeHistory({ days: 2, until: new Date(until * 1000) });
    await simulator.stop();
    // The pool events (the manager emits others: ownership, ERC-6909 transfers).
    const topics = poolManagerEventsAbi.map((event) => encodeEventTopics({ abi: [event] })[0]);
    logs = await rpc.request<Log[]>("eth_getLogs", [
      { fromBlock: "0x0", toBlock: "latest", address: deployment.v4.poolManager, topics: [topics] },
    ]);
  });
  after(() => node?.stop());

  const v4Pools = () => deployment.pools.filter((p) => p.protocol === "v4");
  const decoded = () =>
    logs.map((log) => ({ log, event: decodeEventLog({ abi: poolManagerEventsAbi, ...log }) }));

  it("deploys every V4 pool of the market, each a PoolId initialised in the PoolManager with liquidity", async () => {
    const specs = poolSpecs.filter((s) => s.protocol === "v4");
    assert.equal(v4Pools().length, specs.length);
    const code = await rpc.request<Hex>("eth_getCode", [deployment.v4.poolManager, "latest"]);
    assert.ok(code.length > 2, "the PoolManager has code");
    const states = decodePoolStates(v4Pools(), await rpc.batch<Hex>(poolStateCalls(v4Pools())));
    for (const pool of v4Pools()) {
      const state = states.get(pool.key);
      assert.ok(state?.protocol === "v3" && state.liquidity > 0n, `${pool.key} has active liquidity`);
      const initialize = decoded().find(
        (d) => d.event.eventName === "Initialize" && d.event.args.id === pool.address,
      );
      assert.ok(initialize, `${pool.key} has its Initialize`);
      assert.equal(
        poolIdOf({
          currency0: pool.token0,
          currency1: pool.token1,
          fee: pool.fee,
          tickSpacing: pool.tickSpacing ?? 0,
          hooks: pool.hooks ?? "0x0000000000000000000000000000000000000000",
        }),
        pool.address,
      );
    }
  });

  it("has a native-ETH pool, a FROG pool against ETH only, a hook without and one with return-delta permissions", () => {
    const native = v4Pools().filter((p) => p.token0 === "0x0000000000000000000000000000000000000000");
    assert.ok(native.length >= 2, "two pools against the native coin");
    const frogPools = deployment.pools.filter((p) => p.token0Key === "FROG" || p.token1Key === "FROG");
    assert.deepEqual(
      frogPools.map((p) => [p.protocol, p.token0]),
      [["v4", "0x0000000000000000000000000000000000000000"]],
    );
    const hooked = v4Pools().filter((p) => p.hooks !== "0x0000000000000000000000000000000000000000");
    assert.deepEqual(
      hooked.map((p) => [p.hooks, hookRewritesAmounts(p.hooks)]),
      [
        [hookAddresses.swap, false],
        [hookAddresses["return-delta"], true],
      ],
    );
    // The permission bits: beforeSwap (7) and afterSwap (6); beforeSwap and beforeSwapReturnDelta (3).
    assert.equal(Number.parseInt(hookAddresses.swap.slice(-4), 16) & 0x3fff, 0xc0);
    assert.equal(Number.parseInt(hookAddresses["return-delta"].slice(-4), 16) & 0x3fff, 0x88);
  });

  it("trades every V4 pool in the history, native ETH sent as value, with liquidity added, removed and donated", async () => {
    const first = stats.firstBlock;
    const inHistory = decoded().filter((d) => Number(d.log.blockNumber) >= first);
    for (const pool of v4Pools()) {
      const swaps = inHistory.filter((d) => d.event.eventName === "Swap" && d.event.args.id === pool.address);
      assert.ok(swaps.length > 0, `${pool.key} traded (${swaps.length} swaps)`);
    }
    const kinds = new Set(
      inHistory.map((d) =>
        d.event.eventName === "ModifyLiquidity"
          ? d.event.args.liquidityDelta > 0n
            ? "add"
            : "remove"
          : d.event.eventName,
      ),
    );
    assert.ok(
      kinds.has("add"),
      `liquidity added during the history (${[...kinds]}; ${stats.liquidityChanges} changes, ${decoded().filter((d) => d.event.eventName === "ModifyLiquidity").length} ModifyLiquidity logs in all, first ${stats.firstBlock})`,
    );
    // A swap paying native ETH in: the transaction carries the value the swap's amount0 took.
    const ethIn = inHistory.find(
      (d) => d.event.eventName === "Swap" && native(d.event.args.id) && d.event.args.amount0 < 0n,
    );
    assert.ok(ethIn && ethIn.event.eventName === "Swap", "a swap paid in native ETH");
    const tx = await rpc.request<{ value: Hex }>("eth_getTransactionByHash", [ethIn.log.transactionHash]);
    assert.equal(BigInt(tx.value), -ethIn.event.args.amount0);
  });

  it("keeps the V4 pools near the market price of their tokens", async () => {
    const tag = numberToHex(stats.lastBlock);
    const calls = poolStateCalls(v4Pools()).map((c) => ({
      ...c,
      params: [...(c.params ?? []).slice(0, -1), tag],
    }));
    const states = decodePoolStates(v4Pools(), await rpc.batch<Hex>(calls));
    for (const pool of v4Pools()) {
      const state = states.get(pool.key);
      assert.ok(state);
      const t0 = deployment.tokens[pool.token0Key];
      const t1 = deployment.tokens[pool.token1Key];
      const usd0 = poolRawPrice(state) * 10 ** (t0.unitDecimals - t1.unitDecimals) * t1.initialPriceUsd;
      // Prices drift over a simulated day (FROG's volatility is 9 % a day); a pool left behind would be far off.
      assert.ok(usd0 / t0.initialPriceUsd > 0.5 && usd0 / t0.initialPriceUsd < 2, `${pool.key}: ${usd0}`);
    }
  });

  it("removes and donates through the routers as the simulator plans them (native coin sent as value)", async () => {
    const pool = v4Pools().find((p) => p.key === "v4:ETH/USDC:3000");
    assert.ok(pool);
    const lp = deployment.accounts.liquidityProviders[0] as Address;
    const key = v4KeyOf(pool);
    const ticks = fullRangeTicks(pool.tickSpacing ?? 60);
    const router = deployment.v4.modifyLiquidityRouter;
    const liquidity = 10n ** 15n;
    const nonces = await readNonces(rpc, [lp]);
    const receipts = await executeTransactions(rpc, nonces, [
      v4ModifyLiquidityTx({
        router,
        from: lp,
        key,
        ...ticks,
        liquidityDelta: liquidity,
        salt: saltOf(lp),
        value: 10n ** 22n,
      }),
      v4ModifyLiquidityTx({
        router,
        from: lp,
        key,
        ...ticks,
        liquidityDelta: -liquidity / 2n,
        salt: saltOf(lp),
      }),
      v4DonateTx({
        router: deployment.v4.donateRouter,
        from: lp,
        key,
        amount0: 10n ** 16n,
        amount1: 30_000_000n,
      }),
    ]);
    const events = receipts.flatMap((r) =>
      r.logs
        .filter((log) => log.address === deployment.v4.poolManager && log.topics[1] === pool.address)
        .map((log) =>
          decodeEventLog({
            abi: poolManagerEventsAbi,
            data: log.data,
            topics: log.topics as [Hex, ...Hex[]],
          }),
        ),
    );
    assert.deepEqual(
      events.map((e) => [e.eventName, e.eventName === "ModifyLiquidity" ? e.args.liquidityDelta : null]),
      [
        ["ModifyLiquidity", liquidity],
        ["ModifyLiquidity", -liquidity / 2n],
        ["Donate", null],
      ],
    );
  });

  const native = (id: Hex) =>
    deployment.pools.some(
      (p) => p.address === id && p.token0 === "0x0000000000000000000000000000000000000000",
    );
});
