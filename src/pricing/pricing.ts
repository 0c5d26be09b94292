/**
 * The pricing stage behind the indexer's derived-data seam: inside each batch's transaction it
 * prices the batch's blocks, values their swaps, grows candles and USD series, stores token
 * prices and refreshes the statistics; after a rollback it rebuilds all of them as a fresh index
 * would have them.
 *
 * The market (pools, their states, the routing graph, the token prices last stored) is kept in
 * memory between batches (market-state.ts): loaded from the database at a chain's first batch,
 * and again whenever `pricing_sync` is not the row this stage last wrote itself (a batch whose
 * transaction rolled back, a rollback, another writer), so that it always equals what the
 * database holds and a batch costs its own events, not the chain's pool count.
 */
import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import type {
  BatchSwap,
  IngestBatch,
  MarketEvent,
  MarketPool,
  PoolPriceState,
  RollbackInfo,
  StateEvent,
} from "../model/index.js";
import { chunks, type Db, type DbClient, finite } from "../store/db.js";
import { loadMarketEvents, loadPoolStatesAt, type PoolStateAt } from "../store/pool-events.js";
import {
  deleteTokenPricesExcept,
  loadTokenUsdPrices,
  saveTokenPrices,
  type TokenPriceRow,
} from "../store/prices.js";
import {
  deletePoolStates,
  getPricedBlock,
  getPricingSync,
  loadMarketPools,
  poolsWithStateAbove,
  savePoolStates,
  setPricedBlock,
} from "../store/pricing-state.js";
import { deleteOrphanStats } from "../store/stats.js";
import { chunkEndBlock, saveSwapUsd } from "../store/swaps.js";
import type { DerivedData } from "../sync/derived.js";
import {
  type FoldedUpTo,
  foldPoolCandles,
  foldTokenSeries,
  rebuildPoolCandles,
  rebuildTokenSeries,
} from "./aggregates.js";
import type { CandleTrade } from "./candles.js";
import { pricesOfTokens } from "./lazy-prices.js";
import { addPools, createMarketState, type MarketState, setDecimals } from "./market-state.js";
import {
  createPairStatsMirror,
  emptyStatsChanges,
  type PairStatsMirror,
  refreshChangedStats,
  type SeriesEndsMemo,
  type StatsChanges,
  type StatsMarket,
} from "./market-stats.js";
import { emptyWork, type MarketWork, rollbackMarketWindows, updateMarketWindows } from "./market-windows.js";
import {
  candleTradeOf,
  type PriceBlocksResult,
  priceBlocksInSlices,
  pricesOfPools,
  seriesPointsOf,
} from "./price-blocks.js";
import { provenanceOf, sameRow } from "./provenance.js";
import type { SeriesPoint } from "./series.js";
import { type SlideOptions, type SlideResult, slideChainStats } from "./slide.js";
import { balanceBeforeSwap, eventKey } from "./trade.js";
import type { TradeUsd } from "./trade-usd.js";
import type { PricingOptions, ReferenceTokens, TokenPrice } from "./usd-prices.js";

export type Pricing = DerivedData & {
  /**
   * Slides the 24-hour window of a chain's statistics and the market windows (5m, 1h, 6h, 24h) to
   * `now` (default: the clock). The runtime calls it as each minute starts; it runs in short
   * transactions of its own (slide.ts). `windows`: what the market windows' slide recomputed.
   */
  refreshStats(
    db: Db,
    chainId: number,
    now?: Date,
    /** Aborted: the slide ends after its current chunk, rejecting with the signal's reason. */
    signal?: AbortSignal,
  ): Promise<{ pools: number; tokens: number; windows: MarketWork }>;
};

/** Swaps per catch-up chunk when pricing blocks the indexer stored without pricing them. */
const CATCH_UP_SWAPS = 20_000;

