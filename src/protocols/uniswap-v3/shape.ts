import type { Hex } from "../../decode/types.js";
import {
  addressTopic,
  addrWord,
  clSwapExactIn,
  dataOf,
  fullRangeTicks,
  isqrt,
  type ShapeActor,
  type ShapeGenerator,
  type ShapeLog,
  type ShapePool,
  type ShapePoolState,
  sqrtPriceOf,
  tickAtSqrtRatio,
  topicOf,
  transferLog,
  word,
} from "../shape.js";
import { liquidityAmounts } from "../tick-math.js";
import { v3Topics } from "./abi.js";

/**
 * A concentrated-liquidity pool holding one full-range position, sized to hold about r0/r1 at the
 * price r1/r0: its price, tick and liquidity, and what the position cost (rounded up, as a Mint's
 * amounts are).
 */
export function fullRangeInitial(r0: bigint, r1: bigint, spacing: number) {
  const { tickLower, tickUpper } = fullRangeTicks(spacing);
  const sqrtPriceX96 = sqrtPriceOf(r0, r1);
  const tick = tickAtSqrtRatio(sqrtPriceX96);
  const liquidity = isqrt(r0 * r1);
  const { amount0, amount1 } = liquidityAmounts(sqrtPriceX96, tick, tickLower, tickUpper, liquidity);
  return { state: { r0: amount0, r1: amount1, sqrtPriceX96, liquidity, tick }, tickLower, tickUpper };
}

/** A swap through the pool's one range: the state moves, the pool's signed amounts are returned. */
export function fullRangeSwap(pool: ShapePool, s: ShapePoolState, zeroForOne: boolean, amountIn: bigint) {
  const result = clSwapExactIn({
    sqrtPriceX96: s.sqrtPriceX96,
    liquidity: s.liquidity,
    fee: pool.fee,
    zeroForOne,
    amountIn,
  });
  s.r0 += result.amount0;
  s.r1 += result.amount1;
  s.sqrtPriceX96 = result.sqrtPriceX96;
  s.tick = result.tick;
  return result;
}

/** A change of `ppm` millionths of the position's liquidity: the state moves, the delta and amounts (positive) are returned. */
export function fullRangeChange(pool: ShapePool, s: ShapePoolState, ppm: bigint, remove: boolean) {
  const delta = ((s.liquidity * ppm) / 1_000_000n) * (remove ? -1n : 1n);
  const moved = liquidityAmounts(s.sqrtPriceX96, s.tick, pool.tickLower, pool.tickUpper, delta);
  s.liquidity += delta;
  s.r0 += moved.amount0;
  s.r1 += moved.amount1;
  const sign = remove ? -1n : 1n;
  return { delta, amount0: sign * moved.amount0, amount1: sign * moved.amount1 };
}

/** The mean-reversion measure and the removal rule of a concentrated-liquidity pool. */
export const fullRangeDrift = (s: ShapePoolState, initial: ShapePoolState) =>
  (Number(s.sqrtPriceX96) / Number(initial.sqrtPriceX96)) ** 2;
export const fullRangeCanRemove = (s: ShapePoolState, initial: ShapePoolState) =>
  s.liquidity * 2n > initial.liquidity;

const positionTopics = (pool: ShapePool, owner: Hex): Hex[] => [
  addressTopic(owner),
  topicOf(word(pool.tickLower)),
  topicOf(word(pool.tickUpper)),
];
const mintLog = (pool: ShapePool, owner: Hex, liquidity: bigint, a0: bigint, a1: bigint): ShapeLog => ({
  address: pool.id,
  topics: [v3Topics.v3Mint, ...positionTopics(pool, owner)],
  data: dataOf(addrWord(owner), word(liquidity), word(a0), word(a1)),
});

/** What differs between V3-shaped pool contracts: the factory's creation log, the Swap's extra fields, the views. */
export type ContractClOptions = {
  creation(pool: ShapePool): ShapeLog;
  /** The Swap's topic0 and its fields after V3's seven (PancakeSwap V3's protocol fees, Algebra Integral's fees). */
  swapEvent(pool: ShapePool, zeroForOne: boolean, amountIn: bigint): { topic: Hex; extra: string[] };
  call: ShapeGenerator["call"];
};

/**
 * A V3-shaped pool contract (Uniswap V3, PancakeSwap V3, Algebra): creation, Initialize,
 * Transfers and Mint; Swap with the pool's signed amounts, its price, liquidity and tick; Burn,
 * Transfers and Collect to remove liquidity. The contracts' own arithmetic applies exactly: the
 * pool never crosses an initialised tick.
 */
