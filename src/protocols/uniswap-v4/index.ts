import { priceFromSqrtPriceX96 } from "../../decode/price.js";
import type { PoolCreation, RawLog } from "../../decode/types.js";
import type { PoolState } from "../../model/index.js";
import { type TableEvent, tableDecoder } from "../event-decoder.js";
import {
  amountsEvent,
  concentratedCreatedState,
  managerCreation,
  managerPools,
  managerTrade,
  moveActiveLiquidity,
  moveBalances,
  positionEvent,
  setInitialPrice,
  setSwapPrice,
  sqrtPriceSpot,
  stateAfter,
} from "../shared.js";
import { liquidityAmounts } from "../tick-math.js";
import type { EventRecord, LogLike, ProtocolFamily } from "../types.js";
import { RETURN_DELTA_FLAGS, v4Signatures, v4Topics } from "./abi.js";
import { uniswapV4Shape } from "./shape.js";

/**
 * A decoded PoolManager event, its fields named as in its signature: `id` is the 32-byte PoolId,
 * amounts raw integers. A Swap's amounts are the swapper's balance deltas (negative: paid by the
 * swapper into the pool, V3's sign reversed) and its `fee` the fee this swap charged, in
 * hundredths of a bip (dynamic-fee pools change it per swap).
 */
export type V4Event = TableEvent<typeof v4Signatures, keyof typeof v4Signatures>;

/** Decodes a PoolManager's Initialize, Swap, ModifyLiquidity or Donate. */
export const decodeV4Log: (log: LogLike) => V4Event | null = tableDecoder(
  v4Signatures,
  Object.keys(v4Signatures) as (keyof typeof v4Signatures)[],
);

/**
 * A PoolManager's Initialize as a new pool: the pool is its PoolId (`pool`, 32 bytes), its
 * manager the factory, its currencies the tokens (the native coin is address zero).
 */
export function decodeV4Creation(log: RawLog): PoolCreation | null {
  const event = decodeV4Log(log);
  if (event?.type !== "v4-initialize") return null;
  return managerCreation(log, event, { tickSpacing: event.tickSpacing });
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
  ...managerPools,
  creationTopic: v4Topics.v4Initialize,
  decodeCreation: decodeV4Creation,
  poolTopics: () => [v4Topics.v4Initialize, v4Topics.v4Swap, v4Topics.v4ModifyLiquidity, v4Topics.v4Donate],
  swapTopics: [v4Topics.v4Swap],
  decodeLog: (log) => decodeV4Log(log),
  rewritesAmounts: (pool) => hookRewritesAmounts(pool.hooks),

  createdState: concentratedCreatedState,

  nextState(before, event, log) {
    const s = stateAfter(before, log);
    switch (event.type) {
      case "v4-initialize":
        setInitialPrice(s, event);
        break;
      case "v4-swap":
        moveBalances(s, -event.amount0, -event.amount1);
        setSwapPrice(s, event);
        break;
      case "v4-modify-liquidity": {
        const amounts = modifyAmounts(before, event);
        if (amounts === null) {
          s.reserve0 = null;
          s.reserve1 = null;
          s.liquidity = null;
          break;
        }
        moveBalances(s, amounts.amount0, amounts.amount1);
        moveActiveLiquidity(s, event, event.liquidityDelta);
        break;
      }
      case "v4-donate":
        moveBalances(s, event.amount0, event.amount1);
        break;
    }
    return s;
  },

  record(event, before): EventRecord {
    switch (event.type) {
      case "v4-swap":
        return { role: "swap", joinsPending: false, trade: managerTrade(event, event) };
      case "v4-initialize":
        return { role: "event", kind: "initialize", fields: {} };
      case "v4-modify-liquidity": {
        const kind = event.liquidityDelta < 0n ? "burn" : "mint";
        return positionEvent(kind, modifyAmounts(before, event), event, event.liquidityDelta);
      }
      case "v4-donate":
        return amountsEvent("donate", event);
    }
  },

  swapPrice(event, _state, decimals0, decimals1) {
    return event.type === "v4-swap" ? priceFromSqrtPriceX96(event.sqrtPriceX96, decimals0, decimals1) : null;
  },

  spotRatio0: sqrtPriceSpot,
  shape: uniswapV4Shape,
};
