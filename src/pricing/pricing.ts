/**
 * The pricing stage behind the indexer's derived-data seam: inside each batch's transaction it
 * prices the batch's blocks, values their swaps, grows candles and USD series, stores token
 * prices and refreshes the statistics; after a rollback it rebuilds all of them as a fresh index
 * would have them. It keeps no state between calls: everything is read in the transaction.
 */
import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import type {
  IngestBatch,
  MarketEvent,
  MarketPool,
  PoolPriceState,
  RollbackInfo,
  StateEvent,
} from "../model/index.js";
import type { Db, DbClient } from "../store/db.js";
import { loadMarketEvents, loadPoolStatesAt, type PoolStateAt } from "../store/pool-events.js";
import { deleteTokenPricesExcept, saveTokenPrices, type TokenPriceRow } from "../store/prices.js";
import {
  deletePoolStates,
  getPricedBlock,
  loadMarketPools,
  poolsWithStateAbove,
  savePoolStates,
  setPricedBlock,
} from "../store/pricing-state.js";
import { deleteOrphanStats } from "../store/stats.js";
import { chunkEndBlock, saveSwapUsd } from "../store/swaps.js";
import type { DerivedData } from "../sync/derived.js";
import { foldPoolCandles, foldTokenSeries, rebuildPoolCandles, rebuildTokenSeries } from "./aggregates.js";
import { emptyStatsChanges, refreshChangedStats, refreshStats, type StatsChanges } from "./market-stats.js";
import { candleTradeOf, priceBlocks, pricesOfPools, seriesPointsOf } from "./price-blocks.js";
import { provenanceOf } from "./provenance.js";
import { balanceBeforeSwap } from "./trade.js";
import type { PricingOptions, ReferenceTokens, TokenPrice } from "./usd-prices.js";

export type Pricing = DerivedData & {
  /**
   * Slides the 24-hour window of a chain's statistics to `now` (default: the clock). The runtime
   * calls it about every minute; it runs in its own transaction.
   */
  refreshStats(db: Db, chainId: number, now?: Date): Promise<{ pools: number; tokens: number }>;
};

/** Swaps per catch-up chunk when pricing blocks the indexer stored without pricing them. */
const CATCH_UP_SWAPS = 20_000;

