// Uniswap V4 on the devnet: v4-core's PoolManager and test routers from npm (see ../v4.ts). Every
// pool is a PoolId inside the manager (its state is read from the manager's storage); the
// deployer and the providers hold full-range positions through PoolModifyLiquidityTest, traders
// swap one pool at a time through PoolSwapTest, the native coin sent as the transaction's value.
import { type Address, encodeEventTopics, type Hex } from "viem";
import { v4KeyOf } from "../deploy.js";
import { planFullRangeChange } from "../liquidity-planning.js";
import { fullRangeTicks as fullRange, sqrtPriceX96FromPrice } from "../pool-math.js";
import {
  hookAddresses,
  nativeCurrency,
  poolIdOf,
  poolManagerEventsAbi,
  poolStateSlots,
  saltOf,
  v4DeployTxs,
  v4DonateTx,
  v4InitializeTx,
  v4ModifyLiquidityTx,
  v4RuntimeCode,
  v4SwapTx,
} from "../v4.js";
import { fullRangeDeposit, initialRawPrice, singleHop } from "./shared.js";
import { concentratedFromWords } from "./states.js";
import type { DevnetFamily } from "./types.js";

export const uniswapV4Devnet = {
  name: "v4" as const,
  ownStream: false,

  contractTxs: (plan) => ({
    beforeTokens: [],
    afterTokens: v4DeployTxs(plan.accounts.deployer, plan.v4.poolManager),
  }),
  // The hooks' code at addresses that carry their permissions (see ../v4.ts), before any pool names them.
  async prepareChain(rpc) {
    const hookCode = v4RuntimeCode("EmptyTestHooks");
    for (const hook of Object.values(hookAddresses)) await rpc.request("hardhat_setCode", [hook, hookCode]);
  },
  placePool(spec, token0, token1, contracts) {
    const hooks = spec.hooks === undefined ? nativeCurrency : hookAddresses[spec.hooks];
    const tickSpacing = spec.tickSpacing ?? null;
    const address = poolIdOf({
      currency0: token0,
      currency1: token1,
      fee: spec.fee,
      tickSpacing: tickSpacing ?? 0,
      hooks,
    }) as Address;
    return { address, tickSpacing, hooks, poolManager: contracts.v4.poolManager };
  },
  deployerPositions: () => [],
  deposits: (pool, spec, plan) => [fullRangeDeposit(pool, spec, plan)],
  creationTxs(deposit, plan) {
    const { pool } = deposit;
    const from = plan.accounts.deployer;
    const key = v4KeyOf(pool);
    return [
      v4InitializeTx({
        from,
        manager: plan.v4.poolManager,
        key,
        sqrtPriceX96: sqrtPriceX96FromPrice(initialRawPrice(pool, plan)),
      }),
      v4ModifyLiquidityTx({
        router: plan.v4.modifyLiquidityRouter,
        from,
        key,
        tickLower: deposit.ticks?.tickLower ?? 0,
        tickUpper: deposit.ticks?.tickUpper ?? 0,
        liquidityDelta: deposit.liquidity ?? 0n,
        salt: `0x${"0".repeat(64)}`,
        ...(pool.token0 === nativeCurrency ? { value: deposit.amount0 } : {}),
      }),
    ];
  },
  // V4's routers take the tokens of V4 pools only (fewer approvals to mine).
  spenders: (plan) => ({
    everyToken: [],
    ownTokens: [plan.v4.swapRouter, plan.v4.modifyLiquidityRouter, plan.v4.donateRouter],
  }),
  // A V4 pool is initialised when the PoolManager holds a price for its PoolId.
  deploymentCheck: (pool, plan) => ({
    slot: { address: plan.v4.poolManager, slot: poolStateSlots(pool.address).slot0 },
  }),
  providerApprovals: () => [],

  stateCalls(pool) {
    const manager = managerOf(pool);
    const slots = poolStateSlots(pool.address);
    return [
      { method: "eth_getStorageAt", params: [manager, slots.slot0, "latest"] },
      { method: "eth_getStorageAt", params: [manager, slots.liquidity, "latest"] },
    ];
  },
  decodeState: (_pool, next) => concentratedFromWords(next(), next()),

  swapTopic: encodeEventTopics({ abi: poolManagerEventsAbi, eventName: "Swap" })[0] as Hex,
  tradeTx(_periphery, trade, routers) {
    const { pool, ...swap } = singleHop(trade, "a V4 trade");
    return v4SwapTx({ router: routers.v4SwapRouter, key: v4KeyOf(pool), ...swap });
  },

  /**
   * A provider adds a full-range position (salted with its address), removes part of what it
   * added earlier, or (now and then) donates a little to the pool's providers.
   */
  planLiquidityChange(context, rng, planned, change) {
    const { estimates } = context;
    const { lp, pool } = change;
    const key = v4KeyOf(pool);
    const ticks = fullRange(pool.tickSpacing ?? 60);
    const modify = (liquidityDelta: bigint, value?: bigint) =>
      v4ModifyLiquidityTx({
        router: context.v4ModifyLiquidityRouter,
        from: lp,
        key,
        ...ticks,
        liquidityDelta,
        salt: saltOf(lp),
        ...(value === undefined ? {} : { value }),
      });
    planFullRangeChange(context, rng, planned, change, {
      positions: context.book.v4Positions,
      // The coin it takes (≤ L/√P), with room for the estimate being off; the router returns the rest.
      add: (liquidity, sqrtPrice) =>
        modify(
          liquidity,
          pool.token0 === nativeCurrency
            ? BigInt(Math.ceil((Number(liquidity) / sqrtPrice) * 1.2))
            : undefined,
        ),
      remove: (liquidity) => [modify(-liquidity)],
      donate(sqrtPrice, usd) {
        // Both sides at the pool's price.
        const amount1 = estimates.rawAmount(pool.token1Key, usd / 2);
        const amount0 = BigInt(Math.floor(Number(amount1) / sqrtPrice ** 2));
        return v4DonateTx({ router: context.v4DonateRouter, from: lp, key, amount0, amount1 });
      },
    });
  },
} satisfies DevnetFamily;

function managerOf(pool: { key: string; poolManager: Address | null }): Address {
  if (pool.poolManager === null) throw new Error(`V4 pool ${pool.key} names no PoolManager`);
  return pool.poolManager;
}
