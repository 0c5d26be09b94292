/**
 * A batch's market-wide figures: the statistics of what it changed (market-stats.ts, from the
 * market in memory), and on a large chain the share of the figures it brings up to date
 * (figure-policy.ts).
 */
import type { DbClient } from "../store/db.js";
import { loadTokenUsdPrices } from "../store/prices.js";
import { nextInTurn } from "./figure-policy.js";
import { pricesOfTokens } from "./lazy-prices.js";
import type { Market } from "./market-cache.js";
import { refreshChangedStats, type StatsChanges } from "./market-stats.js";
import { storePrices } from "./priced-writes.js";
import type { Stage } from "./stage.js";

/** A batch's share of a large chain's figures (market-stats.ts `refreshChangedStats`). */
export type Share = {
  /** The pools whose liquidity is refreshed beside the moved ones, instead of every pool of a repriced token. */
  pools: ReadonlySet<string>;
  /** Tokens with more pools than `minPools` get their statistics only when `due` (their turn). */
  hubs: { minPools: number; due: ReadonlySet<string> };
};

/**
 * A batch's share of a large chain's figures: the prices of the tokens of the pools it moved and
 * of the next tokens in turn are stored; the next pools in turn are returned, whose liquidity the
 * statistics refresh (instead of every pool of every repriced token).
 */
export async function shareOfFigures(
  stage: Stage,
  client: DbClient,
  chainId: number,
  market: Market,
  changes: StatsChanges,
): Promise<Share> {
  const { state, turn } = market;
  const { perBatch } = stage;
  const wanted = new Set<string>();
  for (const address of changes.movedPools) {
    const pool = state.pools.get(address);
    if (!pool) continue;
    wanted.add(pool.token0);
    wanted.add(pool.token1);
  }
  const tokens = nextInTurn(turn.tokens, perBatch.tokens, () => state.graph.poolsOf.keys());
  for (const token of tokens) wanted.add(token);
  const prices = await stage.timer.step("price", () =>
    pricesOfTokens(state.graph, stage.referenceOf(chainId), stage.options, [...wanted], state.memo),
  );
  await storePrices(stage, client, chainId, market, prices, changes);
  const pools = nextInTurn(turn.pools, perBatch.pools, () => state.pools.keys());
  // A token with more pools than a share (WETH, the stablecoins: summing their pools' figures
  // costs a share of the chain) has its statistics refreshed in its turn only.
  return { pools, hubs: { minPools: perBatch.pools || Number.POSITIVE_INFINITY, due: tokens } };
}

/** The statistics of what changed, from the market in memory (market-stats.ts). */
export async function refreshFigures(
  stage: Stage,
  client: DbClient,
  chainId: number,
  market: Market,
  changes: StatsChanges,
  /** A large chain's share (`shareOfFigures`; default: every figure that changed). */
  share?: Share,
): Promise<void> {
  const { step } = stage.timer;
  // The stored USD prices, read once per market load (then kept by storePrices).
  if (!market.usd) market.usd = await step("stats_usd", () => loadTokenUsdPrices(client, chainId));
  const usd = market.usd;
  await step("stats", () =>
    refreshChangedStats(
      client,
      chainId,
      changes,
      stage.now().getTime(),
      stage.options.liquidityFloorUsd,
      step,
      {
        pools: market.state.pools,
        decimals: market.state.decimals,
        graphPools: market.state.graphPools,
        poolsOf: market.state.graph.poolsOf,
        usd,
        pairLiquidity: stage.markets.pairLiquidityMirror(chainId),
        series: market.series,
      },
      share,
      stage.referenceOf(chainId).wrappedNative,
    ),
  );
}