export function createPricing(options: {
  /** The application configuration (only `pricing` and each chain's `id` and `referenceTokens` are read). */
  config: {
    pricing: Pick<Config["pricing"], "liquidityFloorUsd" | "maxDeviation"> &
      Partial<Pick<Config["pricing"], "figuresPerBatch">>;
    chains: readonly { id: number; referenceTokens: ReferenceTokens }[];
  };
  logger: Logger;
  /** The clock of the 24-hour statistics (tests pin it). */
  now?: () => Date;
  /**
   * When a batch leaves the market-wide figures for later (docs/PRICING.md, *Figures deferred in
   * a backfill*): more than `minBlocks` (and twice its own length) below the block the indexer
   * heads for, and at most `maxAgeMs` after they were last brought up to date. False: never.
   */
  deferFigures?: { minBlocks: number; maxAgeMs: number } | false;
  /**
   * A chain with more than `fromPools` pools (and more tokens or pools than a share) refreshes
   * its market-wide figures a share per batch (docs/PRICING.md, *Figures of a large chain, a
   * share per batch*): the batch's own tokens and pools, and the next `tokens` tokens and `pools`
   * pools in turn. A share of 0: every figure every batch, whatever the chain's size. Default: the
   * configuration's `pricing.figuresPerBatch`.
   */
  figuresPerBatch?: { tokens: number; pools: number; fromPools: number };
  /** The minute slide's chunks (slide.ts `SlideOptions`); default: 64 first, toward 50 ms, a rest as long. */
  slideChunks?: SlideOptions["chunks"];
}): Pricing {
  const { logger } = options;
  const pricingOptions: PricingOptions = {
    liquidityFloorUsd: options.config.pricing.liquidityFloorUsd,
    maxDeviation: options.config.pricing.maxDeviation,
  };
  const now = options.now ?? (() => new Date());
  const deferFigures = options.deferFigures ?? { minBlocks: 64, maxAgeMs: 60_000 };
  const perBatch = options.figuresPerBatch ??
    options.config.pricing.figuresPerBatch ?? { tokens: 0, pools: 0, fromPools: 0 };
  /** Whether the chain refreshes a share of its figures per batch (see `figuresPerBatch`). */
  const sharesFigures = (market: Market): boolean =>
    market.state.pools.size > perBatch.fromPools &&
    ((perBatch.tokens > 0 && market.state.graph.poolsOf.size > perBatch.tokens) ||
      (perBatch.pools > 0 && market.state.pools.size > perBatch.pools));
  /** Whether a batch leaves the figures for later (see `deferFigures`). */
  const defers = (market: Market, batch: Pick<IngestBatch, "fromBlock" | "toBlock" | "headBlock">): boolean =>
    deferFigures !== false &&
    batch.headBlock !== undefined &&
    batch.headBlock - batch.toBlock >
      Math.max(deferFigures.minBlocks, 2 * (batch.toBlock - batch.fromBlock + 1)) &&
    performance.now() - market.figuresAt < deferFigures.maxAgeMs;
  const references = new Map<number, ReferenceTokens>(
    options.config.chains.map((c) => [c.id, c.referenceTokens] as const),
  );
  const referenceOf = (chainId: number): ReferenceTokens => {
    const reference = references.get(chainId);
    if (!reference) throw new Error(`pricing: chain ${chainId} is not configured`);
    return reference;
  };

  /**
   * Milliseconds spent per step of the current batch (logged with it: where a batch's time goes;
   * mixed when several chains commit at once).
   */
  let steps: Record<string, number> = {};
  async function step<T>(name: string, run: () => Promise<T> | T): Promise<T> {
    const started = performance.now();
    try {
      return await run();
    } finally {
      steps[name] = (steps[name] ?? 0) + performance.now() - started;
    }
  }

  /**
   * Each chain's minute slide in each database (`refreshStats`): when this process last finished
   * one (ms), and the one running.
   */
  const slides = new WeakMap<Db, Map<number, { last?: number; running?: Promise<SlideResult> }>>();
  const slideOf = (db: Db, chainId: number) => {
    let ofDb = slides.get(db);
    if (!ofDb) {
      ofDb = new Map();
      slides.set(db, ofDb);
    }
    let slide = ofDb.get(chainId);
    if (!slide) {
      slide = {};
      ofDb.set(chainId, slide);
    }
    return slide;
  };

  /** Each chain's market in memory, with the pricing_sync row it is current for. */
  const markets = new Map<number, Market>();

  /**
   * Each chain's copy of pair_stats (market-stats.ts `PairStatsMirror`): apart from the market,
   * which a batch takes out while it runs, because the minute slide updates it too.
   */
  const pairStatsMirrors = new Map<number, PairStatsMirror>();
  const pairStatsMirrorOf = (chainId: number): PairStatsMirror => {
    let mirror = pairStatsMirrors.get(chainId);
    if (!mirror) {
      mirror = createPairStatsMirror();
      pairStatsMirrors.set(chainId, mirror);
    }
    return mirror;
  };

  /** The chain's market as the database holds it: the one in memory while current, else loaded. */
  async function marketOf(
    client: DbClient,
    chainId: number,
    sync: { block: number; writer: string; figuresBlock: number } | null,
    reload: boolean,
  ): Promise<Market> {
    // Taken out while the batch moves it: put back once pricing_sync holds its new block, so that
    // a batch that fails half-way leaves nothing half-moved behind.
    const kept = markets.get(chainId);
    markets.delete(chainId);
    if (kept && !reload && sync && kept.block === sync.block && kept.writer === sync.writer) return kept;
    // What the copy of pair_stats holds may be a failed batch's: read again too.
    pairStatsMirrorOf(chainId).pairs = null;
    const { pools, decimals } = await step("load", () => loadMarketPools(client, chainId));
    return {
      state: createMarketState(pools, decimals),
      block: null,
      writer: null,
      stored: new Map(),
      usd: null,
      balances: new Map(),
      series: new Map(),
      folded: { time: null },
      figuresAt: performance.now(),
      turn: { tokens: { items: [], at: 0 }, pools: { items: [], at: 0 } },
      pending: emptyStatsChanges(),
      // What the batches that left the figures behind changed died with their process.
      pendingAll: sync !== null && sync.figuresBlock < sync.block,
    };
  }

  /** Prices events (ascending) of one stretch of blocks and writes everything derived from them. */
  async function processEvents(
    client: DbClient,
    chainId: number,
    market: Market,
    events: readonly MarketEvent[],
    changes: StatsChanges,
    fullPrices = true,
  ): Promise<number> {
    if (events.length === 0) return 0;
    const result = await priceEvents(client, chainId, market, events, fullPrices);
    return writePriced(client, chainId, market, result, changes, false);
  }

  /** Moves the market by events (ascending) and prices their swaps; writes nothing but missing pools' reads. */
  async function priceEvents(
    client: DbClient,
    chainId: number,
    market: Market,
    events: readonly MarketEvent[],
    /** False: the trades' prices only, none stored (a batch that defers the figures). */
    fullPrices = true,
  ): Promise<PriceBlocksResult> {
    const reference = referenceOf(chainId);
    const { state } = market;
    const missing = [...new Set(events.map((e) => e.pool))].filter((pool) => !state.pools.has(pool));
    if (missing.length > 0) {
      // Pools stored after the market was loaded (new in a batch, found by a factory scan).
      const loaded = await step("load", () => loadMarketPools(client, chainId, missing));
      addPools(state, loaded.pools, loaded.decimals);
    }
    return step("price", () =>
      priceBlocksInSlices({ market: state, reference, options: pricingOptions, events, fullPrices }),
    );
  }

  /**
   * Writes what priced events derive: the swaps' USD figures (unless their rows were inserted
   * with them), pool states, candles, series and token prices.
   */
  async function writePriced(
    client: DbClient,
    chainId: number,
    market: Market,
    result: PriceBlocksResult,
    changes: StatsChanges,
    usdWritten: boolean,
  ): Promise<number> {
    const pools = market.state.pools;
    if (!usdWritten)
      await step("swaps", () =>
        saveSwapUsd(
          client,
          chainId,
          result.swaps.map((s) => ({
            blockNumber: s.blockNumber,
            logIndex: s.logIndex,
            time: s.time,
            ...s.usd,
          })),
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
      step("candles", () => foldPoolCandles(client, chainId, trades, market.folded)),
      step("series", () => foldTokenSeries(client, chainId, points, market.folded)),
    ]);
    for (const pool of result.touched) changes.movedPools.add(pool);
    if (result.prices) await storePrices(client, chainId, market, result.prices, changes);
    return result.swaps.length;
  }

  /** Stores the token_prices rows of `prices` that differ from the stored ones; notes the repriced tokens. */
  async function storePrices(
    client: DbClient,
    chainId: number,
    market: Market,
    prices: ReadonlyMap<string, TokenPrice>,
    changes: StatsChanges,
  ): Promise<void> {
    const fresh = await step("price_rows", () => freshPrices(market, prices));
    // Serialised and sent a statement's rows at a time (as saveTokenPrices splits them): a
    // batch that reprices every token holds one part's provenance texts, not all of them.
    for (const part of chunks(fresh)) {
      const { rows, usdMoved } = await step("price_rows", () => newPriceRows(market, part));
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

  /**
   * A batch's share of a large chain's figures (see `figuresPerBatch`): the prices of the tokens
   * of the pools it moved and of the next tokens in turn are stored; the next pools in turn are
   * returned, whose liquidity the statistics refresh (instead of every pool of every repriced
   * token). The turn starts over, with the chain's tokens and pools of then, once gone through.
   */
  async function shareOfFigures(
    client: DbClient,
    chainId: number,
    market: Market,
    changes: StatsChanges,
  ): Promise<Share> {
    const { state, turn } = market;
    const wanted = new Set<string>();
    for (const address of changes.movedPools) {
      const pool = state.pools.get(address);
      if (!pool) continue;
      wanted.add(pool.token0);
      wanted.add(pool.token1);
    }
    const tokens = nextInTurn(turn.tokens, perBatch.tokens, () => state.graph.poolsOf.keys());
    for (const token of tokens) wanted.add(token);
    const prices = await step("price", () =>
      pricesOfTokens(state.graph, referenceOf(chainId), pricingOptions, [...wanted], state.memo),
    );
    await storePrices(client, chainId, market, prices, changes);
    const pools = nextInTurn(turn.pools, perBatch.pools, () => state.pools.keys());
    // A token with more pools than a share (WETH, the stablecoins: summing their pools' figures
    // costs a share of the chain) has its statistics refreshed in its turn only.
    return { pools, hubs: { minPools: perBatch.pools || Number.POSITIVE_INFINITY, due: tokens } };
  }

  /**
   * The prices whose token_prices rows differ from the stored ones, in the rows' order (by
   * token): every price but those this market last stored unchanged (the same object, or one
   * that makes the same row: `sameRow`) and those without a row (no pool event yet).
   */
  function freshPrices(market: Market, prices: ReadonlyMap<string, TokenPrice>): TokenPrice[] {
    const fresh: TokenPrice[] = [];
    for (const [token, price] of prices) {
      if (price.asOfBlock === null || price.asOfTime === null) continue;
      const before = market.stored.get(token);
      if (before === price) continue;
      // The same row from a new object (a quote's price object moved, not what this row says):
      // kept as the stored one, so that the next batch sees it unchanged by identity.
      if (before && sameRow(before, price)) {
        market.stored.set(token, price);
        continue;
      }
      fresh.push(price);
    }
    return fresh.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  }

  /** The rows of fresh prices (`freshPrices`), now the stored ones; with the tokens whose USD price moved. */
  function newPriceRows(
    market: Market,
    fresh: readonly TokenPrice[],
  ): { rows: TokenPriceRow[]; usdMoved: Set<string> } {
    const byToken = new Map(fresh.map((price) => [price.token, price]));
    const rows = priceRows(byToken, pricingOptions);
    const usdMoved = new Set<string>();
    for (const row of rows) {
      // Serialised once (saveTokenPrices sends it as it is).
      row.provenanceJson = JSON.stringify(row.provenance);
      const before = market.stored.get(row.token);
      market.stored.set(row.token, byToken.get(row.token) as TokenPrice);
      // Unknown before (the first rows of a market loaded afresh): counted as moved.
      if (!before || !Object.is(finite(before.usdPrice), finite(row.usdPrice))) usdMoved.add(row.token);
    }
    return { rows, usdMoved };
  }

  /** Prices blocks (fromExclusive, toBlock] from the stored rows, in chunks. */
  async function processStored(
    client: DbClient,
    chainId: number,
    market: Market,
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
        market,
        await loadMarketEvents(client, chainId, cursor, end),
        changes,
      );
      cursor = end;
    }
    return swaps;
  }

  /** Per chain, a batch priced before its rows were inserted (see `swapUsd`), awaiting its afterBatch. */
  const pending = new Map<
    number,
    {
      client: DbClient;
      toBlock: number;
      /** The batch's swaps as priced (the very objects `afterBatch` gets once they are inserted). */
      swaps: readonly BatchSwap[];
      poolEvents: number;
      market: Market;
      result: PriceBlocksResult;
      /** The figures left for a later batch. */
      deferred: boolean;
      ms: Record<string, number>;
      started: number;
    }
  >();

  /**
   * Prices a batch before its swaps are inserted, when the market in memory is current and the
   * batch continues the last priced block (the common case), so that each swap row is written
   * once, with its USD figures. Otherwise (first batch, blocks to catch up) null: afterBatch
   * prices the inserted rows and updates them, as it always did.
   */
  async function swapUsd(
    client: DbClient,
    batch: Pick<
      IngestBatch,
      "chainId" | "fromBlock" | "toBlock" | "headBlock" | "swaps" | "poolEvents" | "newTokens"
    >,
  ): Promise<((swap: BatchSwap) => TradeUsd | undefined) | null> {
    const started = performance.now();
    const { chainId } = batch;
    pending.delete(chainId);
    steps = {};
    const sync = await getPricingSync(client, chainId);
    const kept = markets.get(chainId);
    if (!sync || sync.block !== batch.fromBlock - 1 || !kept) return null;
    if (kept.block !== sync.block || kept.writer !== sync.writer) return null;
    const market = await marketOf(client, chainId, sync, false);
    for (const token of batch.newTokens) setDecimals(market.state, token.address, token.decimals);
    const events = batchEvents(batch);
    const deferred = defers(market, batch);
    const result = await priceEvents(client, chainId, market, events, !deferred && !sharesFigures(market));
    pending.set(chainId, {
      client,
      toBlock: batch.toBlock,
      swaps: batch.swaps,
      poolEvents: batch.poolEvents.length,
      market,
      result,
      deferred,
      ms: steps,
      started,
    });
    const usd = new Map(result.swaps.map((s) => [s.key, s.usd]));
    return (swap) => usd.get(eventKey(swap.blockNumber, swap.logIndex));
  }

  async function afterBatch(client: DbClient, batch: IngestBatch): Promise<void> {
    const { chainId } = batch;
    const early = pending.get(chainId);
    pending.delete(chainId);
    const started = early?.started ?? performance.now();
    steps = early?.ms ?? {};
    if (early) {
      // The same transaction and batch, and every row of it was inserted (none was there
      // already): the prices stand.
      if (
        early.client === client &&
        early.toBlock === batch.toBlock &&
        early.poolEvents === batch.poolEvents.length &&
        early.swaps.length === batch.swaps.length &&
        early.swaps.every((swap, i) => swap === batch.swaps[i])
      ) {
        const changes = emptyStatsChanges();
        const swaps = await writePriced(client, chainId, early.market, early.result, changes, true);
        await finishBatch(client, batch, early.market, changes, started, swaps, 0, early.deferred);
        return;
      }
      // Otherwise the market moved by events that were not inserted: left out, loaded afresh below.
    }
    const sync = await getPricingSync(client, chainId);
    const priced = sync?.block ?? null;
    if (priced !== null && priced >= batch.toBlock) return;
    const changes = emptyStatsChanges();
    let cursor = batch.fromBlock - 1;
    let caughtUp = 0;
    // Blocks stored while no pricing was attached may have stored tokens too: load afresh then.
    const market = await marketOf(client, chainId, sync, priced === null || priced < cursor);
    for (const token of batch.newTokens) setDecimals(market.state, token.address, token.decimals);
    if (priced === null || priced < cursor) {
      // Blocks stored while no pricing was attached (or before the first batch): price them first.
      caughtUp = await processStored(client, chainId, market, priced ?? -1, cursor, changes);
    } else {
      cursor = priced;
    }
    const events = batchEvents(batch).filter((e) => e.blockNumber > cursor);
    const deferred = caughtUp === 0 && defers(market, batch);
    const swaps = await processEvents(
      client,
      chainId,
      market,
      events,
      changes,
      !deferred && !sharesFigures(market),
    );
    await finishBatch(client, batch, market, changes, started, swaps, caughtUp, deferred);
  }

  /** Stores the new priced block (and keeps the market for the next batch), then the statistics. */
  async function finishBatch(
    client: DbClient,
    batch: IngestBatch,
    market: Market,
    changes: StatsChanges,
    started: number,
    swaps: number,
    caughtUp: number,
    /** The market-wide figures are left for a later batch: what changed is kept for it. */
    deferred: boolean,
  ): Promise<void> {
    const { chainId } = batch;
    market.block = batch.toBlock;
    if (deferred) {
      market.writer = await setPricedBlock(client, chainId, batch.toBlock, "unchanged");
      addChanges(market.pending, changes);
      markets.set(chainId, market);
    } else {
      market.writer = await setPricedBlock(client, chainId, batch.toBlock);
      // What the batches that deferred changed, or, when that is not known, every pool.
      addChanges(changes, market.pending);
      if (market.pendingAll) for (const pool of market.state.pools.keys()) changes.tradedPools.add(pool);
      market.pending = emptyStatsChanges();
      market.pendingAll = false;
      market.figuresAt = performance.now();
      // A large chain: its share of the figures (the market is not yet back in the map, so a
      // failure here leaves it to be loaded afresh, as any failed batch does).
      const share = sharesFigures(market)
        ? await shareOfFigures(client, chainId, market, changes)
        : undefined;
      markets.set(chainId, market);
      await refreshFigures(client, chainId, market, changes, share);
    }
    const marketStarted = performance.now();
    // Deferred too: the next batch that does not defer folds every swap since market_sync's
    // built block (the windows keep their own cursor) and recomputes the windows once.
    const windows = deferred
      ? emptyWork()
      : await updateMarketWindows(client, chainId, batch.toBlock, () => now().getTime());
    logger.debug(
      {
        chain_id: chainId,
        from_block: batch.fromBlock,
        to_block: batch.toBlock,
        swaps,
        caught_up_swaps: caughtUp,
        deferred_figures: deferred,
        repriced_tokens: changes.repricedTokens.size,
        moved_pools: changes.movedPools.size,
        ms: Math.round(performance.now() - started),
        market_ms: Math.round((performance.now() - marketStarted) * 100) / 100,
        market_trades: windows.trades,
        market_rows: windows.rows,
        market_pools: windows.pools,
        market_tokens: windows.tokens,
        steps_ms: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      },
      "priced batch",
    );
  }

  /** The statistics of what changed, from the market in memory (market-stats.ts). */
  async function refreshFigures(
    client: DbClient,
    chainId: number,
    market: Market,
    changes: StatsChanges,
    /** A large chain's share (`shareOfFigures`; default: every figure that changed). */
    share?: Share,
  ): Promise<void> {
    // The stored USD prices, read once per market load (then kept by writePriced).
    if (!market.usd) market.usd = await step("stats_usd", () => loadTokenUsdPrices(client, chainId));
    const usd = market.usd;
    await step("stats", () =>
      refreshChangedStats(
        client,
        chainId,
        changes,
        now().getTime(),
        pricingOptions.liquidityFloorUsd,
        step,
        {
          pools: market.state.pools,
          decimals: market.state.decimals,
          graphPools: market.state.graphPools,
          poolsOf: market.state.graph.poolsOf,
          usd,
          balances: market.balances,
          pairStats: pairStatsMirrorOf(chainId),
          series: market.series,
        },
        share,
      ),
    );
  }

  async function afterRollback(client: DbClient, rollback: RollbackInfo): Promise<void> {
    const started = performance.now();
    const { chainId, ancestorBlock } = rollback;
    // Loaded again from the database at the next batch.
    markets.delete(chainId);
    pending.delete(chainId);
    pairStatsMirrorOf(chainId).pairs = null;
    const priced = await getPricedBlock(client, chainId);
    if (priced === null) return;
    // The figures stay as far behind as they were (then every pool's statistics are due).
    if (priced > ancestorBlock) await setPricedBlock(client, chainId, ancestorBlock, "unchanged");
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

    await rollbackMarketWindows(client, chainId, ancestorBlock, affected, () => now().getTime());
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
    swapUsd,
    afterBatch,
    afterRollback,
    refreshStats: async (db, chainId, at, signal) => {
      // One slide of a chain at a time in a database: a minute's slide that finds the last one
      // still running leaves it to finish (the next one covers the minutes since it began).
      const state = slideOf(db, chainId);
      // A slide at a given time waits for the running one (and any that started while it waited).
      while (state.running) {
        if (at === undefined) return state.running;
        await state.running.catch(() => undefined);
      }
      const time = at ?? now();
      const slide = slideChainStats(db, chainId, time, {
        liquidityFloorUsd: pricingOptions.liquidityFloorUsd,
        mirror: pairStatsMirrorOf(chainId),
        since: state.last,
        ...(options.slideChunks ? { chunks: options.slideChunks } : {}),
        signal,
        logger,
      }).then((result) => {
        // Finished: the next slide recomputes only what the clock moved since.
        state.last = time.getTime();
        return result;
      });
      state.running = slide;
      try {
        return await slide;
      } finally {
        if (state.running === slide) delete state.running;
      }
    },
  };
}

