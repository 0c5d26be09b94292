/**
 * What a DEX family writes on the mainnet-shaped synthetic chain (src/shape): the logs of a pool's
 * creation, swaps and liquidity changes, exactly as its contracts emit them, and the answers of its
 * pool contract's view functions. Each family implements `ShapeGenerator` in its own folder
 * (`src/protocols/<family>/shape.ts`); the chain asks the pool's family through the registry.
 *
 * Also the exact arithmetic the generators share: TickMath and SqrtPriceMath are the pipeline's
 * own (./tick-math.ts), so that the decoders read back what was generated with the same maths.
 */
import { keccak256 } from "viem";
import type { Hex, SwapEventLayout } from "../decode/types.js";
import { amount0Delta, amount1Delta, divUp, MAX_TICK, MIN_TICK, sqrtPriceAtTick } from "./tick-math.js";

/** A log as the synthetic node serves it. */
export type ShapeLog = { address: Hex; topics: Hex[]; data: Hex };

/**
 * A synthetic pool's changing state. r0/r1: what the pool holds of each token (a V2 pair's
 * reserves, a V3 pool's balances, a managed pool's share of its manager's tokens); a
 * concentrated-liquidity pool's price, tick and its one full-range position's liquidity; a Bin
 * pool's active bin id in `tick`.
 */
export type ShapePoolState = {
  r0: bigint;
  r1: bigint;
  sqrtPriceX96: bigint;
  liquidity: bigint;
  tick: number;
};

/** What a generator knows of a pool beyond its state. */
export type ShapePool = {
  /** The pool's index on the chain (V2's PairCreated counts the pools with it). */
  index: number;
  /** Its contract address, or its 32-byte PoolId inside a manager. */
  id: Hex;
  token0: Hex;
  token1: Hex;
  /** Hundredths of a bip. */
  fee: number;
  /** Tick spacing of a concentrated-liquidity pool, bin step of a Bin pool (0 for a V2 pair). */
  spacing: number;
  tickLower: number;
  tickUpper: number;
  /** The factory, or the manager that holds the pool. */
  factory: Hex;
  /** The hook of a pool inside a manager (see `ShapePoolKey`). */
  hooks: Hex;
  /** What holds the pool's tokens (Transfers go to and from it): the pool, its manager or vault. */
  holder: Hex;
  layout: SwapEventLayout;
};

/** Who sends a transaction: the trader, through the DEX's router (the events' `sender`). */
export type ShapeActor = { trader: Hex; router: Hex };

/**
 * A pool's key, from which a manager's PoolId is derived. `hooks`: the zero address, or a hook
 * with the beforeSwap and afterSwap permissions only (low bits 0x00c0), which tells apart pools
 * of the same currencies, fee and spacing.
 */
export type ShapePoolKey = Pick<ShapePool, "token0" | "token1" | "fee" | "spacing" | "hooks"> & {
  manager: Hex;
};

/** The low 16 bits of a hook with the beforeSwap (bit 7) and afterSwap (bit 6) permissions only. */
export const SWAP_HOOK_FLAGS = 0xc0;

/** A family's generation on the synthetic chain. */
export interface ShapeGenerator {
  /** Gas of a creation, a swap and a liquidity change (a varying part is added to each). */
  readonly gas: { readonly create: number; readonly swap: number; readonly liquidity: number };
  /** A pool inside a manager: its PoolId (keccak256 of its key, as the manager derives it). */
  poolId?(key: ShapePoolKey): Hex;
  /** The state after the creation transaction of a pool meant to hold about r0/r1, and its position's range. */
  initial(
    r0: bigint,
    r1: bigint,
    spacing: number,
  ): { state: ShapePoolState; tickLower: number; tickUpper: number };
  /** The creation transaction's logs (the state is the initial one). */
  create(pool: ShapePool, state: ShapePoolState, actor: ShapeActor): ShapeLog[];
  /** An exact-input swap of `amountIn` (fee included); updates the state, returns the logs. */
  swap(
    pool: ShapePool,
    state: ShapePoolState,
    zeroForOne: boolean,
    amountIn: bigint,
    actor: ShapeActor,
  ): ShapeLog[];
  /** Adds (or removes) `ppm` millionths of the pool's liquidity; updates the state, returns the logs. */
  liquidity(
    pool: ShapePool,
    state: ShapePoolState,
    ppm: bigint,
    remove: boolean,
    actor: ShapeActor,
  ): ShapeLog[];
  /** The price of token0 in token1 relative to the initial one (the trading leans against it). */
  drift(state: ShapePoolState, initial: ShapePoolState): number;
  /** Whether liquidity may be removed (the pool keeps at least half its initial depth). */
  canRemove(state: ShapePoolState, initial: ShapePoolState): boolean;
  /**
   * The pool contract's answer to a view function (`selector`) beyond token0/token1/factory, ABI
   * encoded; null when the pool has no such function (the call reverts).
   */
  call(selector: string, pool: ShapePool, state: ShapePoolState, timestamp: number): string | null;
}

// ---- ABI words ----

const TWO_256 = 1n << 256n;
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef" as Hex;

