import type { Hex, PoolCreation, RawLog } from "../../decode/types.js";
import { topicAddress, uintAt, wordCount } from "../../decode/words.js";
import type { Ratio } from "../../exact/ratio.js";
import { ratioValue } from "../../exact/ratio.js";
import { type TableEvent, tableDecoder } from "../event-decoder.js";
import {
  amountsEvent,
  managerCreation,
  managerPools,
  managerTrade,
  moveBalances,
  stateAfter,
  stateAt,
} from "../shared.js";
import type { EventRecord, LogLike, PoolTraits, ProtocolFamily } from "../types.js";
import { uniswapV4, type V4Event } from "../uniswap-v4/index.js";
import { INFINITY_SWAP_RETURNS_DELTA, infinitySignatures, infinityTopics } from "./abi.js";
import { infinityBinShape, infinityClShape } from "./shape.js";

/** A signed 24-bit field of a packed word. */
const int24At = (value: bigint, offset: number): number => {
  const raw = Number((value >> BigInt(offset)) & 0xffffffn);
  return raw >= 0x800000 ? raw - 0x1000000 : raw;
};

/** The tick spacing packed in a CL pool's parameters (bits 16–39). */
export const clTickSpacing = (parameters: Hex): number => int24At(BigInt(parameters), 16);
/** The bin step packed in a Bin pool's parameters (bits 16–31), in basis points. */
export const binStepOf = (parameters: Hex): number => Number((BigInt(parameters) >> 16n) & 0xffffn);

/** Whether a pool's hook may return deltas on a swap (its permissions: the low bits of `parameters`). */
export function infinityRewritesAmounts(pool: PoolTraits): boolean {
  return (
    pool.parameters != null && (Number(BigInt(pool.parameters) & 0xffffn) & INFINITY_SWAP_RETURNS_DELTA) !== 0
  );
}

/** The CLPoolManager's events a CL pool is read from (their topics are fetched). */
const clEvents = ["clInitialize", "clSwap", "clModifyLiquidity", "clDonate"] as const;
const decodeClEvent = tableDecoder(infinitySignatures, clEvents);

/**
 * Decodes a CLPoolManager log into the Uniswap V4 events it corresponds to (its Initialize
 * carries `parameters` instead of the tick spacing, its Swap a protocol fee, its Donate the
 * tick, which the V4 events do not keep); ModifyLiquidity has V4's signature.
 */
export function decodeClLog(log: LogLike): (V4Event & { parameters?: Hex }) | null {
  const event = decodeClEvent(log);
  switch (event?.type) {
    case "cl-initialize":
      return { ...event, type: "v4-initialize", tickSpacing: clTickSpacing(event.parameters) };
    case "cl-swap": {
      const { protocolFee: _, ...swap } = event;
      return { ...swap, type: "v4-swap" };
    }
    case "cl-modify-liquidity":
      return { ...event, type: "v4-modify-liquidity" };
    case "cl-donate": {
      const { tick: _, ...donate } = event;
      return { ...donate, type: "v4-donate" };
    }
    default:
      return null;
  }
}

/** A CLPoolManager's Initialize as a new pool (its PoolId, the manager as factory, `parameters` kept). */
export function decodeClCreation(log: RawLog): PoolCreation | null {
  const event = decodeClLog(log);
  if (event?.type !== "v4-initialize") return null;
  return managerCreation(log, event, {
    tickSpacing: event.tickSpacing,
    parameters: event.parameters ?? null,
  });
}

/**
 * PancakeSwap Infinity CL pools: Uniswap V4's model (a pool is its id inside the CLPoolManager,
 * balances tracked from its own events, swaps as the swapper's deltas), with the hook
 * permissions in the pool's `parameters`.
 */
export const pancakeswapInfinityCl: ProtocolFamily<V4Event> = {
  ...uniswapV4,
  name: "infinity-cl",
  variants: [{ id: "pancakeswap-infinity-cl", layout: "uniswap", dexName: "PancakeSwap Infinity CL" }],
  creationTopic: infinityTopics.clInitialize,
  decodeCreation: decodeClCreation,
  poolTopics: () => clEvents.map((name) => infinityTopics[name]),
  swapTopics: [infinityTopics.clSwap],
  decodeLog: (log) => decodeClLog(log),
  rewritesAmounts: infinityRewritesAmounts,
  shape: infinityClShape,
};