/**
 * A chain's market in memory: its state, the pricing_sync row (block, writing transaction) it is
 * current for (null until stored), and per token the price whose row was last stored.
 */
type Market = {
  state: MarketState;
  block: number | null;
  writer: string | null;
  /** Per token, the price whose row was last stored (compared by `sameRow`: no row text is kept). */
  stored: Map<string, TokenPrice>;
  /** `token_prices.usd_price` per token as stored (absent: no row); null until first read. */
  usd: Map<string, number | null> | null;
  /** The statistics' memo of pools' decimal-adjusted balances (market-stats.ts). */
  balances: StatsMarket["balances"];
  /** The statistics' memo of tokens' series at the window's start (market-stats.ts). */
  series: Map<string, SeriesEndsMemo>;
  /** The latest trade time folded into the stored candles and series by this market (aggregates.ts). */
  folded: FoldedUpTo;
  /** When the market-wide figures were last brought up to date, or the market loaded (performance.now()). */
  figuresAt: number;
  /**
   * The turn of a large chain's figures (see `figuresPerBatch`): the tokens and pools of the
   * chain when it started, and how far it went.
   */
  turn: { tokens: Turn; pools: Turn };
  /** What the batches that deferred the figures changed since (see `deferFigures`). */
  pending: StatsChanges;
  /** The figures fell behind before this market was loaded: every pool's statistics are due. */
  pendingAll: boolean;
};

