import { encodeBalanceOf } from "../../decode/erc20.js";
import type { Hex, PoolCreation, RawLog } from "../../decode/types.js";
import { wordCount } from "../../decode/words.js";
import { argsDecoder } from "../event-decoder.js";
import { creationAt } from "../shared.js";
import type { LogLike, ProtocolFamily } from "../types.js";
import { v3Topics } from "../uniswap-v3/abi.js";
import { decodeV3Log, uniswapV3, type V3Event } from "../uniswap-v3/index.js";
import { algebraSignatures, algebraTopics } from "./abi.js";
import { algebraShape } from "./shape.js";

const poolEvent = argsDecoder(algebraSignatures.algebraPool);

/** Decodes an Algebra factory's Pool event; null for another log or a malformed one. */
export function decodeAlgebraCreation(log: RawLog): PoolCreation | null {
  const created = poolEvent(log);
  // The fee is the pool's own and changes by event (dynamic fee); the spacing is the pool's.
  return created && creationAt(log, { ...created, fee: null, tickSpacing: null });
}

const integralSwap = argsDecoder(algebraSignatures.integralSwap);

/**
 * An Algebra Integral 1.2 Swap: V3's fields then `overrideFee` and `pluginFee`, as a `v3-swap`
 * (the fees are not part of the pool's state).
 */
export function decodeIntegralSwap(log: LogLike): V3Event | null {
  const swap = integralSwap(log);
  if (!swap) return null;
  const { price, overrideFee: _, pluginFee: __, ...fields } = swap;
  return {
    type: "v3-swap",
    ...fields,
    sqrtPriceX96: price,
    protocolFeesToken0: null,
    protocolFeesToken1: null,
  };
}

/**
 * An Algebra Integral 1.2 Burn: V3's fields then the plugin's fee on the amounts, as a `v3-burn`
 * (the amounts are what the position is credited, the fee already taken; the tokens leave the
 * pool with Collect, as in V3).
 */
export function decodeIntegralBurn(log: LogLike): V3Event | null {
  const { topics: t, data } = log;
  if (t[0] !== algebraTopics.integralBurn || t.length !== 4 || wordCount(data) !== 4) return null;
  // V1's Burn, then the plugin's fee word.
  return decodeV3Log(
    { topics: [v3Topics.v3Burn, ...t.slice(1)], data: data.slice(0, 2 + 3 * 64) as Hex },
    "uniswap",
  );
}

/** globalState() → (uint160 price, int24 tick, …): Algebra's slot0. */
const GLOBAL_STATE = "0xe76c01e4" as Hex;
/** liquidity() → uint128 */
const LIQUIDITY = "0x1a686502" as Hex;

/**
 * Algebra pools (V1: QuickSwap V3 on Polygon, THENA Fusion on BNB Chain; Integral). Their pools
 * are concentrated-liquidity pools with Uniswap V3's events (same types, so the same topics: a
 * log is an Algebra swap because its pool is an Algebra pool, not by its topic) and state; the
 * factory announces a pool with `Pool`, the pool's price is read with `globalState()`, and
 * Integral 1.2's Swap and Burn (layout "integral") carry the swap's and the plugin's fees; the
 * "integral" layout reads V3-typed Swap and Burn too (Integral 1.0/1.1, and 1.2.9 on, whose fees
 * are separate events).
 */
export const algebra: ProtocolFamily<V3Event> = {
  ...uniswapV3,
  name: "algebra",
  variants: [
    { id: "algebra", layout: "uniswap", dexName: "Algebra" },
    { id: "algebra-integral", layout: "integral", dexName: "Algebra Integral" },
  ],
  creationTopic: algebraTopics.algebraPool,
  decodeCreation: decodeAlgebraCreation,
  poolTopics(layout) {
    const v3 = uniswapV3.poolTopics("uniswap");
    return layout === "integral" ? [...v3, algebraTopics.integralSwap, algebraTopics.integralBurn] : v3;
  },
  swapTopics: [v3Topics.v3Swap, algebraTopics.integralSwap],
  decodeLog(log, layout) {
    if (layout === "integral" && log.topics[0] === algebraTopics.integralSwap) return decodeIntegralSwap(log);
    if (layout === "integral" && log.topics[0] === algebraTopics.integralBurn) return decodeIntegralBurn(log);
    return decodeV3Log(log, "uniswap");
  },
  baseStateCalls: (pool) => [
    { to: pool.token0, data: encodeBalanceOf(pool.address) },
    { to: pool.token1, data: encodeBalanceOf(pool.address) },
    { to: pool.address, data: GLOBAL_STATE },
    { to: pool.address, data: LIQUIDITY },
  ],
  shape: algebraShape,
};
