/** 24-hour statistics: the window and the figures made from its candles. */

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
 * USD value of both reserves of a pool. A side whose token has no USD price is valued at the
 * pool's own price in the other token; null when neither token is priced or reserves are unknown.
 */
export function pairLiquidityUsd(input: {
  reserve0: number | null;
  reserve1: number | null;
  /** Spot price of token0 in token1. */
  price0: number | null;
  usd0: number | null;
  usd1: number | null;
}): number | null {
  const { reserve0, reserve1, price0 } = input;
  if (reserve0 === null || reserve1 === null) return null;
  const poolPrice = price0 !== null && price0 > 0 && Number.isFinite(price0) ? price0 : null;
  const usd0 = input.usd0 ?? (input.usd1 !== null && poolPrice !== null ? poolPrice * input.usd1 : null);
  const usd1 = input.usd1 ?? (input.usd0 !== null && poolPrice !== null ? input.usd0 / poolPrice : null);
  if (usd0 === null || usd1 === null) return null;
  return reserve0 * usd0 + reserve1 * usd1;
}
