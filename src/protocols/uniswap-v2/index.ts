import { priceFromReserves, ratioFromReserves } from "../../decode/price.js";
import type { Hex, PoolCreation, RawLog } from "../../decode/types.js";
import { addressAt, topicAddress, uintAt, wordCount } from "../../decode/words.js";
import { answerWord, balanceDepth, stateAfter, stateAt } from "../shared.js";
import type { EventRecord, LogLike, ProtocolFamily } from "../types.js";
import { v2Topics } from "./abi.js";
import { uniswapV2Shape } from "./shape.js";

/** A decoded event of a Uniswap V2-style pair; amounts are raw integers. */
export type V2Event =
  | { type: "v2-sync"; reserve0: bigint; reserve1: bigint }
  | {
      type: "v2-swap";
      sender: Hex;
      to: Hex;
      amount0In: bigint;
      amount1In: bigint;
      amount0Out: bigint;
      amount1Out: bigint;
    }
  | { type: "v2-mint"; sender: Hex; amount0: bigint; amount1: bigint }
  | { type: "v2-burn"; sender: Hex; to: Hex; amount0: bigint; amount1: bigint };

/** getReserves() → (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast) */
const GET_RESERVES = "0x0902f1ac" as Hex;

/** Decodes a Uniswap V2 pair's Sync, Swap, Mint or Burn. */
export function decodeV2Log(log: LogLike): V2Event | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  switch (t[0]) {
    case v2Topics.v2Sync:
      if (t.length !== 1 || words !== 2) return null;
      return { type: "v2-sync", reserve0: uintAt(data, 0), reserve1: uintAt(data, 1) };
    case v2Topics.v2Swap:
      if (t.length !== 3 || words !== 4) return null;
      return {
        type: "v2-swap",
        sender: topicAddress(t[1] as string),
        to: topicAddress(t[2] as string),
        amount0In: uintAt(data, 0),
        amount1In: uintAt(data, 1),
        amount0Out: uintAt(data, 2),
        amount1Out: uintAt(data, 3),
      };
    case v2Topics.v2Mint:
      if (t.length !== 2 || words !== 2) return null;
      return {
        type: "v2-mint",
        sender: topicAddress(t[1] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    case v2Topics.v2Burn:
      if (t.length !== 3 || words !== 2) return null;
      return {
        type: "v2-burn",
        sender: topicAddress(t[1] as string),
        to: topicAddress(t[2] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    default:
      return null;
  }
}

/** Decodes a factory's PairCreated; null for another log or a malformed one. */
export function decodeV2Creation(log: RawLog): PoolCreation | null {
  const { topics: t, data } = log;
  if (t[0] !== v2Topics.v2PairCreated || t.length !== 3 || wordCount(data) !== 2) return null;
  return {
    factory: log.address,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    token0: topicAddress(t[1] as string),
    token1: topicAddress(t[2] as string),
    pool: addressAt(data, 0),
    fee: null,
    tickSpacing: null,
  };
}

/**
 * Uniswap V2-style pairs (Uniswap V2, SushiSwap, PancakeSwap V2, QuickSwap): reserves from Sync;
 * a Sync followed, in the same transaction, by the pair's Swap gives that swap its reserves and
 * is not stored on its own; Mint and Burn carry the reserves of the Sync before them.
 */
export const uniswapV2: ProtocolFamily<V2Event> = {
  name: "v2",
  variants: [{ id: "uniswap-v2", layout: "uniswap", dexName: "Uniswap V2" }],
  creationTopic: v2Topics.v2PairCreated,
  poolsInFactory: false,
  rewritesAmounts: () => false,
  decodeCreation: decodeV2Creation,
  poolTopics: () => [v2Topics.v2Sync, v2Topics.v2Swap, v2Topics.v2Mint, v2Topics.v2Burn],
  swapTopics: [v2Topics.v2Swap],
  decodeLog: (log) => decodeV2Log(log),

  createdState: (block) => stateAt(block, { reserve0: 0n, reserve1: 0n }),

  nextState(before, event, log) {
    const s = stateAfter(before, log);
    // Reserves move only through Sync, which comes right before Swap, Mint and Burn.
    if (event.type === "v2-sync") {
      s.reserve0 = event.reserve0;
      s.reserve1 = event.reserve1;
    }
    return s;
  },

  record(event): EventRecord {
    switch (event.type) {
      case "v2-sync":
        return { role: "pending" };
      case "v2-swap":
        return {
          role: "swap",
          joinsPending: true,
          trade: {
            sender: event.sender,
            recipient: event.to,
            amount0In: event.amount0In,
            amount1In: event.amount1In,
            amount0Out: event.amount0Out,
            amount1Out: event.amount1Out,
            sqrtPriceX96: null,
            liquidity: null,
            tick: null,
          },
        };
      case "v2-mint":
        return { role: "event", kind: "mint", fields: { amount0: event.amount0, amount1: event.amount1 } };
      case "v2-burn":
        return { role: "event", kind: "burn", fields: { amount0: event.amount0, amount1: event.amount1 } };
    }
  },

  swapPrice(_event, state, decimals0, decimals1) {
    if (state.reserve0 === null || state.reserve1 === null) return null;
    return priceFromReserves(state.reserve0, state.reserve1, decimals0, decimals1);
  },

  baseStateCalls: (pool) => [{ to: pool.address, data: GET_RESERVES }],
  baseState: (answers, block) =>
    stateAt(block, { reserve0: answerWord(answers[0], 0), reserve1: answerWord(answers[0], 1) }),

  spotRatio0(state, decimals0, decimals1) {
    if (state.reserve0 === null || state.reserve1 === null || state.reserve1 === 0n) return null;
    return ratioFromReserves(state.reserve0, state.reserve1, decimals0, decimals1);
  },
  depth: balanceDepth,
  shape: uniswapV2Shape,
};
