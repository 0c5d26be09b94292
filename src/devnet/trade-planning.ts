import type { Address } from "viem";
import type { DeployedPool, Deployment } from "./deploy.js";
import { devnetFamilyOf, type TradeRouters } from "./families/index.js";
import type { RouteSpec, TokenKey } from "./market.js";
import type { Hop, MarketEstimates, Trade } from "./market-estimates.js";
import type { PeripheryAddresses } from "./periphery.js";
import { v2InputToReachPrice, v3InputToReachPrice } from "./pool-math.js";
import { poolRawPrice } from "./pool-state.js";
import type { Random } from "./random.js";
import type { TxRequest } from "./transactions.js";

/** Share of random trades that take a multi-hop route. */
const routeShare = 0.07;
/** Share of random trades that are ten times the usual size. */
const whaleShare = 0.02;
/** A random trade never exceeds this share of the pool's deployed liquidity. */
const maxTradeShareOfPool = 0.03;
/** Share of a pool's deviation from the market that one arbitrage trade removes (min, max). */
const arbFraction = [0.4, 0.8] as const;
/** A pool further than this (log of the price ratio) from the market is always arbitraged. */
const arbAlwaysAbove = 0.015;

/** A route of the market with its pools, in its direction. */
export type Route = { spec: RouteSpec; hops: Hop[] };

/** What trade planning draws on: the estimates, who trades, and where. */
export type TradeContext = {
  estimates: MarketEstimates;
  traders: readonly Address[];
  routes: readonly Route[];
  /** The pools traded here, and their activity weights in the same order. */
  pools: readonly DeployedPool[];
  poolWeights: readonly number[];
  /** Takes a planned trade in (applies it to the estimates and adds it to the block). */
  addTrade: (trade: Trade) => void;
};

/** Trades that pull pools back towards the market, as arbitrageurs do; returns how many. */
export function planArbitrage(context: TradeContext, rng: Random, maxTrades: number): number {
  const { estimates } = context;
  let count = 0;
  for (const pool of context.pools) {
    if (count >= maxTrades) break;
    const d = estimates.deviation(pool);
    // Not worth it within the fee (plus gas and risk, which this margin stands for).
    const threshold = pool.fee / 1_000_000 + (pool.fee <= 100 ? 0.0005 : 0.004);
    // Small gaps wait for a busy pool's arbitrageurs; a wide one is always taken, so that no pool
    // drifts far from the market after a big routed trade or a liquidity removal.
    const wide = Math.abs(d) > arbAlwaysAbove;
    if (
      Math.abs(d) <= threshold ||
      (!wide && !rng.chance(Math.min(0.6, 0.1 + 0.05 * estimates.specOf(pool).activity)))
    )
      continue;
    const state = estimates.stateOf(pool);
    const fraction = arbFraction[0] + (arbFraction[1] - arbFraction[0]) * rng.next();
    const target = poolRawPrice(state) * Math.exp(-fraction * d);
    const move =
      "reserve0" in state
        ? v2InputToReachPrice(Number(state.reserve0), Number(state.reserve1), target)
        : v3InputToReachPrice(Number(state.liquidity), poolRawPrice(state), target);
    const tokenIn = move.zeroForOne ? pool.token0Key : pool.token1Key;
    const cap = estimates.rawAmount(tokenIn, pool.initialLiquidityUsd * 0.1);
    const amountIn = bigMin(BigInt(Math.floor(move.amountIn)), cap);
    if (amountIn <= estimates.rawAmount(tokenIn, 1)) continue;
    context.addTrade({
      from: rng.pick(context.traders),
      hops: [{ pool, zeroForOne: move.zeroForOne }],
      amountIn,
    });
    count++;
  }
  return count;
}

/** A random trade: mostly one pool picked by activity, its side leaning towards the market. */
export function planRandomTrade(context: TradeContext, rng: Random): void {
  const { estimates, routes } = context;
  const from = rng.pick(context.traders);
  if (rng.chance(routeShare)) {
    const route = routes[rng.weighted(routes.map((r) => r.spec.activity))];
    if (route !== undefined) {
      const reverse = rng.chance(0.5);
      const hops = reverse
        ? [...route.hops].reverse().map((hop) => ({ pool: hop.pool, zeroForOne: !hop.zeroForOne }))
        : route.hops;
      const tokenIn = reverse ? route.spec.path.at(-1) : route.spec.path[0];
      if (tokenIn !== undefined) {
        context.addTrade({
          from,
          hops,
          amountIn: estimates.rawAmount(tokenIn, rng.logNormal(route.spec.tradeUsd, 0.8)),
        });
        return;
      }
    }
  }
  const pool = context.pools[rng.weighted(context.poolWeights)];
  if (pool === undefined) return;
  const spec = estimates.specOf(pool);
  // The random side leans towards the market: most of the convergence comes from here.
  const zeroForOne = rng.chance(Math.min(0.9, Math.max(0.1, 0.5 + 15 * estimates.deviation(pool))));
  const usd = Math.min(
    rng.logNormal(spec.tradeUsd, 0.9) * (rng.chance(whaleShare) ? 10 : 1),
    pool.initialLiquidityUsd * maxTradeShareOfPool,
  );
  const amountIn = estimates.rawAmount(zeroForOne ? pool.token0Key : pool.token1Key, usd);
  context.addTrade({ from, hops: [{ pool, zeroForOne }], amountIn });
}

export type { TradeRouters };

/**
 * The transaction of a trade: an exact-input swap through its first pool's family's router
 * (`DevnetFamily.tradeTx`; V4 and Algebra cross one pool, the Uniswap routers a path).
 */
export function tradeTx(periphery: PeripheryAddresses, trade: Trade, routers: TradeRouters): TxRequest {
  const first = trade.hops[0];
  if (first === undefined) throw new Error("a trade needs a pool");
  return devnetFamilyOf(first.pool.protocol).tradeTx(periphery, trade, routers);
}

/** The pools of a route, in its direction. */
export function routeHops(deployment: Deployment, route: RouteSpec): Hop[] {
  const hops: Hop[] = [];
  const family = devnetFamilyOf(route.protocol);
  for (let i = 0; i + 1 < route.path.length; i++) {
    const tokenIn = deployment.tokens[route.path[i] as TokenKey].address;
    const tokenOut = deployment.tokens[route.path[i + 1] as TokenKey].address;
    const fee = family.routeFee?.(route, i) ?? route.fees?.[i];
    const pool = deployment.pools.find(
      (p: DeployedPool) =>
        devnetFamilyOf(p.protocol) === family &&
        p.fee === fee &&
        ((p.token0 === tokenIn && p.token1 === tokenOut) || (p.token0 === tokenOut && p.token1 === tokenIn)),
    );
    if (pool === undefined)
      throw new Error(`route ${route.path.join("→")} has no ${route.protocol} pool for hop ${i + 1}`);
    hops.push({ pool, zeroForOne: pool.token0 === tokenIn });
  }
  return hops;
}

function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
