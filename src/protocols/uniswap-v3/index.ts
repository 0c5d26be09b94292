import { encodeBalanceOf } from "../../decode/erc20.js";
import { priceFromSqrtPriceX96 } from "../../decode/price.js";
import type { Hex, PoolCreation, RawLog, SwapEventLayout } from "../../decode/types.js";
import { intAt, wordCount } from "../../decode/words.js";
import { argsDecoder, type EventArgs, type TableEvent, tableDecoder } from "../event-decoder.js";
import {
  amountsEvent,
  answerWord,
  balanceDepth,
  concentratedCreatedState,
  creationAt,
  moveActiveLiquidity,
  moveBalances,
  positionEvent,
  setInitialPrice,
  setSwapPrice,
  signedTrade,
  sqrtPriceSpot,
  stateAfter,
} from "../shared.js";
import type { EventRecord, LogLike, ProtocolFamily } from "../types.js";
import { v3Signatures, v3Topics } from "./abi.js";
import { uniswapV3Shape } from "./shape.js";

const selectors = {
  /** slot0() → (uint160 sqrtPriceX96, int24 tick, …); PancakeSwap V3 starts the same way. */
  slot0: "0x3850c7bd" as Hex,
  /** liquidity() → uint128 */
  liquidity: "0x1a686502" as Hex,
};

const swapTopicOf = (layout: SwapEventLayout) =>
  layout === "pancake" ? v3Topics.pancakeV3Swap : v3Topics.v3Swap;

/** The events a V3 pool emits but its Swap, whose layout is the DEX's. */
const v3Others = ["v3Initialize", "v3Mint", "v3Burn", "v3Collect", "v3CollectProtocol", "v3Flash"] as const;
const decodeV3Other = tableDecoder(v3Signatures, v3Others);

/**
 * A decoded event of a Uniswap V3-style pool, its fields named as in its signature; amounts are
 * raw integers. A Swap's amounts are signed, the pool's view (positive: paid into the pool); its
 * protocol fees are PancakeSwap V3's only (null for Uniswap's layout).
 */
export type V3Event =
  | TableEvent<typeof v3Signatures, (typeof v3Others)[number]>
  | ({ type: "v3-swap" } & EventArgs<typeof v3Signatures.v3Swap> & {
        protocolFeesToken0: bigint | null;
        protocolFeesToken1: bigint | null;
      });

const uniswapSwap = argsDecoder(v3Signatures.v3Swap, {
  type: "v3-swap",
  protocolFeesToken0: null,
  protocolFeesToken1: null,
});
const pancakeSwap = argsDecoder(v3Signatures.pancakeV3Swap, { type: "v3-swap" });

/**
 * Decodes a Uniswap V3 pool's Initialize, Swap, Mint, Burn, Collect, CollectProtocol or Flash.
 * `layout` picks the Swap layout: Uniswap's 7 fields or PancakeSwap V3's 9 fields.
 */
export function decodeV3Log(log: LogLike, layout: SwapEventLayout): V3Event | null {
  if (log.topics[0] === swapTopicOf(layout))
    return layout === "pancake" ? pancakeSwap(log) : uniswapSwap(log);
  return decodeV3Other(log);
}

const poolCreated = argsDecoder(v3Signatures.v3PoolCreated);

/** Decodes a factory's PoolCreated; null for another log or a malformed one. */
export function decodeV3Creation(log: RawLog): PoolCreation | null {
  const created = poolCreated(log);
  return created && creationAt(log, created);
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

  createdState: concentratedCreatedState,

  nextState(before, event, log) {
    const s = stateAfter(before, log);
    switch (event.type) {
      case "v3-initialize":
        setInitialPrice(s, event);
        break;
      case "v3-swap":
        moveBalances(s, event.amount0, event.amount1);
        setSwapPrice(s, event);
        break;
      case "v3-mint":
        moveBalances(s, event.amount0, event.amount1);
        moveActiveLiquidity(s, event, event.amount);
        break;
      case "v3-burn":
        // Burn only credits the position; the tokens leave the pool with Collect.
        moveActiveLiquidity(s, event, -event.amount);
        break;
      case "v3-collect":
      case "v3-collect-protocol":
        moveBalances(s, -event.amount0, -event.amount1);
        break;
      case "v3-flash":
        moveBalances(s, event.paid0, event.paid1);
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
        return positionEvent("mint", event, event, event.amount);
      case "v3-burn":
        return positionEvent("burn", event, event, -event.amount);
      case "v3-collect":
        return positionEvent("collect", event, event);
      case "v3-collect-protocol":
        return amountsEvent("collect", event);
      case "v3-flash":
        return amountsEvent("flash", { amount0: event.paid0, amount1: event.paid1 });
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
