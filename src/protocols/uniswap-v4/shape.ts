import type { Hex } from "../../decode/types.js";
import {
  addressTopic,
  addrWord,
  dataOf,
  hashWords,
  type ShapeGenerator,
  type ShapeLog,
  type ShapePool,
  type ShapePoolState,
  topicOf,
  transferLog,
  word,
} from "../shape.js";
import {
  fullRangeCanRemove,
  fullRangeChange,
  fullRangeDrift,
  fullRangeInitial,
  fullRangeSwap,
} from "../uniswap-v3/shape.js";
import { v4Topics } from "./abi.js";

const ZERO_WORD = word(0);

/** What differs between the managers of concentrated-liquidity pools (Uniswap V4, PancakeSwap Infinity CL). */
export type ManagedClOptions = {
  poolId: NonNullable<ShapeGenerator["poolId"]>;
  initialize(pool: ShapePool, s: ShapePoolState): ShapeLog;
  /** The Swap's topic0 and its fields after the tick (V4: the fee; Infinity CL: the fee and the protocol fee). */
  swapEvent(pool: ShapePool): { topic: Hex; extra: string[] };
  modifyLiquidityTopic: Hex;
};

/**
 * A concentrated-liquidity pool inside a manager: Initialize, then every event from the manager
 * naming the pool by its PoolId; ModifyLiquidity (liquidity delta, the amounts are the principal
 * at the current price), Swap with the swapper's balance deltas (V3's signs reversed); the tokens
 * move between the trader and the manager's holder (the manager, or its vault). One full-range
 * position per pool, salt zero, as the other synthetic pools hold.
 */
export function managedClShape(options: ManagedClOptions): ShapeGenerator {
  const modify = (pool: ShapePool, router: Hex, delta: bigint): ShapeLog => ({
    address: pool.factory,
    topics: [options.modifyLiquidityTopic, topicOf(pool.id.slice(2)), addressTopic(router)],
    data: dataOf(word(pool.tickLower), word(pool.tickUpper), word(delta), ZERO_WORD),
  });
  return {
    gas: { create: 350_000, swap: 130_000, liquidity: 200_000 },
    poolId: options.poolId,
    initial: fullRangeInitial,
    create(pool, s, { trader, router }) {
      return [
        options.initialize(pool, s),
        modify(pool, router, s.liquidity),
        transferLog(pool, 0, trader, pool.holder, s.r0),
        transferLog(pool, 1, trader, pool.holder, s.r1),
      ];
    },
    swap(pool, s, zeroForOne, amountIn, { trader, router }) {
      const result = fullRangeSwap(pool, s, zeroForOne, amountIn);
      const out = zeroForOne ? -result.amount1 : -result.amount0;
      const { topic, extra } = options.swapEvent(pool);
      return [
        {
          address: pool.factory,
          topics: [topic, topicOf(pool.id.slice(2)), addressTopic(router)],
          data: dataOf(
            word(-result.amount0),
            word(-result.amount1),
            word(result.sqrtPriceX96),
            word(s.liquidity),
            word(result.tick),
            ...extra,
          ),
        },
        transferLog(pool, zeroForOne ? 0 : 1, trader, pool.holder, amountIn),
        transferLog(pool, zeroForOne ? 1 : 0, pool.holder, trader, out),
      ];
    },
    liquidity(pool, s, ppm, remove, { trader, router }) {
      const { delta, amount0, amount1 } = fullRangeChange(pool, s, ppm, remove);
      const [from, to] = remove ? [pool.holder, trader] : [trader, pool.holder];
      return [
        modify(pool, router, delta),
        transferLog(pool, 0, from, to, amount0),
        transferLog(pool, 1, from, to, amount1),
      ];
    },
    drift: fullRangeDrift,
    canRemove: fullRangeCanRemove,
    // No contract of its own: the manager answers for it.
    call: () => null,
  };
}

/**
 * Uniswap V4 pools: PoolId = keccak256(abi.encode(currency0, currency1, fee, tickSpacing, hooks)),
 * the hook's permissions in its address; Swap logs the fee charged.
 */
export const uniswapV4Shape: ShapeGenerator = managedClShape({
  poolId: (key) =>
    hashWords(
      addrWord(key.token0),
      addrWord(key.token1),
      word(key.fee),
      word(key.spacing),
      addrWord(key.hooks),
    ),
  initialize: (pool, s) => ({
    address: pool.factory,
    topics: [
      v4Topics.v4Initialize,
      topicOf(pool.id.slice(2)),
      addressTopic(pool.token0),
      addressTopic(pool.token1),
    ],
    data: dataOf(
      word(pool.fee),
      word(pool.spacing),
      addrWord(pool.hooks),
      word(s.sqrtPriceX96),
      word(s.tick),
    ),
  }),
  swapEvent: (pool) => ({ topic: v4Topics.v4Swap, extra: [word(pool.fee)] }),
  modifyLiquidityTopic: v4Topics.v4ModifyLiquidity,
});
