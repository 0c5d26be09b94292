import { ratioFromSqrtPriceX96 } from "../decode/price.js";
import type { Hex, PoolCreation, RawLog } from "../decode/types.js";
import { uintAt, wordCount } from "../decode/words.js";
import { type Ratio, toUnits } from "../exact/ratio.js";
import type { PoolEventKind, PoolPriceState, PoolState } from "../model/index.js";
import type { CallRequest, EventRecord, SwapTrade } from "./types.js";

/**
 * Depth of one side from the pool's balances, decimal-adjusted: the smaller of its balance now
 * and just before the first swap of the pool's latest block with swaps, so that no trade (nor
 * block of trades) lifts a thin pool over the liquidity floor by itself. Null when unknown.
 */
export function balanceDepth(state: PoolPriceState, side: 0 | 1, decimals: number): number | null {
  const now = side === 0 ? state.reserve0 : state.reserve1;
  if (now === null) return null;
  const before = side === 0 ? state.preSwapReserve0 : state.preSwapReserve1;
  const swapped = state.swapBlock !== null;
  if (swapped && before === null) return null;
  const depth = swapped && before !== null && before < now ? before : now;
  return toUnits(depth, decimals);
}

/** The i-th word of an eth_call's answer; null when the call failed or answered less. */
export const answerWord = (data: Hex | null | undefined, i: number): bigint | null =>
  data && wordCount(data) > i ? uintAt(data, i) : null;

/** A pool's state at `block` (no event yet: a null logIndex): the given fields, the others unknown. */
export function stateAt(
  block: number,
  known: Partial<Omit<PoolState, "block" | "logIndex">> = {},
): PoolState {
  return {
    reserve0: null,
    reserve1: null,
    sqrtPriceX96: null,
    liquidity: null,
    tick: null,
    ...known,
    block,
    logIndex: null,
  };
}

/** A copy of the state before an event, at the event's position: the family's nextState changes it from there. */
export function stateAfter(before: PoolState, log: { blockNumber: number; logIndex: number }): PoolState {
  return {
    reserve0: before.reserve0,
    reserve1: before.reserve1,
    sqrtPriceX96: before.sqrtPriceX96,
    liquidity: before.liquidity,
    tick: before.tick,
    block: log.blockNumber,
    logIndex: log.logIndex,
  };
}

/** a + b, where an unknown a stays unknown. */
export const addKnown = (a: bigint | null, b: bigint): bigint | null => (a === null ? null : a + b);

/**
 * A swap as a trade, from the pool's signed balance changes (positive: paid into the pool; V3's
 * sign, the negated deltas of a V4 or Infinity swapper).
 */
export function signedTrade(swap: {
  sender: Hex;
  recipient: Hex;
  into0: bigint;
  into1: bigint;
  sqrtPriceX96: bigint | null;
  liquidity: bigint | null;
  tick: number;
}): SwapTrade {
  return {
    sender: swap.sender,
    recipient: swap.recipient,
    amount0In: swap.into0 > 0n ? swap.into0 : 0n,
    amount1In: swap.into1 > 0n ? swap.into1 : 0n,
    amount0Out: swap.into0 < 0n ? -swap.into0 : 0n,
    amount1Out: swap.into1 < 0n ? -swap.into1 : 0n,
    sqrtPriceX96: swap.sqrtPriceX96,
    liquidity: swap.liquidity,
    tick: swap.tick,
  };
}

/** The spot price of token0 in token1 from a concentrated-liquidity pool's sqrtPriceX96; null before it has one. */
export function sqrtPriceSpot(state: PoolPriceState, decimals0: number, decimals1: number): Ratio | null {
  if (state.sqrtPriceX96 === null || state.sqrtPriceX96 === 0n) return null;
  return ratioFromSqrtPriceX96(state.sqrtPriceX96, decimals0, decimals1);
}

/** The pool's balances moved by (d0, d1): paid in positive, out negative; unknown ones stay unknown. */
export function moveBalances(s: PoolState, d0: bigint, d1: bigint): void {
  s.reserve0 = addKnown(s.reserve0, d0);
  s.reserve1 = addKnown(s.reserve1, d1);
}

/** A concentrated-liquidity pool at its creation: empty balances, no liquidity, no price yet. */
export const concentratedCreatedState = (block: number): PoolState =>
  stateAt(block, { reserve0: 0n, reserve1: 0n, liquidity: 0n });