/** A batch's share of a large chain's figures (market-stats.ts `refreshChangedStats`). */
type Share = {
  /** The pools whose liquidity is refreshed beside the moved ones, instead of every pool of a repriced token. */
  pools: ReadonlySet<string>;
  /** Tokens with more pools than `minPools` get their statistics only when `due` (their turn). */
  hubs: { minPools: number; due: ReadonlySet<string> };
};

/** A turn through a chain's tokens or pools: the ones of when it started, and how far it went. */
type Turn = { items: string[]; at: number };

/**
 * The next `size` items of a turn (all of them when 0); once gone through, the turn starts over
 * with the items of now (`all`).
 */
function nextInTurn(turn: Turn, size: number, all: () => Iterable<string>): Set<string> {
  if (turn.at >= turn.items.length) {
    turn.items = [...all()];
    turn.at = 0;
  }
  const end = Math.min(turn.items.length, turn.at + (size || turn.items.length));
  const next = new Set<string>();
  for (; turn.at < end; turn.at++) next.add(turn.items[turn.at] as string);
  return next;
}

/** Adds what `from` changed to `into`. */
function addChanges(into: StatsChanges, from: StatsChanges): void {
  for (const pool of from.tradedPools) into.tradedPools.add(pool);
  for (const pool of from.movedPools) into.movedPools.add(pool);
  for (const token of from.repricedTokens) into.repricedTokens.add(token);
}

/** A USD price as `saveTokenPrices` stores it: not finite → null; -0 → 0 (JSON carries it so). */
function storedUsd(value: number | null): number | null {
  const f = finite(value);
  return f === null ? null : f + 0;
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
