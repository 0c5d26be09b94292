import { encodeBalanceOf } from "../../decode/erc20.js";
import { priceFromSqrtPriceX96 } from "../../decode/price.js";
import type { Hex, PoolCreation, RawLog, SwapEventLayout } from "../../decode/types.js";
import { addressAt, intAt, topicAddress, topicInt, uintAt, wordCount } from "../../decode/words.js";
import {
  addKnown,
  answerWord,
  balanceDepth,
  signedTrade,
  sqrtPriceSpot,
  stateAfter,
  stateAt,
} from "../shared.js";
import type { EventRecord, LogLike, ProtocolFamily } from "../types.js";
import { v3Topics } from "./abi.js";
import { uniswapV3Shape } from "./shape.js";

/** A decoded event of a Uniswap V3-style pool; amounts are raw integers. */
export type V3Event =
  | { type: "v3-initialize"; sqrtPriceX96: bigint; tick: number }
  | {
      type: "v3-swap";
      sender: Hex;
      recipient: Hex;
      /** Signed, the pool's view: positive = paid into the pool. */
      amount0: bigint;
      amount1: bigint;
      sqrtPriceX96: bigint;
      liquidity: bigint;
      tick: number;
      /** PancakeSwap V3 only. */
      protocolFeesToken0: bigint | null;
      protocolFeesToken1: bigint | null;
    }
  | {
      type: "v3-mint";
      sender: Hex;
      owner: Hex;
      tickLower: number;
      tickUpper: number;
      amount: bigint;
      amount0: bigint;
      amount1: bigint;
    }
  | {
      type: "v3-burn";
      owner: Hex;
      tickLower: number;
      tickUpper: number;
      amount: bigint;
      amount0: bigint;
      amount1: bigint;
    }
  | {
      type: "v3-collect";
      owner: Hex;
      recipient: Hex;
      tickLower: number;
      tickUpper: number;
      amount0: bigint;
      amount1: bigint;
    }
  | { type: "v3-collect-protocol"; sender: Hex; recipient: Hex; amount0: bigint; amount1: bigint }
  | {
      type: "v3-flash";
      sender: Hex;
      recipient: Hex;
      amount0: bigint;
      amount1: bigint;
      paid0: bigint;
      paid1: bigint;
    };

const selectors = {
  /** slot0() → (uint160 sqrtPriceX96, int24 tick, …); PancakeSwap V3 starts the same way. */
  slot0: "0x3850c7bd" as Hex,
  /** liquidity() → uint128 */
  liquidity: "0x1a686502" as Hex,
};

const swapTopicOf = (layout: SwapEventLayout) =>
  layout === "pancake" ? v3Topics.pancakeV3Swap : v3Topics.v3Swap;

/**
 * Decodes a Uniswap V3 pool's Initialize, Swap, Mint, Burn, Collect, CollectProtocol or Flash.
 * `layout` picks the Swap layout: Uniswap's 7 fields or PancakeSwap V3's 9 fields.
 */