/**
 * A decoded BinPoolManager event; amounts raw, a Swap's the swapper's deltas as CL's (negative:
 * paid into the pool); a Mint's or Burn's `bins` the bins' ids, its amounts their sums.
 */
export type BinEvent =
  | TableEvent<typeof infinitySignatures, "binInitialize" | "binSwap">
  | { type: "bin-mint" | "bin-burn"; id: Hex; sender: Hex; bins: number[]; amount0: bigint; amount1: bigint };

/** The low and high 128 bits of a packed amounts word: token0's and token1's amounts. */
const unpack = (value: bigint): [bigint, bigint] => [value & ((1n << 128n) - 1n), value >> 128n];

/** Reads a dynamic uint256[]/bytes32[] of ABI data whose offset is in word `head`. */
function arrayAt(data: string, head: number): bigint[] | null {
  const offset = uintAt(data, head);
  if (offset % 32n !== 0n) return null;
  const start = Number(offset / 32n);
  if (start >= wordCount(data)) return null;
  const length = Number(uintAt(data, start));
  if (start + 1 + length > wordCount(data)) return null;
  return Array.from({ length }, (_, i) => uintAt(data, start + 1 + i));
}

/** The BinPoolManager's events a Bin pool is read from (their topics are fetched). */
const binEvents = ["binInitialize", "binSwap", "binMint", "binBurn"] as const;
/** Its events of static arguments (Mint and Burn carry arrays). */
const decodeBinStatic = tableDecoder(infinitySignatures, ["binInitialize", "binSwap"]);

/** A BinPoolManager's Mint or Burn: the bins' amounts summed per token. */
function decodeBinLiquidity(log: LogLike): BinEvent | null {
  const { topics: t, data } = log;
  const mint = t[0] === infinityTopics.binMint;
  if (!mint && t[0] !== infinityTopics.binBurn) return null;
  const words = wordCount(data);
  if (t.length !== 3 || !Number.isInteger(words) || words < (mint ? 5 : 3)) return null;
  const ids = arrayAt(data, 0);
  const amounts = arrayAt(data, 2);
  if (!ids || !amounts || ids.length !== amounts.length) return null;
  let amount0 = 0n;
  let amount1 = 0n;
  for (const packed of amounts) {
    const [a0, a1] = unpack(packed);
    amount0 += a0;
    amount1 += a1;
  }
  return {
    type: mint ? "bin-mint" : "bin-burn",
    id: (t[1] as string).toLowerCase() as Hex,
    sender: topicAddress(t[2] as string),
    bins: ids.map(Number),
    amount0,
    amount1,
  };
}

/** Decodes a BinPoolManager's Initialize, Swap, Mint or Burn. */
export const decodeBinLog = (log: LogLike): BinEvent | null =>
  decodeBinStatic(log) ?? decodeBinLiquidity(log);

/** A BinPoolManager's Initialize as a new pool. */
export function decodeBinCreation(log: RawLog): PoolCreation | null {
  const event = decodeBinLog(log);
  if (event?.type !== "bin-initialize") return null;
  return managerCreation(log, event, { tickSpacing: null, parameters: event.parameters });
}

/** The center bin id: its price is 1. */
const CENTER_BIN = 1 << 23;

/**
 * The exact price of token1 per token0 (raw units) of a bin: (1 + binStep / 10,000)^(activeId − 2^23),
 * decimal-adjusted by 10^(decimals0 − decimals1).
 */
export function binPriceRatio(
  activeId: number,
  binStep: number,
  decimals0: number,
  decimals1: number,
): Ratio {
  const n = activeId - CENTER_BIN;
  const base = { num: 10_000n + BigInt(binStep), den: 10_000n };
  const e = BigInt(Math.abs(n));
  const up = { num: base.num ** e, den: base.den ** e };
  const raw = n >= 0 ? up : { num: up.den, den: up.num };
  return { num: raw.num * 10n ** BigInt(decimals0), den: raw.den * 10n ** BigInt(decimals1) };
}

/** Fixed-point bits of the bounds in `binPriceValue`. */
const BOUND_BITS = 192n;

/**
 * `ratioValue(binPriceRatio(…))`, the correctly rounded double of a bin's price, without raising
 * (10,000 + binStep) and 10,000 to the bin's distance from the center (tens of thousands of digits
 * far from it, tens of milliseconds a swap): the power is bounded from below and above in
 * 192-bit fixed point (exponentiation by squaring, rounding down for the one, up for the other);
 * when both bounds round to the same double, so does the price between them (rounding is
 * monotonic), else the exact ratio decides.
 */
