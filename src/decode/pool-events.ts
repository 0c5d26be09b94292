import { topics } from "./abi.js";
import type { PoolEvent, Protocol, RawLog, SwapEventLayout } from "./types.js";
import { addressAt, intAt, topicAddress, topicInt, uintAt, wordCount } from "./words.js";

type LogLike = Pick<RawLog, "topics" | "data">;

/**
 * Decodes a log emitted by a pool of the given protocol. Returns null for a log that is not one
 * of the decoded events of that protocol (or of that V3 Swap layout), or whose topics or data do
 * not have the event's shape.
 */
export function decodePoolLog(
  log: LogLike,
  protocol: Protocol,
  swapEvent: SwapEventLayout,
): PoolEvent | null {
  return protocol === "v2" ? decodeV2Log(log) : decodeV3Log(log, swapEvent);
}

/** Decodes a Uniswap V2 pair's Sync, Swap, Mint or Burn. */
export function decodeV2Log(log: LogLike): PoolEvent | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  switch (t[0]) {
    case topics.v2Sync:
      if (t.length !== 1 || words !== 2) return null;
      return { type: "v2-sync", reserve0: uintAt(data, 0), reserve1: uintAt(data, 1) };
    case topics.v2Swap:
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
    case topics.v2Mint:
      if (t.length !== 2 || words !== 2) return null;
      return {
        type: "v2-mint",
        sender: topicAddress(t[1] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    case topics.v2Burn:
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

/**
 * Decodes a Uniswap V3 pool's Initialize, Swap, Mint, Burn, Collect, CollectProtocol or Flash.
 * `swapEvent` picks the Swap layout: Uniswap's 7 fields or PancakeSwap V3's 9 fields.
 */
export function decodeV3Log(log: LogLike, swapEvent: SwapEventLayout): PoolEvent | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  const swapTopic = swapEvent === "pancake" ? topics.pancakeV3Swap : topics.v3Swap;
  switch (t[0]) {
    case swapTopic: {
      const pancake = swapEvent === "pancake";
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
    case topics.v3Initialize:
      if (t.length !== 1 || words !== 2) return null;
      return { type: "v3-initialize", sqrtPriceX96: uintAt(data, 0), tick: Number(intAt(data, 1)) };
    case topics.v3Mint:
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
    case topics.v3Burn:
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
    case topics.v3Collect:
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
    case topics.v3CollectProtocol:
      if (t.length !== 3 || words !== 2) return null;
      return {
        type: "v3-collect-protocol",
        sender: topicAddress(t[1] as string),
        recipient: topicAddress(t[2] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    case topics.v3Flash:
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