/** The price and tick a concentrated-liquidity pool's Initialize sets. */
export function setInitialPrice(s: PoolState, init: { sqrtPriceX96: bigint; tick: number }): void {
  s.sqrtPriceX96 = init.sqrtPriceX96;
  s.tick = init.tick;
}

/** The price, active liquidity and tick a concentrated-liquidity swap leaves (its event's fields). */
export function setSwapPrice(
  s: PoolState,
  swap: { sqrtPriceX96: bigint; liquidity: bigint; tick: number },
): void {
  s.sqrtPriceX96 = swap.sqrtPriceX96;
  s.liquidity = swap.liquidity;
  s.tick = swap.tick;
}

/**
 * Active liquidity after a position's liquidity changes by `delta` over [tickLower, tickUpper):
 * it moves when the range holds the current tick, and is unknown while the tick is.
 */
export function moveActiveLiquidity(
  s: PoolState,
  position: { tickLower: number; tickUpper: number },
  delta: bigint,
): void {
  if (s.tick === null) s.liquidity = null;
  else if (position.tickLower <= s.tick && s.tick < position.tickUpper)
    s.liquidity = addKnown(s.liquidity, delta);
}

/** A pool event that moves two amounts (a V2 Mint, a V4 Donate, …) as its record. */
export const amountsEvent = (
  kind: PoolEventKind,
  event: { amount0: bigint; amount1: bigint },
): EventRecord => ({
  role: "event",
  kind,
  fields: { amount0: event.amount0, amount1: event.amount1 },
});

/**
 * A concentrated-liquidity position's change as its record: the amounts it moved (when known),
 * the liquidity it added or removed (none for a Collect) and its range.
 */
export function positionEvent(
  kind: PoolEventKind,
  amounts: { amount0: bigint; amount1: bigint } | null,
  position: { tickLower: number; tickUpper: number },
  liquidityDelta?: bigint,
): EventRecord {
  return {
    role: "event",
    kind,
    fields: {
      ...(amounts && { amount0: amounts.amount0, amount1: amounts.amount1 }),
      ...(liquidityDelta === undefined ? {} : { liquidityDelta }),
      tickLower: position.tickLower,
      tickUpper: position.tickUpper,
    },
  };
}

/** A factory's creation log as a new pool with the given fields. */
export const creationAt = (
  log: Pick<RawLog, "address" | "blockNumber" | "logIndex">,
  fields: Omit<PoolCreation, "factory" | "blockNumber" | "logIndex">,
): PoolCreation => ({
  factory: log.address,
  ...fields,
  blockNumber: log.blockNumber,
  logIndex: log.logIndex,
});

/**
 * A pool manager's Initialize as a new pool: the pool is its 32-byte id, the manager its
 * factory, its currencies the tokens (the native coin is address zero).
 */
export function managerCreation(
  log: Pick<RawLog, "address" | "blockNumber" | "logIndex">,
  init: { id: Hex; currency0: Hex; currency1: Hex; fee: number; hooks: Hex },
  traits: { tickSpacing: number | null; parameters?: Hex | null },
): PoolCreation {
  return creationAt(log, {
    pool: init.id,
    token0: init.currency0,
    token1: init.currency1,
    fee: init.fee,
    hooks: init.hooks,
    ...traits,
  });
}

/**
 * A pool manager's swap as a trade: its amounts are the swapper's deltas (negative: paid into
 * the pool), and it names no recipient: the tokens settle with the caller.
 */
export const managerTrade = (
  swap: { sender: Hex; amount0: bigint; amount1: bigint },
  price: { sqrtPriceX96: bigint | null; liquidity: bigint | null; tick: number },
): SwapTrade =>
  signedTrade({
    ...price,
    sender: swap.sender,
    recipient: swap.sender,
    into0: -swap.amount0,
    into1: -swap.amount1,
  });

/**
 * What every family of pools inside a manager (Uniswap V4, PancakeSwap Infinity) shares: its
 * pools' events come from the manager, and the manager (or its vault) holds every pool's tokens
 * together, so a pool's balances before the indexed range cannot be read from the chain: they
 * stay unknown (its price comes with its first swap), and are tracked from its own events.
 */
export const managerPools = {
  poolsInFactory: true,
  baseStateCalls: (): CallRequest[] => [],
  baseState: (_answers: readonly (Hex | null)[], block: number): PoolState => stateAt(block),
  depth: balanceDepth,
} as const;