export function binPriceValue(
  activeId: number,
  binStep: number,
  decimals0: number,
  decimals1: number,
): number {
  const n = activeId - CENTER_BIN;
  const exact = () => ratioValue(binPriceRatio(activeId, binStep, decimals0, decimals1));
  if (Math.abs(n) <= 64) return exact();
  const one = 1n << BOUND_BITS;
  const up = (x: bigint) => (x >> BOUND_BITS) + ((x & (one - 1n)) === 0n ? 0n : 1n);
  const base = (10_000n + BigInt(binStep)) << BOUND_BITS;
  let [baseLow, baseHigh] = [base / 10_000n, (base + 9_999n) / 10_000n];
  let [low, high] = [one, one];
  for (let e = Math.abs(n); e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) [low, high] = [(low * baseLow) >> BOUND_BITS, up(high * baseHigh)];
    if (e > 1) [baseLow, baseHigh] = [(baseLow * baseLow) >> BOUND_BITS, up(baseHigh * baseHigh)];
  }
  const scale0 = 10n ** BigInt(decimals0);
  const scale1 = 10n ** BigInt(decimals1);
  // (1 + binStep / 10,000)^n · 10^(decimals0 − decimals1), n < 0 by the inverse bounds.
  const [a, b] =
    n > 0
      ? [
          ratioValue({ num: low * scale0, den: one * scale1 }),
          ratioValue({ num: high * scale0, den: one * scale1 }),
        ]
      : [
          ratioValue({ num: one * scale0, den: high * scale1 }),
          ratioValue({ num: one * scale0, den: low * scale1 }),
        ];
  return a === b ? a : exact();
}

/**
 * PancakeSwap Infinity Bin pools: liquidity in discrete bins, the active bin's id kept as the
 * state's `tick`; balances tracked from Mint (+ the bins' amounts), Burn (−) and swaps (the
 * swapper's deltas reversed); the price is the active bin's, exact, from the bin step in the
 * pool's `parameters`.
 */
export const pancakeswapInfinityBin: ProtocolFamily<BinEvent> = {
  name: "infinity-bin",
  variants: [{ id: "pancakeswap-infinity-bin", layout: "uniswap", dexName: "PancakeSwap Infinity Bin" }],
  ...managerPools,
  creationTopic: infinityTopics.binInitialize,
  decodeCreation: decodeBinCreation,
  rewritesAmounts: infinityRewritesAmounts,
  poolTopics: () => binEvents.map((name) => infinityTopics[name]),
  swapTopics: [infinityTopics.binSwap],
  decodeLog: (log) => decodeBinLog(log),

  createdState: (block) => stateAt(block, { reserve0: 0n, reserve1: 0n }),

  nextState(before, event, log) {
    const s = stateAfter(before, log);
    switch (event.type) {
      case "bin-initialize":
        s.tick = event.activeId;
        break;
      case "bin-swap":
        moveBalances(s, -event.amount0, -event.amount1);
        s.tick = event.activeId;
        break;
      case "bin-mint":
        moveBalances(s, event.amount0, event.amount1);
        break;
      case "bin-burn":
        moveBalances(s, -event.amount0, -event.amount1);
        break;
    }
    return s;
  },

  record(event): EventRecord {
    switch (event.type) {
      case "bin-swap": {
        const trade = managerTrade(event, { sqrtPriceX96: null, liquidity: null, tick: event.activeId });
        return { role: "swap", joinsPending: false, trade };
      }
      case "bin-initialize":
        return { role: "event", kind: "initialize", fields: {} };
      case "bin-mint":
        return amountsEvent("mint", event);
      case "bin-burn":
        return amountsEvent("burn", event);
    }
  },

  swapPrice(event, _state, decimals0, decimals1, pool) {
    if (event.type !== "bin-swap" || pool.parameters == null) return null;
    return binPriceValue(event.activeId, binStepOf(pool.parameters as Hex), decimals0, decimals1);
  },

  // The pricing state keeps balances and a sqrt price, not the active bin: bin pools do not price
  // tokens (their trades carry the active bin's exact price).
  spotRatio0: () => null,
  shape: infinityBinShape,
};
