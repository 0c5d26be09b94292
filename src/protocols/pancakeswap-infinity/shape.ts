import type { Hex } from "../../decode/types.js";
import type { ShapeGenerator, ShapeLog, ShapePool, ShapePoolKey } from "../shape.js";
import {
  addressTopic,
  addrWord,
  dataOf,
  hashWords,
  SWAP_HOOK_FLAGS,
  settleSwap,
  topicOf,
  transferLog,
  word,
} from "../shape.js";
import { managedClShape } from "../uniswap-v4/shape.js";
import { infinityTopics } from "./abi.js";

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000" as Hex;
const CENTER_BIN = 1 << 23;
const Q128 = 1n << 128n;

/**
 * A pool's `parameters`: the tick spacing (CL) or bin step (Bin) at bits 16 and up, the hook's
 * permissions in the low 16 bits (beforeSwap and afterSwap when the pool has a hook).
 */
const parametersOf = (spacing: number, hooks: Hex): string =>
  word((BigInt(spacing) << 16n) | BigInt(hooks === ZERO_ADDRESS ? 0 : SWAP_HOOK_FLAGS));

/** PoolId = keccak256(abi.encode(currency0, currency1, hooks, poolManager, fee, parameters)). */
const infinityPoolId = (key: ShapePoolKey): Hex =>
  hashWords(
    addrWord(key.token0),
    addrWord(key.token1),
    addrWord(key.hooks),
    addrWord(key.manager),
    word(key.fee),
    parametersOf(key.spacing, key.hooks),
  );

const poolTopics = (topic: Hex, pool: ShapePool): Hex[] => [
  topic,
  topicOf(pool.id.slice(2)),
  addressTopic(pool.token0),
  addressTopic(pool.token1),
];

/** PancakeSwap Infinity CL pools: V4's model in the CLPoolManager, tokens in the Vault, the protocol fee in Swap. */
export const infinityClShape: ShapeGenerator = managedClShape({
  poolId: infinityPoolId,
  initialize: (pool, s) => ({
    address: pool.factory,
    topics: poolTopics(infinityTopics.clInitialize, pool),
    data: dataOf(
      addrWord(pool.hooks),
      word(pool.fee),
      parametersOf(pool.spacing, pool.hooks),
      word(s.sqrtPriceX96),
      word(s.tick),
    ),
  }),
  swapEvent: (pool) => ({ topic: infinityTopics.clSwap, extra: [word(pool.fee), word(0)] }),
  modifyLiquidityTopic: infinityTopics.clModifyLiquidity,
});

/** A bin's price (1 + binStep / 10,000)^(id − 2^23) as a 128.128 fixed-point number, by squaring. */
export function binPriceX128(id: number, binStep: number): bigint {
  const base = ((10_000n + BigInt(binStep)) << 128n) / 10_000n;
  let e = Math.abs(id - CENTER_BIN);
  let result = Q128;
  let square = base;
  while (e > 0) {
    if (e & 1) result = (result * square) >> 128n;
    square = (square * square) >> 128n;
    e >>>= 1;
  }
  return id >= CENTER_BIN ? result : (Q128 * Q128) / result;
}

/** The bin whose price is nearest to r1/r0 (raw units). */
function binOf(r0: bigint, r1: bigint, binStep: number): number {
  const id = CENTER_BIN + Math.round(Math.log(Number(r1) / Number(r0)) / Math.log(1 + binStep / 10_000));
  return Math.min(Math.max(id, 1), 2 * CENTER_BIN - 1);
}

/** Mint or Burn's arrays: the bins and their amounts, token0 in the low 128 bits, token1 in the high. */
function binArrays(id: number, a0: bigint, a1: bigint, head: number): { offsets: string[]; tail: string[] } {
  const ids = [word(1), word(id)];
  const amounts = [word(1), word(a0 | (a1 << 128n))];
  return { offsets: [word(head * 32), word((head + ids.length) * 32)], tail: [...ids, ...amounts] };
}