export function decodeV3Log(log: LogLike, layout: SwapEventLayout): V3Event | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  switch (t[0]) {
    case swapTopicOf(layout): {
      const pancake = layout === "pancake";
      if (t.length !== 3 || words !== (pancake ? 7 : 5)) return null;
      return {
        type: "v3-swap",
        sender: topicAddress(t[1] as string),
        recipient: topicAddress(t[2] as string),
        amount0: intAt(data, 0),
        amount1: intAt(data, 1),
        sqrtPriceX96: uintAt(data, 2),
        liquidity: uintAt(data, 3),
        tick: Number(intAt(data, 4)),
        protocolFeesToken0: pancake ? uintAt(data, 5) : null,
        protocolFeesToken1: pancake ? uintAt(data, 6) : null,
      };
    }
    case v3Topics.v3Initialize:
      if (t.length !== 1 || words !== 2) return null;
      return { type: "v3-initialize", sqrtPriceX96: uintAt(data, 0), tick: Number(intAt(data, 1)) };
    case v3Topics.v3Mint:
      if (t.length !== 4 || words !== 4) return null;
      return {
        type: "v3-mint",
        sender: addressAt(data, 0),
        owner: topicAddress(t[1] as string),
        tickLower: Number(topicInt(t[2] as string)),
        tickUpper: Number(topicInt(t[3] as string)),
        amount: uintAt(data, 1),
        amount0: uintAt(data, 2),
        amount1: uintAt(data, 3),
      };
    case v3Topics.v3Burn:
      if (t.length !== 4 || words !== 3) return null;
      return {
        type: "v3-burn",
        owner: topicAddress(t[1] as string),
        tickLower: Number(topicInt(t[2] as string)),
        tickUpper: Number(topicInt(t[3] as string)),
        amount: uintAt(data, 0),
        amount0: uintAt(data, 1),
        amount1: uintAt(data, 2),
      };
    case v3Topics.v3Collect:
      if (t.length !== 4 || words !== 3) return null;
      return {
        type: "v3-collect",
        owner: topicAddress(t[1] as string),
        recipient: addressAt(data, 0),
        tickLower: Number(topicInt(t[2] as string)),
        tickUpper: Number(topicInt(t[3] as string)),
        amount0: uintAt(data, 1),
        amount1: uintAt(data, 2),
      };
    case v3Topics.v3CollectProtocol:
      if (t.length !== 3 || words !== 2) return null;
      return {
        type: "v3-collect-protocol",
        sender: topicAddress(t[1] as string),
        recipient: topicAddress(t[2] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    case v3Topics.v3Flash:
      if (t.length !== 3 || words !== 4) return null;
      return {
        type: "v3-flash",
        sender: topicAddress(t[1] as string),
        recipient: topicAddress(t[2] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
        paid0: uintAt(data, 2),
        paid1: uintAt(data, 3),
      };
    default:
      return null;
  }
}

/** Decodes a factory's PoolCreated; null for another log or a malformed one. */
export function decodeV3Creation(log: RawLog): PoolCreation | null {
  const { topics: t, data } = log;
  if (t[0] !== v3Topics.v3PoolCreated || t.length !== 4 || wordCount(data) !== 2) return null;
  return {
    factory: log.address,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    token0: topicAddress(t[1] as string),
    token1: topicAddress(t[2] as string),
    fee: Number(topicInt(t[3] as string)),
    tickSpacing: Number(intAt(data, 0)),
    pool: addressAt(data, 1),
  };
}

/**
 * Uniswap V3-style pools (Uniswap V3, and PancakeSwap V3 with its own Swap layout): balances
 * move with Mint (+), Collect and CollectProtocol (−), Flash (+ fees paid) and Swap (± signed
 * amounts); they stay null when the base balances are unknown. Active liquidity moves with
 * Mint/Burn whose range holds the current tick, and is set by each Swap.
 */
export const uniswapV3: ProtocolFamily<V3Event> = {
  name: "v3",
  variants: [
    { id: "uniswap-v3", layout: "uniswap", dexName: "Uniswap V3" },
    { id: "pancakeswap-v3", layout: "pancake", dexName: "PancakeSwap V3" },
  ],
  creationTopic: v3Topics.v3PoolCreated,
  poolsInFactory: false,
  rewritesAmounts: () => false,
  decodeCreation: decodeV3Creation,
  poolTopics: (layout) => [
    v3Topics.v3Initialize,
    swapTopicOf(layout),
    v3Topics.v3Mint,
    v3Topics.v3Burn,
    v3Topics.v3Collect,
    v3Topics.v3CollectProtocol,
    v3Topics.v3Flash,
  ],
  swapTopics: [v3Topics.v3Swap, v3Topics.pancakeV3Swap],
  decodeLog: decodeV3Log,

  createdState: (block) => stateAt(block, { reserve0: 0n, reserve1: 0n, liquidity: 0n }),

  nextState(before, event, log) {
    const s = stateAfter(before, log);
    const inRange = (lower: number, upper: number) => s.tick !== null && lower <= s.tick && s.tick < upper;
    switch (event.type) {
      case "v3-initialize":
        s.sqrtPriceX96 = event.sqrtPriceX96;
        s.tick = event.tick;
        break;
      case "v3-swap":
        s.reserve0 = addKnown(s.reserve0, event.amount0);
        s.reserve1 = addKnown(s.reserve1, event.amount1);
        s.sqrtPriceX96 = event.sqrtPriceX96;
        s.liquidity = event.liquidity;
        s.tick = event.tick;
        break;
      case "v3-mint":
        s.reserve0 = addKnown(s.reserve0, event.amount0);
        s.reserve1 = addKnown(s.reserve1, event.amount1);
        if (s.tick === null) s.liquidity = null;
        else if (inRange(event.tickLower, event.tickUpper)) s.liquidity = addKnown(s.liquidity, event.amount);
        break;
      case "v3-burn":
        // Burn only credits the position; the tokens leave the pool with Collect.
        if (s.tick === null) s.liquidity = null;
        else if (inRange(event.tickLower, event.tickUpper))
          s.liquidity = addKnown(s.liquidity, -event.amount);
        break;
      case "v3-collect":
      case "v3-collect-protocol":
        s.reserve0 = addKnown(s.reserve0, -event.amount0);
        s.reserve1 = addKnown(s.reserve1, -event.amount1);
        break;
      case "v3-flash":
        s.reserve0 = addKnown(s.reserve0, event.paid0);
        s.reserve1 = addKnown(s.reserve1, event.paid1);
        break;
    }
    return s;
  },

  record(event): EventRecord {
    switch (event.type) {
      case "v3-swap":
        return {
          role: "swap",
          joinsPending: false,
          trade: signedTrade({ ...event, into0: event.amount0, into1: event.amount1 }),
        };
      case "v3-initialize":
        return { role: "event", kind: "initialize", fields: {} };
      case "v3-mint":
        return {
          role: "event",
          kind: "mint",
          fields: {
            amount0: event.amount0,
            amount1: event.amount1,
            liquidityDelta: event.amount,
            tickLower: event.tickLower,
            tickUpper: event.tickUpper,
          },
        };
      case "v3-burn":
        return {
          role: "event",
          kind: "burn",
          fields: {
            amount0: event.amount0,
            amount1: event.amount1,
            liquidityDelta: -event.amount,
            tickLower: event.tickLower,
            tickUpper: event.tickUpper,
          },
        };
      case "v3-collect":
        return {
          role: "event",
          kind: "collect",
          fields: {
            amount0: event.amount0,
            amount1: event.amount1,
            tickLower: event.tickLower,
            tickUpper: event.tickUpper,
          },
        };
      case "v3-collect-protocol":
        return { role: "event", kind: "collect", fields: { amount0: event.amount0, amount1: event.amount1 } };
      case "v3-flash":
        return { role: "event", kind: "flash", fields: { amount0: event.paid0, amount1: event.paid1 } };
    }
  },

  swapPrice(event, _state, decimals0, decimals1) {
    return event.type === "v3-swap" ? priceFromSqrtPriceX96(event.sqrtPriceX96, decimals0, decimals1) : null;
  },

  baseStateCalls: (pool) => [
    { to: pool.token0, data: encodeBalanceOf(pool.address) },
    { to: pool.token1, data: encodeBalanceOf(pool.address) },
    { to: pool.address, data: selectors.slot0 },
    { to: pool.address, data: selectors.liquidity },
  ],
  baseState(answers, block) {
    const [balance0, balance1, slot0, liquidity] = answers;
    return {
      reserve0: answerWord(balance0, 0),
      reserve1: answerWord(balance1, 0),
      sqrtPriceX96: answerWord(slot0, 0),
      liquidity: answerWord(liquidity, 0),
      tick: slot0 && wordCount(slot0) > 1 ? Number(intAt(slot0, 1)) : null,
      block,
      logIndex: null,
    };
  },

  spotRatio0: sqrtPriceSpot,
  depth: balanceDepth,
  shape: uniswapV3Shape,
};
