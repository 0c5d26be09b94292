/** 24-hour statistics: the window and the figures made from its candles. */
import {
  type Ratio,
  ratio,
  ratioInverse,
  ratioMul,
  ratioOfNumber,
  ratioSum,
  ratioValue,
} from "../exact/ratio.js";
import { type ExactDecimal, powerOf10 } from "../internal/exact-decimal.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;

/**
 * The 24-hour window at `now` (ms), minute-grained: the 1,440 one-minute buckets ending with the
 * current one. Summed from 1-minute candles at both ends and 1-hour candles in between:
 * minutes in [start, fullHoursFrom), hours in [fullHoursFrom, fullHoursTo), minutes from fullHoursTo.
 */
export type StatsWindow = { start: number; fullHoursFrom: number; fullHoursTo: number };

export function statsWindow(now: number): StatsWindow {
  const start = Math.floor(now / MINUTE) * MINUTE - 1439 * MINUTE;
  const fullHoursFrom = Math.ceil(start / HOUR) * HOUR;
  const fullHoursTo = Math.max(fullHoursFrom, Math.floor(now / HOUR) * HOUR);
  return { start, fullHoursFrom, fullHoursTo };
}

/** Percentage change from `from` to `to` (5.2 = +5.2 %); null when either is unknown. */
export function percentChange(from: number | null, to: number | null): number | null {
  if (from === null || to === null || !(from > 0) || !Number.isFinite(to)) return null;
  return (to / from - 1) * 100;
}

/**
 * USD value of both reserves of a pool, exactly, rounded once: Σ raw / 10^decimals × the token's
 * stored USD price (the double taken as the exact value it denotes). A side whose token has no USD
 * price is valued at the pool's exact spot price in the other token; null when neither token is
 * priced or reserves are unknown.
 */
export function pairLiquidityUsd(input: {
  /** Raw balances and decimals (null: unknown). */
  reserve0: ExactDecimal | null;
  reserve1: ExactDecimal | null;
  /** Exact spot price of token0 in token1. */
  ratio0: Ratio | null;
  /** The tokens' stored USD prices as exact ratios (`usdRatioOf`). */
  usd0: Ratio | null;
  usd1: Ratio | null;
}): number | null {
  const { reserve0, reserve1, ratio0, usd0: given0, usd1: given1 } = input;
  if (reserve0 === null || reserve1 === null) return null;
  const poolPrice = ratio0 !== null && ratio0.num > 0n && ratio0.den > 0n ? ratio0 : null;
  const usd0 = given0 ?? (given1 !== null && poolPrice !== null ? ratioMul(poolPrice, given1) : null);
  const usd1 =
    given1 ?? (given0 !== null && poolPrice !== null ? ratioMul(given0, ratioInverse(poolPrice)) : null);
  if (usd0 === null || usd1 === null) return null;
  const units = (e: ExactDecimal) => ratio(e.digits, powerOf10(e.scale));
  return ratioValue(ratioSum([ratioMul(units(reserve0), usd0), ratioMul(units(reserve1), usd1)]));
}

/** A stored USD price as the exact ratio its double denotes (null: unpriced or not finite). */
export function usdRatioOf(usd: number | null): Ratio | null {
  return usd !== null && Number.isFinite(usd) ? ratioOfNumber(usd) : null;
}