export function contractClShape(options: ContractClOptions): ShapeGenerator {
  return {
    gas: { create: 4_800_000, swap: 150_000, liquidity: 220_000 },
    initial: fullRangeInitial,
    create(pool, s, { trader, router }) {
      return [
        options.creation(pool),
        {
          address: pool.id,
          topics: [v3Topics.v3Initialize],
          data: dataOf(word(s.sqrtPriceX96), word(s.tick)),
        },
        transferLog(pool, 0, trader, pool.id, s.r0),
        transferLog(pool, 1, trader, pool.id, s.r1),
        mintLog(pool, router, s.liquidity, s.r0, s.r1),
      ];
    },
    swap(pool, s, zeroForOne, amountIn, { trader, router }: ShapeActor) {
      const result = fullRangeSwap(pool, s, zeroForOne, amountIn);
      const out = zeroForOne ? -result.amount1 : -result.amount0;
      const { topic, extra } = options.swapEvent(pool, zeroForOne, amountIn);
      return [
        transferLog(pool, zeroForOne ? 1 : 0, pool.id, trader, out),
        transferLog(pool, zeroForOne ? 0 : 1, trader, pool.id, amountIn),
        {
          address: pool.id,
          topics: [topic, addressTopic(router), addressTopic(trader)],
          data: dataOf(
            word(result.amount0),
            word(result.amount1),
            word(result.sqrtPriceX96),
            word(s.liquidity),
            word(result.tick),
            ...extra,
          ),
        },
      ];
    },
    liquidity(pool, s, ppm, remove, { trader, router }) {
      const { delta, amount0: a0, amount1: a1 } = fullRangeChange(pool, s, ppm, remove);
      if (!remove) {
        return [
          transferLog(pool, 0, trader, pool.id, a0),
          transferLog(pool, 1, trader, pool.id, a1),
          mintLog(pool, router, delta, a0, a1),
        ];
      }
      const position = positionTopics(pool, router);
      return [
        {
          address: pool.id,
          topics: [v3Topics.v3Burn, ...position],
          data: dataOf(word(-delta), word(a0), word(a1)),
        },
        transferLog(pool, 0, pool.id, trader, a0),
        transferLog(pool, 1, pool.id, trader, a1),
        {
          address: pool.id,
          topics: [v3Topics.v3Collect, ...position],
          data: dataOf(addrWord(trader), word(a0), word(a1)),
        },
      ];
    },
    drift: fullRangeDrift,
    canRemove: fullRangeCanRemove,
    call: options.call,
  };
}

/** liquidity() → uint128, of every V3-shaped pool. */
export const LIQUIDITY_SELECTOR = "0x1a686502";

/**
 * Uniswap V3 and PancakeSwap V3 pools: PoolCreated of the factory; PancakeSwap V3's Swap logs the
 * protocol's share of the fee (a third here) on the input side.
 */
export const uniswapV3Shape: ShapeGenerator = contractClShape({
  creation: (pool) => ({
    address: pool.factory,
    topics: [
      v3Topics.v3PoolCreated,
      addressTopic(pool.token0),
      addressTopic(pool.token1),
      topicOf(word(pool.fee)),
    ],
    data: dataOf(word(pool.spacing), addrWord(pool.id)),
  }),
  swapEvent(pool, zeroForOne, amountIn) {
    if (pool.layout !== "pancake") return { topic: v3Topics.v3Swap, extra: [] };
    const protocolFee = (amountIn * BigInt(pool.fee)) / 3_000_000n;
    return {
      topic: v3Topics.pancakeV3Swap,
      extra: [word(zeroForOne ? protocolFee : 0n), word(zeroForOne ? 0n : protocolFee)],
    };
  },
  call(selector, pool, s) {
    switch (selector) {
      case "0xddca3f43": // fee()
        return `0x${word(pool.fee)}`;
      case "0xd0c93a7c": // tickSpacing()
        return `0x${word(pool.spacing)}`;
      case "0x3850c7bd": // slot0()
        return `0x${word(s.sqrtPriceX96)}${word(s.tick)}${word(0)}${word(1)}${word(1)}${word(0)}${word(1)}`;
      case LIQUIDITY_SELECTOR:
        return `0x${word(s.liquidity)}`;
      default:
        return null;
    }
  },
});
