// What several families share on the devnet: prices from the tokens' initial USD prices, and the one
// full-range position per pool that the deployer holds in V4 and Algebra pools.
import type { Address, Hex } from "viem";
import type { DeployedPool, DeployedToken, Deployment } from "../deploy.js";
import type { PoolSpec } from "../market.js";
import type { Trade } from "../market-estimates.js";
import { fullRangeTicks, rawPriceFromUsd } from "../pool-math.js";
import type { TxRequest } from "../transactions.js";
import { liquidityForUsd } from "../v4.js";
import type { PoolDeposit } from "./types.js";

/** The deployer's full-range deposit: the liquidity worth the spec's full-range USD at the initial price. */
export function fullRangeDeposit(pool: DeployedPool, spec: PoolSpec, plan: Deployment): PoolDeposit {
  const t0 = plan.tokens[pool.token0Key];
  const t1 = plan.tokens[pool.token1Key];
  const rawPrice = rawPriceFromUsd(usdUnit(t0), usdUnit(t1));
  const sqrtPrice = Math.sqrt(rawPrice);
  const liquidity = liquidityForUsd(spec.fullRangeUsd, sqrtPrice, usdUnit(t1));
  // Full range: amount0 ≤ L/√P and amount1 ≤ L·√P; 1 % on top for the float rounding.
  const amount0 = BigInt(Math.ceil((Number(liquidity) / sqrtPrice) * 1.01));
  const amount1 = BigInt(Math.ceil(Number(liquidity) * sqrtPrice * 1.01));
  return {
    pool,
    token0Key: t0.key,
    token1Key: t1.key,
    amount0,
    amount1,
    ticks: fullRangeTicks(pool.tickSpacing ?? 60),
    liquidity,
  };
}

/** A contract's deployment by `from`. */
export function deployTx(from: Address, data: Hex, label: string): TxRequest {
  return { from, data, gas: 16_000_000n, label: `deploy ${label}` };
}

/** A token's initial USD price and the unit of its amounts. */
export function usdUnit(token: DeployedToken): { priceUsd: number; decimals: number } {
  return { priceUsd: token.initialPriceUsd, decimals: token.unitDecimals };
}

/** The pool's initial raw price (token1 units per token0 unit) from its tokens' initial USD prices. */
export function initialRawPrice(pool: DeployedPool, plan: Deployment): number {
  return rawPriceFromUsd(usdUnit(plan.tokens[pool.token0Key]), usdUnit(plan.tokens[pool.token1Key]));
}

/** The one pool of a trade through a family whose router swaps one pool at a time, and the swap's fields. */
export function singleHop(
  trade: Trade,
  what: string,
): { pool: DeployedPool; from: Address; zeroForOne: boolean; amountIn: bigint } {
  const [first] = trade.hops;
  if (first === undefined || trade.hops.length !== 1) throw new Error(`${what} crosses one pool`);
  return { pool: first.pool, from: trade.from, zeroForOne: first.zeroForOne, amountIn: trade.amountIn };
}

/** The tokens a trade goes through, in its direction (the routers' `path`). */
export function tradePath(trade: Trade): Address[] {
  const first = trade.hops[0];
  if (first === undefined) throw new Error("a trade needs a pool");
  const path = [first.zeroForOne ? first.pool.token0 : first.pool.token1];
  for (const hop of trade.hops) path.push(hop.zeroForOne ? hop.pool.token1 : hop.pool.token0);
  return path;
}