function binLiquidityLog(
  pool: ShapePool,
  router: Hex,
  id: number,
  a0: bigint,
  a1: bigint,
  mint: boolean,
): ShapeLog {
  // Mint(ids, salt, amounts, compositionFee, feeToProtocol); Burn(ids, salt, amounts).
  const head = mint ? 5 : 3;
  const { offsets, tail } = binArrays(id, a0, a1, head);
  const fields = [offsets[0] as string, word(0), offsets[1] as string, ...(mint ? [word(0), word(0)] : [])];
  return {
    address: pool.factory,
    topics: [
      mint ? infinityTopics.binMint : infinityTopics.binBurn,
      topicOf(pool.id.slice(2)),
      addressTopic(router),
    ],
    data: dataOf(...fields, ...tail),
  };
}

/**
 * PancakeSwap Infinity Bin pools: liquidity in the bin of the pool's price, which moves as the
 * balances do; a swap is priced at the active bin's price (128.128 fixed point), the fee taken from
 * the input; Swap logs the swapper's deltas and the bin active after it; Mint and Burn the bin's
 * packed amounts. The active bin is kept in the state's `tick`.
 */
export const infinityBinShape: ShapeGenerator = {
  gas: { create: 400_000, swap: 140_000, liquidity: 220_000 },
  poolId: infinityPoolId,
  initial: (r0, r1, binStep) => ({
    state: { r0, r1, sqrtPriceX96: 0n, liquidity: 0n, tick: binOf(r0, r1, binStep) },
    tickLower: 0,
    tickUpper: 0,
  }),
  create(pool, s, { trader, router }) {
    return [
      {
        address: pool.factory,
        topics: poolTopics(infinityTopics.binInitialize, pool),
        data: dataOf(
          addrWord(pool.hooks),
          word(pool.fee),
          parametersOf(pool.spacing, pool.hooks),
          word(s.tick),
        ),
      },
      binLiquidityLog(pool, router, s.tick, s.r0, s.r1, true),
      transferLog(pool, 0, trader, pool.holder, s.r0),
      transferLog(pool, 1, trader, pool.holder, s.r1),
    ];
  },
  swap(pool, s, zeroForOne, amountIn, { trader, router }) {
    const lessFee = (amountIn * BigInt(1_000_000 - pool.fee)) / 1_000_000n;
    const price = binPriceX128(s.tick, pool.spacing);
    const reserveOut = zeroForOne ? s.r1 : s.r0;
    const quoted = zeroForOne ? (lessFee * price) >> 128n : (lessFee << 128n) / price;
    const out = quoted < reserveOut / 2n ? quoted : reserveOut / 2n;
    settleSwap(s, zeroForOne, amountIn, out);
    s.tick = binOf(s.r0, s.r1, pool.spacing);
    return [
      {
        address: pool.factory,
        topics: [infinityTopics.binSwap, topicOf(pool.id.slice(2)), addressTopic(router)],
        data: dataOf(
          word(zeroForOne ? -amountIn : out),
          word(zeroForOne ? out : -amountIn),
          word(s.tick),
          word(pool.fee),
          word(0),
        ),
      },
      transferLog(pool, zeroForOne ? 0 : 1, trader, pool.holder, amountIn),
      transferLog(pool, zeroForOne ? 1 : 0, pool.holder, trader, out),
    ];
  },
  liquidity(pool, s, ppm, remove, { trader, router }) {
    const a0 = (s.r0 * ppm) / 1_000_000n;
    const a1 = (s.r1 * ppm) / 1_000_000n;
    const sign = remove ? -1n : 1n;
    s.r0 += sign * a0;
    s.r1 += sign * a1;
    const [from, to] = remove ? [pool.holder, trader] : [trader, pool.holder];
    return [
      binLiquidityLog(pool, router, s.tick, a0, a1, !remove),
      transferLog(pool, 0, from, to, a0),
      transferLog(pool, 1, from, to, a1),
    ];
  },
  drift: (s, initial) => Number(s.r1) / Number(s.r0) / (Number(initial.r1) / Number(initial.r0)),
  canRemove: (s, initial) => s.r0 * 2n > initial.r0,
  call: () => null,
};
