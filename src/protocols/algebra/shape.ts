import { addressTopic, addrWord, dataOf, type ShapeGenerator, word } from "../shape.js";
import { v3Topics } from "../uniswap-v3/abi.js";
import { contractClShape, LIQUIDITY_SELECTOR } from "../uniswap-v3/shape.js";
import { algebraTopics } from "./abi.js";

/**
 * Algebra pools (QuickSwap V3, THENA Fusion; Integral): the factory's `Pool`, then Uniswap V3's
 * pool events with the same types and topics (so that only the pool tells an Algebra swap from a
 * Uniswap V3 one); Integral 1.2's Swap adds its fees. Algebra V1 pools space their ticks by 60. The price is read with `globalState()`.
 */
export const algebraShape: ShapeGenerator = contractClShape({
  creation: (pool) => ({
    address: pool.factory,
    topics: [algebraTopics.algebraPool, addressTopic(pool.token0), addressTopic(pool.token1)],
    data: dataOf(addrWord(pool.id)),
  }),
  swapEvent: (pool) =>
    pool.layout === "integral"
      ? { topic: algebraTopics.integralSwap, extra: [word(0), word(0)] }
      : { topic: v3Topics.v3Swap, extra: [] },
  call(selector, pool, s) {
    switch (selector) {
      case "0xe76c01e4": // globalState() → (price, tick, fee, timepointIndex, communityFee0, communityFee1, unlocked)
        return `0x${word(s.sqrtPriceX96)}${word(s.tick)}${word(pool.fee)}${word(0)}${word(0)}${word(0)}${word(1)}`;
      case "0xd0c93a7c": // tickSpacing()
        return `0x${word(pool.spacing)}`;
      case LIQUIDITY_SELECTOR:
        return `0x${word(s.liquidity)}`;
      default:
        return null;
    }
  },
});
