// Algebra Integral on the devnet: the package's factory, pool deployer and TestAlgebraCallee from
// npm (see ../algebra.ts). One pool per token pair; the deployer and the providers hold full-range
// positions minted through the callee (burnt and collected on the pool, as its owner); traders
// swap one pool at a time through the callee.
import { encodeEventTopics, encodeFunctionData, type Hex } from "viem";
import {
  algebraCreatePoolTxs,
  algebraDeployTxs,
  algebraFactoryAbi,
  algebraMintTx,
  algebraPoolAddress,
  algebraPoolEventsAbi,
  algebraRemoveLiquidityTxs,
  algebraStorage,
  algebraSwapTx,
} from "../algebra.js";
import { planFullRangeChange } from "../liquidity-planning.js";
import { fullRangeTicks as fullRange, sqrtPriceX96FromPrice } from "../pool-math.js";
import { fullRangeDeposit, initialRawPrice, singleHop } from "./shared.js";
import { concentratedFromWords } from "./states.js";
import type { DevnetFamily } from "./types.js";

export const algebraDevnet = {
  name: "algebra" as const,
  // Its own random stream: every other pool's history is the same with or without its pools.
  ownStream: true,

  contractTxs: (plan) => ({
    beforeTokens: [],
    afterTokens: algebraDeployTxs(plan.accounts.deployer, plan.algebra),
  }),
  placePool: (spec, token0, token1, contracts) => ({
    address: algebraPoolAddress(contracts.algebra.poolDeployer, token0, token1),
    tickSpacing: spec.tickSpacing ?? null,
    hooks: null,
    poolManager: null,
  }),
  deployerPositions: () => [],
  deposits: (pool, spec, plan) => [fullRangeDeposit(pool, spec, plan)],
  creationTxs(deposit, plan) {
    const { pool } = deposit;
    const from = plan.accounts.deployer;
    return [
      ...algebraCreatePoolTxs({
        from,
        factory: plan.algebra.factory,
        pool: pool.address,
        token0: pool.token0,
        token1: pool.token1,
        sqrtPriceX96: sqrtPriceX96FromPrice(initialRawPrice(pool, plan)),
      }),
      algebraMintTx({
        callee: plan.algebra.callee,
        from,
        pool: pool.address,
        tickLower: deposit.ticks?.tickLower ?? 0,
        tickUpper: deposit.ticks?.tickUpper ?? 0,
        liquidity: deposit.liquidity ?? 0n,
      }),
    ];
  },
  // The callee takes the tokens of Algebra pools only.
  spenders: (plan) => ({ everyToken: [], ownTokens: [plan.algebra.callee] }),
  deploymentCheck: (pool, plan) => ({
    lookup: {
      to: plan.algebra.factory,
      data: encodeFunctionData({
        abi: algebraFactoryAbi,
        functionName: "poolByPair",
        args: [pool.token0, pool.token1],
      }),
    },
  }),
  providerApprovals: () => [],

  stateCalls: (pool) => [
    { method: "eth_getStorageAt", params: [pool.address, algebraStorage.globalStateSlot, "latest"] },
    { method: "eth_getStorageAt", params: [pool.address, algebraStorage.liquiditySlot, "latest"] },
  ],
  decodeState: (_pool, next) => concentratedFromWords(next(), next(), algebraStorage.liquidityShift),

  swapTopic: encodeEventTopics({ abi: algebraPoolEventsAbi, eventName: "Swap" })[0] as Hex,
  tradeTx(_periphery, trade, routers) {
    const { pool, ...swap } = singleHop(trade, "an Algebra trade");
    return algebraSwapTx({ callee: routers.algebraCallee, pool: pool.address, ...swap });
  },

  /**
   * A provider mints a full-range position of its own (through the callee), or burns part of what
   * it minted earlier and collects it (on the pool, as its owner).
   */
  planLiquidityChange(context, rng, planned, change) {
    const { lp, pool } = change;
    const ticks = fullRange(pool.tickSpacing ?? 60);
    planFullRangeChange(context, rng, planned, change, {
      positions: context.book.algebraPositions,
      add: (liquidity) =>
        algebraMintTx({ callee: context.algebraCallee, from: lp, pool: pool.address, ...ticks, liquidity }),
      remove: (liquidity) => algebraRemoveLiquidityTxs({ from: lp, pool: pool.address, ...ticks, liquidity }),
    });
  },
} satisfies DevnetFamily;
