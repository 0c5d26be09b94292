import { priceFromSqrtPriceX96 } from "../../decode/price.js";
import type { Hex, PoolCreation, RawLog } from "../../decode/types.js";
import { addressAt, intAt, topicAddress, uintAt, wordCount } from "../../decode/words.js";
import type { PoolState } from "../../model/index.js";
import { addKnown, balanceDepth, signedTrade, sqrtPriceSpot, stateAfter, stateAt } from "../shared.js";
import { liquidityAmounts } from "../tick-math.js";
import type { EventRecord, LogLike, ProtocolFamily } from "../types.js";
import { RETURN_DELTA_FLAGS, v4Topics } from "./abi.js";
import { uniswapV4Shape } from "./shape.js";

/** A decoded PoolManager event; `id` is the 32-byte PoolId, amounts raw integers. */
export type V4Event =
  | {
      type: "v4-initialize";
      id: Hex;
      currency0: Hex;
      currency1: Hex;
      fee: number;
      tickSpacing: number;
      hooks: Hex;
      sqrtPriceX96: bigint;
      tick: number;
    }
  | {
      type: "v4-swap";
      id: Hex;
      sender: Hex;
      /** The swapper's balance deltas: negative = paid by the swapper into the pool (V3's sign reversed). */
      amount0: bigint;
      amount1: bigint;
      sqrtPriceX96: bigint;
      liquidity: bigint;
      tick: number;
      /** The fee charged by this swap, in hundredths of a bip (dynamic-fee pools change it per swap). */
      fee: number;
    }
  | {
      type: "v4-modify-liquidity";
      id: Hex;
      sender: Hex;
      tickLower: number;
      tickUpper: number;
      liquidityDelta: bigint;
      salt: Hex;
    }
  | { type: "v4-donate"; id: Hex; sender: Hex; amount0: bigint; amount1: bigint };

const word = (data: string, i: number): Hex => `0x${data.slice(2 + i * 64, 2 + (i + 1) * 64)}` as Hex;
const id = (topic: string): Hex => topic.toLowerCase() as Hex;

