/**
 * One batch's pricing, in one step: before the batch's swaps are inserted it catches up blocks
 * stored unpriced below the batch, prices the batch's blocks and gives each swap's USD figures
 * (written with its row); once the rows are inserted, `write` stores what derives from them
 * (pool states, candles, USD series, token prices, statistics, market windows) and the priced
 * block. Nothing is priced twice and no row is written twice.
 */
import type { IngestBatch, MarketEvent } from "../model/index.js";
import type { DbClient } from "../store/db.js";
import { getPricingSync, setPricedBlock } from "../store/pricing-state.js";
import type { BatchToPrice, PricedBatch } from "../sync/derived.js";
import { refreshFigures, shareOfFigures } from "./batch-figures.js";
import { catchUpStored } from "./catch-up.js";
import { defersFigures, sharesFigures } from "./figure-policy.js";
import type { Market } from "./market-cache.js";
import { setDecimals } from "./market-state.js";
import { emptyStatsChanges, type StatsChanges } from "./market-stats.js";
import { emptyWork, updateMarketWindows } from "./market-windows.js";
import type { PriceBlocksResult, PricedSwap } from "./price-blocks.js";
import { priceEvents, writePriced } from "./priced-writes.js";
import type { Stage } from "./stage.js";
import { eventKey } from "./trade.js";

/** A batch with nothing left to price (its blocks are priced already). */
const NOTHING_TO_PRICE: PricedBatch = { usdOf: null, write: async () => {} };

/** Prices a batch before its swaps are inserted; see the module's comment. */
export async function priceBatch(stage: Stage, client: DbClient, batch: BatchToPrice): Promise<PricedBatch> {
  const started = performance.now();
  stage.timer.reset();
  const { chainId } = batch;
  const sync = await getPricingSync(client, chainId);
  const priced = sync?.block ?? null;
  if (priced !== null && priced >= batch.toBlock) return NOTHING_TO_PRICE;
  const changes = emptyStatsChanges();
  // Blocks stored while no pricing was attached (or before the first batch) are priced first;
  // they may have stored tokens too: the market is loaded afresh then.
  const behind = priced === null || priced < batch.fromBlock - 1;
  const market = await stage.markets.take(client, chainId, sync, behind);
  for (const token of batch.newTokens) setDecimals(market.state, token.address, token.decimals);
  const caughtUp = behind
    ? await catchUpStored(stage, client, chainId, market, priced ?? -1, batch.fromBlock - 1, changes)
    : 0;
  const cursor = behind ? batch.fromBlock - 1 : (priced as number);
  const events = batchEvents(batch).filter((e) => e.blockNumber > cursor);
  const deferred =
    caughtUp === 0 && defersFigures(stage.deferFigures, batch, performance.now() - market.figuresAt);
  const fullPrices =
    !deferred && !sharesFigures(stage.perBatch, market.state.pools.size, market.state.graph.poolsOf.size);
  const result =
    events.length > 0 ? await priceEvents(stage, client, chainId, market, events, fullPrices) : null;
  const usd = new Map(result?.swaps.map((s) => [s.key, s.usd]));
  return {
    usdOf: result ? (swap) => usd.get(eventKey(swap.blockNumber, swap.logIndex)) : null,
    write: async (writer, inserted) => {
      const swaps = result
        ? await writePriced(stage, writer, chainId, market, result, storedBefore(result, inserted), changes)
        : 0;
      await finishBatch(stage, writer, inserted, market, changes, { started, swaps, caughtUp, deferred });
    },
  };
}

/**
 * The priced swaps whose rows the batch did not insert (stored already, without the figures the
 * insert carried): their figures are written by an update.
 */
function storedBefore(result: PriceBlocksResult, inserted: Pick<IngestBatch, "swaps">): PricedSwap[] {
  if (inserted.swaps.length === result.swaps.length) return [];
  const keys = new Set(inserted.swaps.map((s) => eventKey(s.blockNumber, s.logIndex)));
  return result.swaps.filter((s) => !keys.has(s.key));
}

/** Stores the new priced block (and keeps the market for the next batch), then the figures and windows. */
async function finishBatch(
  stage: Stage,
  client: DbClient,
  batch: IngestBatch,
  market: Market,
  changes: StatsChanges,
  done: {
    started: number;
    swaps: number;
    caughtUp: number;
    /** The market-wide figures are left for a later batch: what changed is kept for it. */
    deferred: boolean;
  },
): Promise<void> {
  const { chainId } = batch;
  const { deferred } = done;
  market.block = batch.toBlock;
  const marketStarted = performance.now();
  // Deferred too: the next batch that does not defer folds every swap since market_sync's
  // built block (the windows keep their own cursor) and recomputes the windows once. Before the
  // figures: a token's 24-hour change reads its trades' minute buckets (market-stats.ts).
  const windows = deferred
    ? emptyWork()
    : await updateMarketWindows(client, chainId, batch.toBlock, () => stage.now().getTime());
  const marketMs = performance.now() - marketStarted;
  if (deferred) {
    market.writer = await setPricedBlock(client, chainId, batch.toBlock, "unchanged");
    addChanges(market.deferred, changes);
    stage.markets.put(chainId, market);
  } else {
    market.writer = await setPricedBlock(client, chainId, batch.toBlock);
    // What the batches that deferred changed, or, when that is not known, every pool.
    addChanges(changes, market.deferred);
    if (market.deferredAll) for (const pool of market.state.pools.keys()) changes.tradedPools.add(pool);
    market.deferred = emptyStatsChanges();
    market.deferredAll = false;
    market.figuresAt = performance.now();
    // A large chain: its share of the figures (the market is not yet back in the cache, so a
    // failure here leaves it to be loaded afresh, as any failed batch does).
    const share = sharesFigures(stage.perBatch, market.state.pools.size, market.state.graph.poolsOf.size)
      ? await shareOfFigures(stage, client, chainId, market, changes)
      : undefined;
    stage.markets.put(chainId, market);
    await refreshFigures(stage, client, chainId, market, changes, share);
  }
  stage.logger.debug(
    {
      chain_id: chainId,
      from_block: batch.fromBlock,
      to_block: batch.toBlock,
      swaps: done.swaps,
      caught_up_swaps: done.caughtUp,
      deferred_figures: deferred,
      repriced_tokens: changes.repricedTokens.size,
      moved_pools: changes.movedPools.size,
      ms: Math.round(performance.now() - done.started),
      market_ms: Math.round(marketMs * 100) / 100,
      market_trades: windows.trades,
      market_rows: windows.rows,
      market_pools: windows.pools,
      market_tokens: windows.tokens,
      steps_ms: stage.timer.rounded(),
    },
    "priced batch",
  );
}

/** Adds what `from` changed to `into`. */
export function addChanges(into: StatsChanges, from: StatsChanges): void {
  for (const pool of from.tradedPools) into.tradedPools.add(pool);
  for (const pool of from.movedPools) into.movedPools.add(pool);
  for (const token of from.repricedTokens) into.repricedTokens.add(token);
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
