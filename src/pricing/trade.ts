import { type Ratio, ratioInverse, ratioValue, toUnits } from "../exact/ratio.js";
import type { ExactDecimal } from "../internal/exact-decimal.js";
import type { SwapAmounts } from "../model/index.js";

/**
 * A swap seen as a trade of token0 against token1, decimal-adjusted. The one definition of what a
 * trade is and what it costs: candles, `/api/v1/trades`, the USD series and the explorer all read
 * their prices from here.
 */
export type Trade = {
  /** Exact execution price of token0 in token1: |net amount1|·10^d0 / (|net amount0|·10^d1). */
  ratio: Ratio;
  /** `ratio` correctly rounded: the price of token0 in token1. */
  price: number;
  /** The exact reciprocal of `ratio` correctly rounded (not 1 / price): token1 in token0. */
  price1: number;
  /** |net amount0|, decimal-adjusted, correctly rounded. */
  volume0: number;
  volume1: number;
  /** |net amount0| / 10^d0 and |net amount1| / 10^d1 exactly (candle volumes sum these). */
  exact0: ExactDecimal;
  exact1: ExactDecimal;
  /** token0 left the pool: the trader bought token0. */
  buy0: boolean;
};

/** Multiplier of the block number in a trade's ordering key (log indexes stay below it). */
export const KEY_BLOCK_FACTOR = 100_000;

/** The ordering key of an event: block * 100000 + log index (exact below 2^53). */
export function eventKey(blockNumber: number, logIndex: number): number {
  return blockNumber * KEY_BLOCK_FACTOR + logIndex;
}

/** The largest key an event of `blockNumber` can have. */
export function lastKeyOfBlock(blockNumber: number): number {
  return blockNumber * KEY_BLOCK_FACTOR + (KEY_BLOCK_FACTOR - 1);
}

/**
 * The trade of a swap, or null when it has no price: one side's net amount is zero, or both
 * net amounts flow the same way (a donation, not a trade).
 */
export function tradeOf(amounts: SwapAmounts, decimals0: number, decimals1: number): Trade | null {
  const net0 = amounts.amount0In - amounts.amount0Out;
  const net1 = amounts.amount1In - amounts.amount1Out;
  if (net0 === 0n || net1 === 0n) return null;
  if (net0 > 0n === net1 > 0n) return null;
  const abs0 = net0 < 0n ? -net0 : net0;
  const abs1 = net1 < 0n ? -net1 : net1;
  const ratio: Ratio = { num: abs1 * 10n ** BigInt(decimals0), den: abs0 * 10n ** BigInt(decimals1) };
  return {
    ratio,
    price: ratioValue(ratio),
    price1: ratioValue(ratioInverse(ratio)),
    volume0: toUnits(abs0, decimals0),
    volume1: toUnits(abs1, decimals1),
    exact0: { digits: abs0, scale: decimals0 },
    exact1: { digits: abs1, scale: decimals1 },
    buy0: net0 < 0n,
  };
}

/**
 * Whether a trade sold the asset (paid it into the pool) rather than bought it (took it out), from
 * the net amounts (in − out) of the asset and of the other token: the side of `/api/v1/trades`.
 * A trade with no net amount of the asset is a sell when the other token left the pool.
 */
export function assetSold(assetNet: bigint, otherNet: bigint): boolean {
  return assetNet > 0n || (assetNet === 0n && otherNet < 0n);
}

/** The exact price of one side's token in the other's: side 0 token0 in token1, side 1 the reciprocal. */
export function sideRatio(trade: Trade, side: 0 | 1): Ratio {
  return side === 0 ? trade.ratio : ratioInverse(trade.ratio);
}

/** The price of one side's token in the other's, correctly rounded. */
export function sidePrice(trade: Trade, side: 0 | 1): number {
  return side === 0 ? trade.price : trade.price1;
}

/**
 * The amounts a swap moved on each side exactly, |net raw amount| / 10^decimals; a side whose
 * decimals are unknown is null (the other can still value the trade).
 */
export function sideAmounts(
  amounts: SwapAmounts,
  decimals0: number | null,
  decimals1: number | null,
): { exact0: ExactDecimal | null; exact1: ExactDecimal | null } {
  const abs = (v: bigint) => (v < 0n ? -v : v);
  return {
    exact0:
      decimals0 === null ? null : { digits: abs(amounts.amount0In - amounts.amount0Out), scale: decimals0 },
    exact1:
      decimals1 === null ? null : { digits: abs(amounts.amount1In - amounts.amount1Out), scale: decimals1 },
  };
}

/**
 * A pool's balance just before a swap, from the balance after it: after − in + out (V2 `Sync`
 * reserves and V3 tracked balances both move by exactly the swap's amounts). Null when unknown.
 */
export function balanceBeforeSwap(after: bigint | null, amountIn: bigint, amountOut: bigint): bigint | null {
  if (after === null) return null;
  const before = after - amountIn + amountOut;
  return before < 0n ? 0n : before;
}