/** Decodes a PoolManager's Initialize, Swap, ModifyLiquidity or Donate. */
export function decodeV4Log(log: LogLike): V4Event | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  switch (t[0]) {
    case v4Topics.v4Initialize:
      if (t.length !== 4 || words !== 5) return null;
      return {
        type: "v4-initialize",
        id: id(t[1] as string),
        currency0: topicAddress(t[2] as string),
        currency1: topicAddress(t[3] as string),
        fee: Number(uintAt(data, 0)),
        tickSpacing: Number(intAt(data, 1)),
        hooks: addressAt(data, 2),
        sqrtPriceX96: uintAt(data, 3),
        tick: Number(intAt(data, 4)),
      };
    case v4Topics.v4Swap:
      if (t.length !== 3 || words !== 6) return null;
      return {
        type: "v4-swap",
        id: id(t[1] as string),
        sender: topicAddress(t[2] as string),
        amount0: intAt(data, 0),
        amount1: intAt(data, 1),
        sqrtPriceX96: uintAt(data, 2),
        liquidity: uintAt(data, 3),
        tick: Number(intAt(data, 4)),
        fee: Number(uintAt(data, 5)),
      };
    case v4Topics.v4ModifyLiquidity:
      if (t.length !== 3 || words !== 4) return null;
      return {
        type: "v4-modify-liquidity",
        id: id(t[1] as string),
        sender: topicAddress(t[2] as string),
        tickLower: Number(intAt(data, 0)),
        tickUpper: Number(intAt(data, 1)),
        liquidityDelta: intAt(data, 2),
        salt: word(data, 3),
      };
    case v4Topics.v4Donate:
      if (t.length !== 3 || words !== 2) return null;
      return {
        type: "v4-donate",
        id: id(t[1] as string),
        sender: topicAddress(t[2] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    default:
      return null;
  }
}

/**
 * A PoolManager's Initialize as a new pool: the pool is its PoolId (`pool`, 32 bytes), its
 * manager the factory, its currencies the tokens (the native coin is address zero).
 */
export function decodeV4Creation(log: RawLog): PoolCreation | null {
  const event = decodeV4Log(log);
  if (event?.type !== "v4-initialize") return null;
  return {
    factory: log.address,
    pool: event.id,
    token0: event.currency0,
    token1: event.currency1,
    fee: event.fee,
    tickSpacing: event.tickSpacing,
    hooks: event.hooks,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
  };
}

/** Whether a hook address carries a permission that lets it return deltas (amounts not as paid). */
export function hookRewritesAmounts(hooks: string | null | undefined): boolean {
  return hooks != null && (Number.parseInt(hooks.slice(-4), 16) & RETURN_DELTA_FLAGS) !== 0;
}

/** The amounts a ModifyLiquidity moves into the pool at the state before it; null while the price is unknown. */
function modifyAmounts(
  before: PoolState,
  event: V4Event & { type: "v4-modify-liquidity" },
): { amount0: bigint; amount1: bigint } | null {
  if (before.sqrtPriceX96 === null || before.tick === null) return null;
  return liquidityAmounts(
    before.sqrtPriceX96,
    before.tick,
    event.tickLower,
    event.tickUpper,
    event.liquidityDelta,
  );
}

/**
 * Uniswap V4: one PoolManager holds every pool and emits its events, each naming the pool by
 * its PoolId. The manager holds all pools' tokens together, so a pool's balances are tracked
 * from its own events, as Uniswap's v4 subgraph does: ModifyLiquidity moves the principal of
 * the liquidity change at the current price, Swap the swapper's deltas (reversed), Donate its
 * amounts in.
 */
export const uniswapV4: ProtocolFamily<V4Event> = {
  name: "v4",
  variants: [{ id: "uniswap-v4", layout: "uniswap", dexName: "Uniswap V4" }],
  creationTopic: v4Topics.v4Initialize,
  poolsInFactory: true,
  decodeCreation: decodeV4Creation,
  poolTopics: () => [v4Topics.v4Initialize, v4Topics.v4Swap, v4Topics.v4ModifyLiquidity, v4Topics.v4Donate],
  swapTopics: [v4Topics.v4Swap],
  decodeLog: (log) => decodeV4Log(log),
  rewritesAmounts: (pool) => hookRewritesAmounts(pool.hooks),

  createdState: (block) => stateAt(block, { reserve0: 0n, reserve1: 0n, liquidity: 0n }),

  nextState(before, event, log) {
    const s = stateAfter(before, log);
    switch (event.type) {
      case "v4-initialize":
        s.sqrtPriceX96 = event.sqrtPriceX96;
        s.tick = event.tick;
        break;
      case "v4-swap":
        s.reserve0 = addKnown(s.reserve0, -event.amount0);
        s.reserve1 = addKnown(s.reserve1, -event.amount1);
        s.sqrtPriceX96 = event.sqrtPriceX96;
        s.liquidity = event.liquidity;
        s.tick = event.tick;
        break;
      case "v4-modify-liquidity": {
        const amounts = modifyAmounts(before, event);
        if (amounts === null) {
          s.reserve0 = null;
          s.reserve1 = null;
          s.liquidity = null;
          break;
        }
        s.reserve0 = addKnown(s.reserve0, amounts.amount0);
        s.reserve1 = addKnown(s.reserve1, amounts.amount1);
        if (s.tick !== null && event.tickLower <= s.tick && s.tick < event.tickUpper)
          s.liquidity = addKnown(s.liquidity, event.liquidityDelta);
        break;
      }
      case "v4-donate":
        s.reserve0 = addKnown(s.reserve0, event.amount0);
        s.reserve1 = addKnown(s.reserve1, event.amount1);
        break;
    }
    return s;
  },

  record(event, before): EventRecord {
    switch (event.type) {
      case "v4-swap":
        return {
          role: "swap",
          joinsPending: false,
          // The PoolManager's Swap names no recipient: the tokens settle with the caller.
          trade: signedTrade({
            ...event,
            recipient: event.sender,
            into0: -event.amount0,
            into1: -event.amount1,
          }),
        };
      case "v4-initialize":
        return { role: "event", kind: "initialize", fields: {} };
      case "v4-modify-liquidity": {
        const amounts = modifyAmounts(before, event);
        return {
          role: "event",
          kind: event.liquidityDelta < 0n ? "burn" : "mint",
          fields: {
            ...(amounts ?? {}),
            liquidityDelta: event.liquidityDelta,
            tickLower: event.tickLower,
            tickUpper: event.tickUpper,
          },
        };
      }
      case "v4-donate":
        return { role: "event", kind: "donate", fields: { amount0: event.amount0, amount1: event.amount1 } };
    }
  },

  swapPrice(event, _state, decimals0, decimals1) {
    return event.type === "v4-swap" ? priceFromSqrtPriceX96(event.sqrtPriceX96, decimals0, decimals1) : null;
  },

  // The PoolManager holds every pool's tokens together: a pool's balances before the indexed
  // range cannot be read from the chain, they stay unknown (its price comes with its first swap).
  baseStateCalls: () => [],
  baseState: (_answers, block) => stateAt(block),

  spotRatio0: sqrtPriceSpot,
  depth: balanceDepth,
  shape: uniswapV4Shape,
};
