/** Plain types of the pricing state: what the pricing stage keeps per pool and reads back from the store. */
import type { PoolInfo } from "./pools.js";

/** Raw amounts of a swap from the pool's point of view (in = paid into the pool). */
export type SwapAmounts = {
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
};

/** The USD figures of one swap (null: no price), as the pricing makes them and the swaps table stores them. */
export type SwapUsd = {
  /** The robust USD prices of both tokens as of the trade's block (not the trade's own price). */
  token0Usd: number | null;
  token1Usd: number | null;
  /**
   * The trade's USD value from its more trustworthy priced side: that side's exact amount times
   * its token's exact USD price, rounded once; null when neither is priced.
   */
  volumeUsd: number | null;
  /**
   * Token0's USD price (`token0Usd`) when the trade enters token0's USD series; null when it does
   * not. The series records the token's price at its trades, never a trade's own execution price.
   */
  series0Usd: number | null;
  series1Usd: number | null;
};

/**
 * What the pricing keeps of a pool's state (table pool_price_state): the balances and price
 * after its latest event, and the balances just before the first swap of its latest block with
 * swaps (for the depth).
 */
export type PoolPriceState = {
  reserve0: bigint | null;
  reserve1: bigint | null;
  /** V3: after the latest event; null for V2 or while unknown. */
  sqrtPriceX96: bigint | null;
  /** The pool's latest block with a swap. */
  swapBlock: number | null;
  preSwapReserve0: bigint | null;
  preSwapReserve1: bigint | null;
  stateBlock: number | null;
  stateLogIndex: number | null;
  /** ms */
  stateTime: number | null;
};

/** An event's position and the pool's state after it (as stored on swaps and pool_events). */
export type StateEvent = {
  blockNumber: number;
  logIndex: number;
  /** ms */
  time: number;
  reserve0: bigint | null;
  reserve1: bigint | null;
  sqrtPriceX96: bigint | null;
};

/**
 * A pool with its pricing state (mutated as events are applied): what the pricing needs of a
 * pool's facts (its family, tokens, hooks and parameters), and the state it keeps instead of the
 * indexer's.
 */
export type MarketPool = Pick<
  PoolInfo,
  "address" | "dex" | "protocol" | "token0" | "token1" | "hooks" | "parameters"
> & {
  state: PoolPriceState;
};

/** A swap (with its amounts) or another pool event, with the pool's state after it. */
export type MarketEvent = StateEvent & { pool: string; swap: SwapAmounts | null };