/** A 32-byte ABI word: uint, or int in two's complement. */
export function word(value: bigint | number): string {
  let v = BigInt(value);
  if (v < 0n) v += TWO_256;
  return v.toString(16).padStart(64, "0");
}
/** An address as an ABI word. */
export const addrWord = (address: string): string => `000000000000000000000000${address.slice(2)}`;
/** A word as a topic. */
export const topicOf = (w: string): Hex => `0x${w}` as Hex;
/** ABI data of words. */
export const dataOf = (...words: string[]): Hex => `0x${words.join("")}` as Hex;
/** An address as a topic. */
export const addressTopic = (address: string): Hex => topicOf(addrWord(address));

/** An ERC-20 Transfer of `amount` of the pool's token (side 0 or 1). */
export function transferLog(pool: ShapePool, side: 0 | 1, from: Hex, to: Hex, amount: bigint): ShapeLog {
  return {
    address: side === 0 ? pool.token0 : pool.token1,
    topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to)],
    data: dataOf(word(amount)),
  };
}

/** A swap's effect on a pool's balances: `amountIn` of one side in, `out` of the other out. */
export function settleSwap(s: ShapePoolState, zeroForOne: boolean, amountIn: bigint, out: bigint): void {
  if (zeroForOne) {
    s.r0 += amountIn;
    s.r1 -= out;
  } else {
    s.r1 += amountIn;
    s.r0 -= out;
  }
}

/** keccak256 of ABI words (a PoolId from its key's words). */
export const hashWords = (...words: string[]): Hex => keccak256(`0x${words.join("")}` as Hex);

// ---- exact arithmetic ----

export const MIN_SQRT_RATIO = 4295128739n;
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;

/**
 * TickMath.getTickAtSqrtRatio: the greatest tick whose sqrt ratio is ≤ sqrtPriceX96, that is
 * floor(log_1.0001(price)). A float estimate, then corrected exactly against sqrtPriceAtTick.
 */
export function tickAtSqrtRatio(sqrtPriceX96: bigint): number {
  if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 >= MAX_SQRT_RATIO)
    throw new RangeError(`sqrtPriceX96 ${sqrtPriceX96} out of range`);
  const price = (Number(sqrtPriceX96) / 2 ** 96) ** 2;
  let tick = Math.max(MIN_TICK, Math.min(MAX_TICK - 1, Math.floor(Math.log(price) / Math.log(1.0001))));
  while (tick > MIN_TICK && sqrtPriceAtTick(tick) > sqrtPriceX96) tick--;
  while (tick < MAX_TICK - 1 && sqrtPriceAtTick(tick + 1) <= sqrtPriceX96) tick++;
  return tick;
}

/** The widest ticks a position may use at this spacing (what a "full range" position uses). */
export function fullRangeTicks(tickSpacing: number): { tickLower: number; tickUpper: number } {
  return {
    tickLower: Math.ceil(MIN_TICK / tickSpacing) * tickSpacing,
    tickUpper: Math.floor(MAX_TICK / tickSpacing) * tickSpacing,
  };
}

/**
 * An exact-input swap that stays inside one liquidity range (the synthetic pools hold one
 * full-range position, so liquidity is constant between liquidity changes), as v3-core's and
 * v4-core's SwapMath compute it. `amountIn` includes the fee (`fee` in hundredths of a bip).
 * Returns the pool's signed amounts (positive = paid into the pool) and the new price and tick.
 */
export function clSwapExactIn(args: {
  sqrtPriceX96: bigint;
  liquidity: bigint;
  fee: number;
  zeroForOne: boolean;
  amountIn: bigint;
}): { amount0: bigint; amount1: bigint; sqrtPriceX96: bigint; tick: number } {
  const { sqrtPriceX96: price, liquidity, amountIn } = args;
  const lessFee = (amountIn * BigInt(1_000_000 - args.fee)) / 1_000_000n;
  if (args.zeroForOne) {
    // getNextSqrtPriceFromAmount0RoundingUp (add): L·Q96·√P / (L·Q96 + amount·√P), rounded up.
    const numerator1 = liquidity << 96n;
    const next = divUp(numerator1 * price, numerator1 + lessFee * price);
    const out = amount1Delta(next, price, liquidity, false);
    return { amount0: amountIn, amount1: -out, sqrtPriceX96: next, tick: tickAtSqrtRatio(next) };
  }
  // getNextSqrtPriceFromAmount1RoundingDown (add): √P + amount·Q96 / L.
  const next = price + (lessFee << 96n) / liquidity;
  const out = amount0Delta(price, next, liquidity, false);
  return { amount0: -out, amount1: amountIn, sqrtPriceX96: next, tick: tickAtSqrtRatio(next) };
}

/** floor(√n) by Newton's method. */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError("square root of a negative number");
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  if (x === 0n) x = 1n;
  for (;;) {
    const y = (x + n / x) >> 1n;
    if ((y > x ? y - x : x - y) <= 1n) {
      // Settle on the floor: Newton may stop one above or below it.
      while (x * x > n) x--;
      while ((x + 1n) * (x + 1n) <= n) x++;
      return x;
    }
    x = y;
  }
}

/** The sqrt price of r1/r0 (raw), within the range TickMath allows. */
export function sqrtPriceOf(r0: bigint, r1: bigint): bigint {
  const sqrtPriceX96 = isqrt((r1 << 192n) / r0);
  if (sqrtPriceX96 <= MIN_SQRT_RATIO) return MIN_SQRT_RATIO + 1n;
  if (sqrtPriceX96 >= MAX_SQRT_RATIO) return MAX_SQRT_RATIO - 1n;
  return sqrtPriceX96;
}
