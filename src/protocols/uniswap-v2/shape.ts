import type { Hex } from "../../decode/types.js";
import {
  addressTopic,
  addrWord,
  dataOf,
  type ShapeGenerator,
  type ShapeLog,
  type ShapePool,
  type ShapePoolState,
  settleSwap,
  transferLog,
  word,
} from "../shape.js";
import { v2Topics } from "./abi.js";

/** UniswapV2Library.getAmountOut with the pool's fee in hundredths of a bip (3000 = 0.3 %). */
export function v2AmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint, fee: number): bigint {
  const withFee = amountIn * BigInt(1_000_000 - fee);
  return (withFee * reserveOut) / (reserveIn * 1_000_000n + withFee);
}

const sync = (pool: ShapePool, s: ShapePoolState): ShapeLog => ({
  address: pool.id,
  topics: [v2Topics.v2Sync],
  data: dataOf(word(s.r0), word(s.r1)),
});
const mint = (pool: ShapePool, router: Hex, a0: bigint, a1: bigint): ShapeLog => ({
  address: pool.id,
  topics: [v2Topics.v2Mint, addressTopic(router)],
  data: dataOf(word(a0), word(a1)),
});

/**
 * A Uniswap V2-style pair on the synthetic chain: `getAmountOut` with the DEX's fee, `Sync` with
 * the reserves after each Mint, Burn and Swap, the pair's Transfers in the order the pair makes them.
 */
export const uniswapV2Shape: ShapeGenerator = {
  gas: { create: 2_400_000, swap: 110_000, liquidity: 180_000 },
  initial: (r0, r1) => ({
    state: { r0, r1, sqrtPriceX96: 0n, liquidity: 0n, tick: 0 },
    tickLower: 0,
    tickUpper: 0,
  }),
  create(pool, s, { trader, router }) {
    return [
      {
        address: pool.factory,
        topics: [v2Topics.v2PairCreated, addressTopic(pool.token0), addressTopic(pool.token1)],
        data: dataOf(addrWord(pool.id), word(pool.index + 1)),
      },
      transferLog(pool, 0, trader, pool.id, s.r0),
      transferLog(pool, 1, trader, pool.id, s.r1),
      sync(pool, s),
      mint(pool, router, s.r0, s.r1),
    ];
  },
  swap(pool, s, zeroForOne, amountIn, { trader, router }) {
    const out = v2AmountOut(amountIn, zeroForOne ? s.r0 : s.r1, zeroForOne ? s.r1 : s.r0, pool.fee);
    settleSwap(s, zeroForOne, amountIn, out);
    return [
      transferLog(pool, zeroForOne ? 0 : 1, trader, pool.id, amountIn),
      transferLog(pool, zeroForOne ? 1 : 0, pool.id, trader, out),
      sync(pool, s),
      {
        address: pool.id,
        topics: [v2Topics.v2Swap, addressTopic(router), addressTopic(trader)],
        data: dataOf(
          word(zeroForOne ? amountIn : 0n),
          word(zeroForOne ? 0n : amountIn),
          word(zeroForOne ? 0n : out),
          word(zeroForOne ? out : 0n),
        ),
      },
    ];
  },
  liquidity(pool, s, ppm, remove, { trader, router }) {
    const a0 = (s.r0 * ppm) / 1_000_000n;
    if (!remove) {
      const a1 = (a0 * s.r1) / s.r0;
      s.r0 += a0;
      s.r1 += a1;
      return [
        transferLog(pool, 0, trader, pool.id, a0),
        transferLog(pool, 1, trader, pool.id, a1),
        sync(pool, s),
        mint(pool, router, a0, a1),
      ];
    }
    const a1 = (s.r1 * ppm) / 1_000_000n;
    s.r0 -= a0;
    s.r1 -= a1;
    return [
      transferLog(pool, 0, pool.id, trader, a0),
      transferLog(pool, 1, pool.id, trader, a1),
      sync(pool, s),
      {
        address: pool.id,
        topics: [v2Topics.v2Burn, addressTopic(router), addressTopic(trader)],
        data: dataOf(word(a0), word(a1)),
      },
    ];
  },
  drift: (s, initial) => Number(s.r1) / Number(s.r0) / (Number(initial.r1) / Number(initial.r0)),
  canRemove: (s, initial) => s.r0 * 2n > initial.r0,
  call(selector, _pool, s, timestamp) {
    // getReserves() → (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)
    return selector === "0x0902f1ac" ? `0x${word(s.r0)}${word(s.r1)}${word(timestamp % 2 ** 32)}` : null;
  },
};