export function createPricing(options: {
  /** The application configuration (only `pricing` and each chain's `id` and `referenceTokens` are read). */
  config: {
    pricing: Pick<Config["pricing"], "liquidityFloorUsd" | "maxDeviation">;
    chains: readonly { id: number; referenceTokens: ReferenceTokens }[];
  };
  logger: Logger;
  /** The clock of the 24-hour statistics (tests pin it). */
  now?: () => Date;
}): Pricing {
  const { logger } = options;
  const pricingOptions: PricingOptions = {
    liquidityFloorUsd: options.config.pricing.liquidityFloorUsd,
    maxDeviation: options.config.pricing.maxDeviation,
  };
  const now = options.now ?? (() => new Date());
  const references = new Map<number, ReferenceTokens>(
    options.config.chains.map((c) => [c.id, c.referenceTokens] as const),
  );
  const referenceOf = (chainId: number): ReferenceTokens => {
    const reference = references.get(chainId);
    if (!reference) throw new Error(`pricing: chain ${chainId} is not configured`);
    return reference;
  };

  /** Prices events (ascending) of one stretch of blocks and writes everything derived from them. */
  async function processEvents(
    client: DbClient,
    chainId: number,
    events: readonly MarketEvent[],
    changes: StatsChanges,
  ): Promise<number> {
    if (events.length === 0) return 0;
    const reference = referenceOf(chainId);
    const { pools, decimals } = await loadMarketPools(client, chainId);
    const result = priceBlocks({ pools, decimals, reference, options: pricingOptions, events });

    await saveSwapUsd(
      client,
      chainId,
      result.swaps.map((s) => ({ blockNumber: s.blockNumber, logIndex: s.logIndex, time: s.time, ...s.usd })),
    );
    await savePoolStates(
      client,
      chainId,
      [...result.touched].map((address) => pools.get(address) as MarketPool),
    );
    const trades = [];
    const points = [];
    for (const s of result.swaps) {
      const trade = candleTradeOf({ key: s.key, time: s.time, trade: s.trade, ...s.usd });
      if (trade) trades.push({ pool: s.pool, trade });
      const pool = pools.get(s.pool) as MarketPool;
      points.push(...seriesPointsOf({ ...s, ...s.usd }, pool.token0, pool.token1));
      changes.tradedPools.add(s.pool);
    }
    await foldPoolCandles(client, chainId, trades);
    await foldTokenSeries(client, chainId, points);
    for (const pool of result.touched) changes.movedPools.add(pool);
    if (result.prices) {
      for (const token of await saveTokenPrices(client, chainId, priceRows(result.prices, pricingOptions))) {
        changes.repricedTokens.add(token);
      }
    }
    return result.swaps.length;
  }

  /** Prices blocks (fromExclusive, toBlock] from the stored rows, in chunks. */
  async function processStored(
    client: DbClient,
    chainId: number,
    fromExclusive: number,
    toBlock: number,
    changes: StatsChanges,
  ): Promise<number> {
    let swaps = 0;
    let cursor = fromExclusive;
    while (cursor < toBlock) {
      const end = await chunkEndBlock(client, chainId, cursor, toBlock, CATCH_UP_SWAPS);
      swaps += await processEvents(
        client,
        chainId,
        await loadMarketEvents(client, chainId, cursor, end),
        changes,
      );
      cursor = end;
    }
    return swaps;
  }

  async function afterBatch(client: DbClient, batch: IngestBatch): Promise<void> {
    const started = performance.now();
    const { chainId } = batch;
    const priced = await getPricedBlock(client, chainId);
    if (priced !== null && priced >= batch.toBlock) return;
    const changes = emptyStatsChanges();
    let cursor = batch.fromBlock - 1;
    let caughtUp = 0;
    if (priced === null || priced < cursor) {
      // Blocks stored while no pricing was attached (or before the first batch): price them first.
      caughtUp = await processStored(client, chainId, priced ?? -1, cursor, changes);
    } else {
      cursor = priced;
    }
    const events = batchEvents(batch).filter((e) => e.blockNumber > cursor);
    const swaps = await processEvents(client, chainId, events, changes);
    await setPricedBlock(client, chainId, batch.toBlock);
    await refreshChangedStats(client, chainId, changes, now().getTime(), pricingOptions.liquidityFloorUsd);
    logger.debug(
      {
        chain_id: chainId,
        from_block: batch.fromBlock,
        to_block: batch.toBlock,
        swaps,
        caught_up_swaps: caughtUp,
        repriced_tokens: changes.repricedTokens.size,
        ms: Math.round(performance.now() - started),
      },
      "priced batch",
    );
  }

  async function afterRollback(client: DbClient, rollback: RollbackInfo): Promise<void> {
    const started = performance.now();
    const { chainId, ancestorBlock } = rollback;
    const priced = await getPricedBlock(client, chainId);
    if (priced === null) return;
    if (priced > ancestorBlock) await setPricedBlock(client, chainId, ancestorBlock);
    const affected = await poolsWithStateAbove(client, chainId, ancestorBlock);
    if (affected.length === 0) return;
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
    await rebuildPoolCandles(client, chainId, addresses, ancestorBlock);
    const tokens = [...new Set(affected.flatMap((a) => [a.token0, a.token1]))];
    await rebuildTokenSeries(client, chainId, tokens, ancestorBlock);

    // Prices from the states at the ancestor.
    const { pools, decimals } = await loadMarketPools(client, chainId);
    const prices = pricesOfPools({
      pools,
      decimals,
      reference: referenceOf(chainId),
      options: pricingOptions,
    });
    const rows = priceRows(prices, pricingOptions);
    const changes = emptyStatsChanges();
    for (const token of await saveTokenPrices(client, chainId, rows)) changes.repricedTokens.add(token);
    await deleteTokenPricesExcept(
      client,
      chainId,
      rows.map((r) => r.token),
    );

    await deleteOrphanStats(client, chainId);
    for (const pool of keep) changes.tradedPools.add(pool.address);
    await refreshChangedStats(client, chainId, changes, now().getTime(), pricingOptions.liquidityFloorUsd);
    logger.debug(
      {
        chain_id: chainId,
        ancestor_block: ancestorBlock,
        pools: affected.length,
        ms: Math.round(performance.now() - started),
      },
      "rolled back derived data",
    );
  }

  return {
    afterBatch,
    afterRollback,
    refreshStats: (db, chainId, at) => refreshStats(db, chainId, at ?? now(), pricingOptions),
  };
}

/** The token_prices rows of computed prices (tokens whose pools never had an event get none). */
export function priceRows(prices: ReadonlyMap<string, TokenPrice>, options: PricingOptions): TokenPriceRow[] {
  const rows: TokenPriceRow[] = [];
  for (const price of prices.values()) {
    if (price.asOfBlock === null || price.asOfTime === null) continue;
    rows.push({
      token: price.token,
      usdPrice: price.usdPrice,
      blockNumber: price.asOfBlock,
      blockTime: price.asOfTime,
      provenance: provenanceOf(price, options),
    });
  }
  return rows.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
}

/** The pricing state of a pool from its latest event and the first swap of its latest block of swaps. */
function stateFrom(latest: StateEvent, firstSwap: PoolStateAt["firstSwapOfLastSwapBlock"]): PoolPriceState {
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

/** The events of a batch as the pricing reads them, ascending by block and log index. */
export function batchEvents(batch: Pick<IngestBatch, "swaps" | "poolEvents">): MarketEvent[] {
  const events: MarketEvent[] = [
    ...batch.swaps.map((s) => ({
      pool: s.pool,
      blockNumber: s.blockNumber,
      logIndex: s.logIndex,
      time: s.blockTime.getTime(),
      reserve0: s.reserve0,
      reserve1: s.reserve1,
      sqrtPriceX96: s.sqrtPriceX96,
      swap: {
        amount0In: s.amount0In,
        amount1In: s.amount1In,
        amount0Out: s.amount0Out,
        amount1Out: s.amount1Out,
      },
    })),
    ...batch.poolEvents.map((e) => ({
      pool: e.pool,
      blockNumber: e.blockNumber,
      logIndex: e.logIndex,
      time: e.blockTime.getTime(),
      reserve0: e.reserve0,
      reserve1: e.reserve1,
      sqrtPriceX96: e.sqrtPriceX96,
      swap: null,
    })),
  ];
  return events.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}
