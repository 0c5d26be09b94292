// Uniswap V2/V3 price maths for setting up and steering pools, in floating point. Exactness is not
// needed here (the pools do the exact maths); a relative error of 1e-12 is far below a tick.
// "Raw price" is token1 per token0 in the tokens' smallest units, as the pool sees it.

const Q96 = 2 ** 96;
export const MIN_TICK = -887272;
export const MAX_TICK = 887272;

/** Raw pool price (token1 units per token0 unit) of two tokens from their USD prices. */
export function rawPriceFromUsd(
  token0: { priceUsd: number; decimals: number },
  token1: { priceUsd: number; decimals: number },
): number {
  return (token0.priceUsd / token1.priceUsd) * 10 ** (token1.decimals - token0.decimals);
}

/** sqrtPriceX96 of a raw price. */
export function sqrtPriceX96FromPrice(rawPrice: number): bigint {
  if (!(rawPrice > 0) || !Number.isFinite(rawPrice)) throw new RangeError(`invalid raw price ${rawPrice}`);
  return BigInt(Math.round(Math.sqrt(rawPrice) * Q96));
}

/** Raw price of a sqrtPriceX96. */
export function priceFromSqrtPriceX96(sqrtPriceX96: bigint): number {
  const sqrt = Number(sqrtPriceX96) / Q96;
  return sqrt * sqrt;
}

/** The tick whose price is at or below the raw price. */
export function tickFromPrice(rawPrice: number): number {
  return Math.floor(Math.log(rawPrice) / Math.log(1.0001));
}

/** The lowest and highest usable ticks of a tick spacing (a full-range position). */
export function fullRangeTicks(tickSpacing: number): { tickLower: number; tickUpper: number } {
  return {
    tickLower: Math.ceil(MIN_TICK / tickSpacing) * tickSpacing,
    tickUpper: Math.floor(MAX_TICK / tickSpacing) * tickSpacing,
  };
}

/** A range of ±`widthPct` percent around a raw price, widened outwards to the tick spacing. */
export function rangeTicks(
  rawPrice: number,
  widthPct: number,
  tickSpacing: number,
): { tickLower: number; tickUpper: number } {
  const lower = Math.floor(tickFromPrice(rawPrice * (1 - widthPct / 100)) / tickSpacing) * tickSpacing;
  const upper = Math.ceil(tickFromPrice(rawPrice * (1 + widthPct / 100)) / tickSpacing) * tickSpacing;
  const full = fullRangeTicks(tickSpacing);
  return {
    tickLower: Math.max(lower, full.tickLower),
    tickUpper: Math.min(Math.max(upper, lower + tickSpacing), full.tickUpper),
  };
}

/** sqrt of the raw price at a tick (not X96). */
export function sqrtPriceAtTick(tick: number): number {
  return 1.0001 ** (tick / 2);
}

/**
 * Token amounts (raw) of a position of liquidity L between two ticks at the current sqrt price:
 * the standard LiquidityAmounts formulas.
 */
export function amountsForLiquidity(
  liquidity: number,
  sqrtPrice: number,
  tickLower: number,
  tickUpper: number,
): { amount0: number; amount1: number } {
  const sa = sqrtPriceAtTick(tickLower);
  const sb = sqrtPriceAtTick(tickUpper);
  const s = Math.min(Math.max(sqrtPrice, sa), sb);
  return { amount0: (liquidity * (sb - s)) / (s * sb), amount1: liquidity * (s - sa) };
}

/**
 * Raw amounts of a position worth `usd` between two ticks at the current price, the value split
 * as the range requires (a full range holds half of each; a range above the price only token0).
 */
export function amountsForUsd(options: {
  usd: number;
  rawPrice: number;
  tickLower: number;
  tickUpper: number;
  token0: { priceUsd: number; decimals: number };
  token1: { priceUsd: number; decimals: number };
}): { amount0: bigint; amount1: bigint } {
  const { token0, token1 } = options;
  const unit = amountsForLiquidity(1, Math.sqrt(options.rawPrice), options.tickLower, options.tickUpper);
  const usdPerLiquidity =
    (unit.amount0 * token0.priceUsd) / 10 ** token0.decimals +
    (unit.amount1 * token1.priceUsd) / 10 ** token1.decimals;
  const liquidity = options.usd / usdPerLiquidity;
  return {
    amount0: BigInt(Math.floor(unit.amount0 * liquidity)),
    amount1: BigInt(Math.floor(unit.amount1 * liquidity)),
  };
}

/**
 * Raw input amount that moves a pool's price from `rawPrice` to `targetRawPrice` with in-range
 * liquidity L (ignoring the fee and any tick crossed): token0 in lowers the price, token1 in
 * raises it. Used to size the trades that steer pools towards the market price.
 */
export function v3InputToReachPrice(
  liquidity: number,
  rawPrice: number,
  targetRawPrice: number,
): { zeroForOne: boolean; amountIn: number } {
  const s = Math.sqrt(rawPrice);
  const t = Math.sqrt(targetRawPrice);
  if (t < s) return { zeroForOne: true, amountIn: liquidity * (1 / t - 1 / s) };
  return { zeroForOne: false, amountIn: liquidity * (t - s) };
}

/** The same for a V2 pair with reserves r0/r1 (constant product, fee ignored). */
export function v2InputToReachPrice(
  reserve0: number,
  reserve1: number,
  targetRawPrice: number,
): { zeroForOne: boolean; amountIn: number } {
  const k = reserve0 * reserve1;
  // At price p = r1/r0 with r0*r1 = k: r0 = sqrt(k/p), r1 = sqrt(k*p).
  const target0 = Math.sqrt(k / targetRawPrice);
  if (target0 > reserve0) return { zeroForOne: true, amountIn: target0 - reserve0 };
  return { zeroForOne: false, amountIn: Math.sqrt(k * targetRawPrice) - reserve1 };
}
