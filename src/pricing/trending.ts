/**
 * Trending pools (GET /api/v1/pools/top?sort=trending): which pools may trend and in what order.
 * Pure. The liquidity that admits a pool is measured at the pool's depth, as the USD routing
 * measures it (pool-state.ts `depthOf`): one block of trades cannot lift a dust pool over the
 * floor, so a thin pool whose price one trade pushed never trends, whatever volume that trade had.
 */
import type { PoolPriceState } from "../model/index.js";
import { depthOf, spotPrice0 } from "./pool-state.js";
import { pairLiquidityUsd } from "./stats.js";

/** A pool that may trend: its 1-hour and 24-hour USD volumes and what its depth is made from. */
export type TrendingCandidate = {
  pool: string;
  protocol: "v2" | "v3";
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
 * USD value of both sides of a pool at its depth (each side the smaller of its balance now and
 * just before the first swap of its latest block with swaps), valued like the pair's liquidity;
 * null when unknown.
 */
export function depthLiquidityUsd(
  c: Omit<TrendingCandidate, "pool" | "volumeUsd1h" | "volumeUsd24h">,
): number | null {
  if (c.state === null) return null;
  return pairLiquidityUsd({
    reserve0: depthOf(c.state, 0, c.decimals0),
    reserve1: depthOf(c.state, 1, c.decimals1),
    price0: spotPrice0(c.protocol, c.state, c.decimals0, c.decimals1),
    usd0: c.usd0,
    usd1: c.usd1,
  });
}

/**
 * The trending pools, best first (ties by address): those whose 1-hour USD volume is at least
 * `minVolumeUsd1h` and whose depth liquidity is at least `liquidityFloorUsd`, by score.
 */
export function rankTrending(
  candidates: readonly TrendingCandidate[],
  options: { liquidityFloorUsd: number; minVolumeUsd1h: number },
): { pool: string; score: number }[] {
  const ranked: { pool: string; score: number }[] = [];
  for (const c of candidates) {
    if (!(c.volumeUsd1h >= options.minVolumeUsd1h)) continue;
    const liquidity = depthLiquidityUsd(c);
    if (liquidity === null || !(liquidity >= options.liquidityFloorUsd)) continue;
    const score = trendingScore(c.volumeUsd1h, c.volumeUsd24h);
    if (score !== null) ranked.push({ pool: c.pool, score });
  }
  return ranked.sort((a, b) => b.score - a.score || (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
}
