import type { Hex, PoolCreation, RawLog } from "../../decode/types.js";
import { addressAt, intAt, topicAddress, uintAt, wordCount } from "../../decode/words.js";
import type { Ratio } from "../../exact/ratio.js";
import { ratioValue } from "../../exact/ratio.js";
import type { PoolState } from "../../model/index.js";
import { balanceDepth } from "../shared.js";
import type { EventRecord, LogLike, PoolTraits, ProtocolFamily } from "../types.js";
import { decodeV4Log, uniswapV4, type V4Event } from "../uniswap-v4/index.js";
import { INFINITY_SWAP_RETURNS_DELTA, infinityTopics } from "./abi.js";
import { infinityBinShape, infinityClShape } from "./shape.js";

const poolIdOf = (topic: string): Hex => topic.toLowerCase() as Hex;
const word = (data: string, i: number): Hex => `0x${data.slice(2 + i * 64, 2 + (i + 1) * 64)}` as Hex;

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

/**
 * Decodes a CLPoolManager log into the Uniswap V4 events it corresponds to (its Initialize
 * carries `parameters` instead of the tick spacing, its Swap a protocol fee, its Donate the
 * tick); ModifyLiquidity has V4's signature.
 */
export function decodeClLog(log: LogLike): (V4Event & { parameters?: Hex }) | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  switch (t[0]) {
    case infinityTopics.clInitialize: {
      if (t.length !== 4 || words !== 5) return null;
      const parameters = word(data, 2);
      return {
        type: "v4-initialize",
        id: poolIdOf(t[1] as string),
        currency0: topicAddress(t[2] as string),
        currency1: topicAddress(t[3] as string),
        hooks: addressAt(data, 0),
        fee: Number(uintAt(data, 1)),
        tickSpacing: clTickSpacing(parameters),
        parameters,
        sqrtPriceX96: uintAt(data, 3),
        tick: Number(intAt(data, 4)),
      };
    }
    case infinityTopics.clSwap:
      if (t.length !== 3 || words !== 7) return null;
      return {
        type: "v4-swap",
        id: poolIdOf(t[1] as string),
        sender: topicAddress(t[2] as string),
        amount0: intAt(data, 0),
        amount1: intAt(data, 1),
        sqrtPriceX96: uintAt(data, 2),
        liquidity: uintAt(data, 3),
        tick: Number(intAt(data, 4)),
        fee: Number(uintAt(data, 5)),
      };
    case infinityTopics.clDonate:
      if (t.length !== 3 || words !== 3) return null;
      return {
        type: "v4-donate",
        id: poolIdOf(t[1] as string),
        sender: topicAddress(t[2] as string),
        amount0: uintAt(data, 0),
        amount1: uintAt(data, 1),
      };
    case infinityTopics.clModifyLiquidity:
      return decodeV4Log(log);
    default:
      return null;
  }
}

/** A CLPoolManager's Initialize as a new pool (its PoolId, the manager as factory, `parameters` kept). */
export function decodeClCreation(log: RawLog): PoolCreation | null {
  const event = decodeClLog(log);
  if (event?.type !== "v4-initialize") return null;
  return {
    factory: log.address,
    pool: event.id,
    token0: event.currency0,
    token1: event.currency1,
    fee: event.fee,
    tickSpacing: event.tickSpacing,
    hooks: event.hooks,
    parameters: event.parameters ?? null,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
  };
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
  poolTopics: () => [
    infinityTopics.clInitialize,
    infinityTopics.clSwap,
    infinityTopics.clModifyLiquidity,
    infinityTopics.clDonate,
  ],
  swapTopics: [infinityTopics.clSwap],
  decodeLog: (log) => decodeClLog(log),
  rewritesAmounts: infinityRewritesAmounts,
  shape: infinityClShape,
};

/** A decoded BinPoolManager event; amounts raw, `ids` the bins, their amounts per bin unpacked. */
export type BinEvent =
  | {
      type: "bin-initialize";
      id: Hex;
      currency0: Hex;
      currency1: Hex;
      hooks: Hex;
      fee: number;
      parameters: Hex;
      activeId: number;
    }
  | {
      type: "bin-swap";
      id: Hex;
      sender: Hex;
      /** The swapper's balance deltas, as CL's: negative = paid into the pool. */
      amount0: bigint;
      amount1: bigint;
      activeId: number;
      fee: number;
      protocolFee: number;
    }
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

