import { priceFromReserves, ratioFromReserves } from "../../decode/price.js";
import type { Hex, PoolCreation, RawLog } from "../../decode/types.js";
import { argsDecoder, tableDecoder } from "../event-decoder.js";
import { amountsEvent, answerWord, balanceDepth, creationAt, stateAfter, stateAt } from "../shared.js";
import type { EventRecord, ProtocolFamily } from "../types.js";
import { v2Signatures, v2Topics } from "./abi.js";
import { uniswapV2Shape } from "./shape.js";

/** getReserves() → (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast) */
const GET_RESERVES = "0x0902f1ac" as Hex;

/** Decodes a Uniswap V2 pair's Sync, Swap, Mint or Burn. */
export const decodeV2Log = tableDecoder(v2Signatures, ["v2Sync", "v2Swap", "v2Mint", "v2Burn"]);

/** A decoded event of a Uniswap V2-style pair, its fields named as in its signature; amounts are raw integers. */
export type V2Event = NonNullable<ReturnType<typeof decodeV2Log>>;

const pairCreated = argsDecoder(v2Signatures.v2PairCreated);

/** Decodes a factory's PairCreated; null for another log or a malformed one. */
export function decodeV2Creation(log: RawLog): PoolCreation | null {
  const created = pairCreated(log);
  if (!created) return null;
  const { token0, token1, pair } = created;
  return creationAt(log, { token0, token1, pool: pair, fee: null, tickSpacing: null });
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
        return amountsEvent("mint", event);
      case "v2-burn":
        return amountsEvent("burn", event);
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
