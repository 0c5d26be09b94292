/**
 * Trending pools (GET /api/v1/pools/top?sort=trending): which pools may trend and in what order.
 * Pure. The liquidity that admits a pool is measured as the USD routing measures a quote side
 * (src/pricing/pool-state.ts `depthOf`): one block of trades cannot lift a dust pool over the
 * floor, and a side without a USD price is not valued at the pool's (pushable) price, so a thin
 * pool whose price one trade pushed never trends, whatever volume that trade had.
 */
import type { PoolPriceState, ProtocolName } from "../model/index.js";
import { depthOf } from "../pricing/pool-state.js";

/** A pool that may trend: its 1-hour and 24-hour USD volumes and what its depth is made from. */
export type TrendingCandidate = {
  pool: string;
  protocol: ProtocolName;
  decimals0: number | null;
  decimals1: number | null;
  state: PoolPriceState | null;
  usd0: number | null;
  usd1: number | null;
  volumeUsd1h: number;
  volumeUsd24h: number;
};

/**
 * The trending score: the last hour's USD volume against the average hour of the last 24 hours,
 * volume_usd_1h ÷ (volume_usd_24h ÷ 24). From 0 to 24 (the 1-hour window lies inside the 24-hour
 * one); 1 is an ordinary hour, 24 a pool whose whole day happened in the last hour.
 */
export function trendingScore(volumeUsd1h: number, volumeUsd24h: number): number | null {
  if (!(volumeUsd24h > 0) || !Number.isFinite(volumeUsd1h)) return null;
  return volumeUsd1h / (volumeUsd24h / 24);
}

/**
 * The liquidity that admits a pool to trending: twice the smaller USD value, at the pool's depth
 * (each side the smaller of its balance now and just before the first swap of its latest block with
 * swaps), of its sides whose token has a USD price — the measure by which a pool qualifies to
 * price a token against a quote. A side without a USD price is never valued at the pool's own
 * price, which one trade can push; a pool with neither side priced has none (null).
 */
export function trendingLiquidityUsd(
  c: Omit<TrendingCandidate, "pool" | "volumeUsd1h" | "volumeUsd24h">,
): number | null {
  if (c.state === null) return null;
  const sides: number[] = [];
  for (const [side, decimals, usd] of [
    [0, c.decimals0, c.usd0],
    [1, c.decimals1, c.usd1],
  ] as const) {
    if (usd === null || !Number.isFinite(usd)) continue;
    const depth = depthOf(c.state, side, decimals);
    if (depth === null) return null;
    sides.push(depth * usd);
  }
  return sides.length === 0 ? null : 2 * Math.min(...sides);
}

/**
 * The trending pools, best first (ties by address): those whose 1-hour USD volume is at least
 * `minVolumeUsd1h` and whose trending liquidity is at least `liquidityFloorUsd`, by score.
 */
export function rankTrending(
  candidates: readonly TrendingCandidate[],
  options: { liquidityFloorUsd: number; minVolumeUsd1h: number },
): { pool: string; score: number }[] {
  const ranked: { pool: string; score: number }[] = [];
  for (const c of candidates) {
    if (!(c.volumeUsd1h >= options.minVolumeUsd1h)) continue;
    const liquidity = trendingLiquidityUsd(c);
    if (liquidity === null || !(liquidity >= options.liquidityFloorUsd)) continue;
    const score = trendingScore(c.volumeUsd1h, c.volumeUsd24h);
    if (score !== null) ranked.push({ pool: c.pool, score });
  }
  return ranked.sort((a, b) => b.score - a.score || (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}