/** Decodes a BinPoolManager's Initialize, Swap, Mint or Burn. */
export function decodeBinLog(log: LogLike): BinEvent | null {
  const { topics: t, data } = log;
  const words = wordCount(data);
  switch (t[0]) {
    case infinityTopics.binInitialize:
      if (t.length !== 4 || words !== 4) return null;
      return {
        type: "bin-initialize",
        id: poolIdOf(t[1] as string),
        currency0: topicAddress(t[2] as string),
        currency1: topicAddress(t[3] as string),
        hooks: addressAt(data, 0),
        fee: Number(uintAt(data, 1)),
        parameters: word(data, 2),
        activeId: Number(uintAt(data, 3)),
      };
    case infinityTopics.binSwap:
      if (t.length !== 3 || words !== 5) return null;
      return {
        type: "bin-swap",
        id: poolIdOf(t[1] as string),
        sender: topicAddress(t[2] as string),
        amount0: intAt(data, 0),
        amount1: intAt(data, 1),
        activeId: Number(uintAt(data, 2)),
        fee: Number(uintAt(data, 3)),
        protocolFee: Number(uintAt(data, 4)),
      };
    case infinityTopics.binMint:
    case infinityTopics.binBurn: {
      const mint = t[0] === infinityTopics.binMint;
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
        id: poolIdOf(t[1] as string),
        sender: topicAddress(t[2] as string),
        bins: ids.map(Number),
        amount0,
        amount1,
      };
    }
    default:
      return null;
  }
}

/** A BinPoolManager's Initialize as a new pool. */
export function decodeBinCreation(log: RawLog): PoolCreation | null {
  const event = decodeBinLog(log);
  if (event?.type !== "bin-initialize") return null;
  return {
    factory: log.address,
    pool: event.id,
    token0: event.currency0,
    token1: event.currency1,
    fee: event.fee,
    tickSpacing: null,
    hooks: event.hooks,
    parameters: event.parameters,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
  };
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

const add = (a: bigint | null, b: bigint): bigint | null => (a === null ? null : a + b);

/**
 * PancakeSwap Infinity Bin pools: liquidity in discrete bins, the active bin's id kept as the
 * state's `tick`; balances tracked from Mint (+ the bins' amounts), Burn (−) and swaps (the
 * swapper's deltas reversed); the price is the active bin's, exact, from the bin step in the
 * pool's `parameters`.
 */
export const pancakeswapInfinityBin: ProtocolFamily<BinEvent> = {
  name: "infinity-bin",
  variants: [{ id: "pancakeswap-infinity-bin", layout: "uniswap", dexName: "PancakeSwap Infinity Bin" }],
  creationTopic: infinityTopics.binInitialize,
  poolsInFactory: true,
  decodeCreation: decodeBinCreation,
  rewritesAmounts: infinityRewritesAmounts,
  poolTopics: () => [
    infinityTopics.binInitialize,
    infinityTopics.binSwap,
    infinityTopics.binMint,
    infinityTopics.binBurn,
  ],
  swapTopics: [infinityTopics.binSwap],
  decodeLog: (log) => decodeBinLog(log),

  createdState: (block) => ({
    reserve0: 0n,
    reserve1: 0n,
    sqrtPriceX96: null,
    liquidity: null,
    tick: null,
    block,
    logIndex: null,
  }),

  nextState(before, event, log) {
    const s: PoolState = { ...before, block: log.blockNumber, logIndex: log.logIndex };
    switch (event.type) {
      case "bin-initialize":
        s.tick = event.activeId;
        break;
      case "bin-swap":
        s.reserve0 = add(s.reserve0, -event.amount0);
        s.reserve1 = add(s.reserve1, -event.amount1);
        s.tick = event.activeId;
        break;
      case "bin-mint":
        s.reserve0 = add(s.reserve0, event.amount0);
        s.reserve1 = add(s.reserve1, event.amount1);
        break;
      case "bin-burn":
        s.reserve0 = add(s.reserve0, -event.amount0);
        s.reserve1 = add(s.reserve1, -event.amount1);
        break;
    }
    return s;
  },

  record(event): EventRecord {
    switch (event.type) {
      case "bin-swap":
        return {
          role: "swap",
          joinsPending: false,
          trade: {
            sender: event.sender,
            recipient: event.sender,
            amount0In: event.amount0 < 0n ? -event.amount0 : 0n,
            amount1In: event.amount1 < 0n ? -event.amount1 : 0n,
            amount0Out: event.amount0 > 0n ? event.amount0 : 0n,
            amount1Out: event.amount1 > 0n ? event.amount1 : 0n,
            sqrtPriceX96: null,
            liquidity: null,
            tick: event.activeId,
          },
        };
      case "bin-initialize":
        return { role: "event", kind: "initialize", fields: {} };
      case "bin-mint":
        return { role: "event", kind: "mint", fields: { amount0: event.amount0, amount1: event.amount1 } };
      case "bin-burn":
        return { role: "event", kind: "burn", fields: { amount0: event.amount0, amount1: event.amount1 } };
    }
  },

  swapPrice(event, _state, decimals0, decimals1, pool) {
    if (event.type !== "bin-swap" || pool.parameters == null) return null;
    return binPriceValue(event.activeId, binStepOf(pool.parameters as Hex), decimals0, decimals1);
  },

  // The Vault holds every pool's tokens: balances before the indexed range stay unknown.
  baseStateCalls: () => [],
  baseState: (_answers, block) => ({
    reserve0: null,
    reserve1: null,
    sqrtPriceX96: null,
    liquidity: null,
    tick: null,
    block,
    logIndex: null,
  }),

  // The pricing state keeps balances and a sqrt price, not the active bin: bin pools do not price
  // tokens (their trades carry the active bin's exact price).
  spotRatio0: () => null,
  depth: balanceDepth,
  shape: infinityBinShape,
};
