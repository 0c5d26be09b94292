/**
 * The pricing's part of a rollback (docs/PRICING.md, *Rollbacks and crashes*): after the indexer
 * deleted the rows above the ancestor, every aggregate that held a removed row is rebuilt from
 * the remaining rows, as a fresh index would have it.
 */
import type { MarketPool, PoolPriceState, RollbackInfo, StateEvent } from "../model/index.js";
import type { DbClient } from "../store/db.js";
import { loadPoolStatesAt, type PoolStateAt } from "../store/pool-events.js";
import { deleteTokenPricesExcept, saveTokenPrices } from "../store/prices.js";
import {
  deletePoolStates,
  getPricedBlock,
  loadMarketPools,
  poolsWithStateAbove,
  savePoolStates,
  setPricedBlock,
} from "../store/pricing-state.js";
import { deleteOrphanStats } from "../store/stats.js";
import { rebuildAggregates } from "./aggregates.js";
import { emptyStatsChanges, refreshChangedStats } from "./market-stats.js";
import { rollbackMarketWindows } from "./market-windows.js";
import { pricesOfPools } from "./price-blocks.js";
import { priceRows } from "./price-rows.js";
import type { Stage } from "./stage.js";
import { balanceBeforeSwap } from "./trade.js";

/** Rebuilds the derived data of a chain rolled back to `ancestorBlock`; returns the pools affected. */
export async function rollbackPricing(
  stage: Stage,
  client: DbClient,
  rollback: RollbackInfo,
): Promise<number> {
  const { chainId, ancestorBlock } = rollback;
  // Loaded again from the database at the next batch.
  stage.markets.drop(chainId);
  const priced = await getPricedBlock(client, chainId);
  if (priced === null) return 0;
  // The figures stay as far behind as they were (then every pool's statistics are due).
  if (priced > ancestorBlock) await setPricedBlock(client, chainId, ancestorBlock, "unchanged");
  const affected = await poolsWithStateAbove(client, chainId, ancestorBlock);
  if (affected.length === 0) return 0;
  const addresses = affected.map((a) => a.pool);

  // Pool states as of the ancestor, from the remaining rows.
  const { pools: existing } = await loadMarketPools(client, chainId);
  const at = await loadPoolStatesAt(client, chainId, addresses, ancestorBlock);
  const keep: MarketPool[] = [];
  const drop: string[] = [];
  for (const a of affected) {
    const pool = existing.get(a.pool);
    const found = at.get(a.pool);
    if (!pool || !found?.latest) {
      drop.push(a.pool);
      continue;
    }
    pool.state = stateFrom(found.latest, found.firstSwapOfLastSwapBlock);
    keep.push(pool);
  }
  await deletePoolStates(client, chainId, drop);
  await savePoolStates(client, chainId, keep);

  // Candles and series buckets that held a removed trade, from the remaining swaps.
  const tokens = [...new Set(affected.flatMap((a) => [a.token0, a.token1]))];
  await rebuildAggregates(client, chainId, { pools: addresses, tokens }, ancestorBlock);

  // Prices from the states at the ancestor.
  const { pools, decimals } = await loadMarketPools(client, chainId);
  const prices = pricesOfPools({
    pools,
    decimals,
    reference: stage.referenceOf(chainId),
    options: stage.options,
  });
  const rows = priceRows(prices, stage.options);
  const changes = emptyStatsChanges();
  for (const token of await saveTokenPrices(client, chainId, rows)) changes.repricedTokens.add(token);
  await deleteTokenPricesExcept(
    client,
    chainId,
    rows.map((r) => r.token),
  );

  const now = () => stage.now().getTime();
  await rollbackMarketWindows(client, chainId, ancestorBlock, affected, now);
  await deleteOrphanStats(client, chainId);
  for (const pool of keep) changes.tradedPools.add(pool.address);
  await refreshChangedStats(
    client,
    chainId,
    changes,
    now(),
    stage.options.liquidityFloorUsd,
    undefined,
    undefined,
    undefined,
    stage.referenceOf(chainId).wrappedNative,
  );
  return affected.length;
}

/** The pricing state of a pool from its latest event and the first swap of its latest block of swaps. */
export function stateFrom(
  latest: StateEvent,
  firstSwap: PoolStateAt["firstSwapOfLastSwapBlock"],
): PoolPriceState {
  return {
    reserve0: latest.reserve0,
    reserve1: latest.reserve1,
    sqrtPriceX96: latest.sqrtPriceX96,
    swapBlock: firstSwap?.blockNumber ?? null,
    preSwapReserve0: firstSwap
      ? balanceBeforeSwap(firstSwap.reserve0, firstSwap.amount0In, firstSwap.amount0Out)
      : null,
    preSwapReserve1: firstSwap
      ? balanceBeforeSwap(firstSwap.reserve1, firstSwap.amount1In, firstSwap.amount1Out)
      : null,
    stateBlock: latest.blockNumber,
    stateLogIndex: latest.logIndex,
    stateTime: latest.time,
  };
}
