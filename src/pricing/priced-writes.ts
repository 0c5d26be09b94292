/**
 * Pricing a stretch of events and writing what they derive: the swaps' USD figures (for rows not
 * written with them), pool states, candles, USD series and token prices. Shared by a batch and
 * by the catch-up of blocks stored unpriced.
 */
import type { MarketEvent, MarketPool } from "../model/index.js";
import { chunks, type DbClient } from "../store/db.js";
import { saveTokenPrices } from "../store/prices.js";
import { loadMarketPools, savePoolStates } from "../store/pricing-state.js";
import { saveSwapUsd } from "../store/swaps.js";
import { foldStored, poolCandles, tokenSeries } from "./aggregates.js";
import type { CandleTrade } from "./candles.js";
import type { Market } from "./market-cache.js";
import { addPools } from "./market-state.js";
import type { StatsChanges } from "./market-stats.js";
import {
  candleTradeOf,
  type PriceBlocksResult,
  type PricedSwap,
  priceBlocksInSlices,
  seriesPointsOf,
} from "./price-blocks.js";
import { freshPrices, newPriceRows, storedUsd } from "./price-rows.js";
import type { SeriesPoint } from "./series.js";
import type { Stage } from "./stage.js";
import type { TokenPrice } from "./usd-prices.js";

/** Moves the market by events (ascending) and prices their swaps; writes nothing but missing pools' reads. */
export async function priceEvents(
  stage: Stage,
  client: DbClient,
  chainId: number,
  market: Market,
  events: readonly MarketEvent[],
  /** False: the trades' prices only, none stored (a batch that defers or shares the figures). */
  fullPrices: boolean,
): Promise<PriceBlocksResult> {
  const { step } = stage.timer;
  const { state } = market;
  const missing = [...new Set(events.map((e) => e.pool))].filter((pool) => !state.pools.has(pool));
  if (missing.length > 0) {
    // Pools stored after the market was loaded (new in a batch, found by a factory scan).
    const loaded = await step("load", () => loadMarketPools(client, chainId, missing));
    addPools(state, loaded.pools, loaded.decimals);
  }
  return step("price", () =>
    priceBlocksInSlices({
      market: state,
      reference: stage.referenceOf(chainId),
      options: stage.options,
      events,
      fullPrices,
    }),
  );
}

/**
 * Writes what priced events derive: the USD figures of `unwritten` swaps (rows stored before
 * they were priced; a batch's own rows are inserted with theirs), pool states, candles, series
 * and token prices. Returns the number of swaps priced.
 */
export async function writePriced(
  stage: Stage,
  client: DbClient,
  chainId: number,
  market: Market,
  result: PriceBlocksResult,
  unwritten: readonly PricedSwap[],
  changes: StatsChanges,
): Promise<number> {
  const { step } = stage.timer;
  const pools = market.state.pools;
  if (unwritten.length > 0)
    await step("swaps", () =>
      saveSwapUsd(
        client,
        chainId,
        unwritten.map((s) => ({ blockNumber: s.blockNumber, logIndex: s.logIndex, time: s.time, ...s.usd })),
      ),
    );
  await step("pool_states", () =>
    savePoolStates(
      client,
      chainId,
      [...result.touched].map((address) => pools.get(address) as MarketPool),
    ),
  );
  const trades: { pool: string; trade: CandleTrade }[] = [];
  const points: { token: string; point: SeriesPoint }[] = [];
  for (const s of result.swaps) {
    const trade = candleTradeOf({ key: s.key, time: s.time, trade: s.trade, ...s.usd });
    if (trade) trades.push({ pool: s.pool, trade });
    const pool = pools.get(s.pool) as MarketPool;
    points.push(...seriesPointsOf({ ...s, ...s.usd }, pool.token0, pool.token1));
    changes.tradedPools.add(s.pool);
  }
  // Their series at the statistics' window start may move (a point of the backfill can lie anywhere).
  for (const { token } of points) market.series.delete(token);
  // The series are folded while the database writes the candles (the client queues the
  // statements: the transaction's order is unchanged).
  await Promise.all([
    step("candles", () => foldStored(poolCandles, client, chainId, trades, market.folded)),
    step("series", () => foldStored(tokenSeries, client, chainId, points, market.folded)),
  ]);
  for (const pool of result.touched) changes.movedPools.add(pool);
  if (result.prices) await storePrices(stage, client, chainId, market, result.prices, changes);
  return result.swaps.length;
}

/** Stores the token_prices rows of `prices` that differ from the stored ones; notes the repriced tokens. */
export async function storePrices(
  stage: Stage,
  client: DbClient,
  chainId: number,
  market: Market,
  prices: ReadonlyMap<string, TokenPrice>,
  changes: StatsChanges,
): Promise<void> {
  const { step } = stage.timer;
  const fresh = await step("price_rows", () => freshPrices(market.stored, prices));
  // Serialised and sent a statement's rows at a time (as saveTokenPrices splits them): a
  // batch that reprices every token holds one part's provenance texts, not all of them.
  for (const part of chunks(fresh)) {
    const { rows, usdMoved } = await step("price_rows", () =>
      newPriceRows(market.stored, part, stage.options),
    );
    const saved = await step("token_prices", () => saveTokenPrices(client, chainId, rows));
    // The database now holds every row sent (the ones it skipped were equal).
    if (market.usd) for (const row of rows) market.usd.set(row.token, storedUsd(row.usdPrice));
    for (const token of saved) {
      // The statistics read only a token's USD price: a row that changed only its block or
      // provenance (a quote's pool moved, not the price) changes no statistic.
      if (usdMoved.has(token)) changes.repricedTokens.add(token);
    }
  }
}
