/**
 * The pricing stage behind the indexer's derived-data seam: inside each batch's transaction it
 * prices the batch's blocks, values their swaps, grows candles and USD series, stores token
 * prices and refreshes the statistics (batch-pricing.ts); after a rollback it rebuilds all of
 * them as a fresh index would have them (rollback-pricing.ts); each minute it slides the 24-hour
 * figures (slide.ts, scheduled by slide-schedule.ts).
 *
 * The market (pools, their states, the routing graph, the token prices last stored) is kept in
 * memory between batches (market-cache.ts): loaded from the database at a chain's first batch,
 * and again whenever `pricing_sync` is not the row this stage last wrote itself (a batch whose
 * transaction rolled back, a rollback, another writer), so that it always equals what the
 * database holds and a batch costs its own events, not the chain's pool count.
 */
import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import type { Db } from "../store/db.js";
import type { DerivedData } from "../sync/derived.js";
import { priceBatch } from "./batch-pricing.js";
import type { DeferFigures, FiguresPerBatch } from "./figure-policy.js";
import { createMarketCache } from "./market-cache.js";
import type { MarketWork } from "./market-windows.js";
import { rollbackPricing } from "./rollback-pricing.js";
import { type SlideOptions, type SlideResult, slideChainStats } from "./slide.js";
import { createSlideSchedule } from "./slide-schedule.js";
import type { Stage } from "./stage.js";
import { createStepTimer } from "./step-timer.js";
import type { ReferenceTokens } from "./usd-prices.js";

export { priceRows } from "./price-rows.js";

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
  ): Promise<{ tokens: number; windows: MarketWork }>;
};

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
  deferFigures?: DeferFigures;
  /**
   * A chain with more than `fromPools` pools (and more tokens or pools than a share) refreshes
   * its market-wide figures a share per batch (docs/PRICING.md, *Figures of a large chain, a
   * share per batch*): the batch's own tokens and pools, and the next `tokens` tokens and `pools`
   * pools in turn. A share of 0: every figure every batch, whatever the chain's size. Default: the
   * configuration's `pricing.figuresPerBatch`.
   */
  figuresPerBatch?: FiguresPerBatch;
  /** The minute slide's chunks (slide.ts `SlideOptions`); default: 64 first, toward 50 ms, a rest as long. */
  slideChunks?: SlideOptions["chunks"];
}): Pricing {
  const { logger } = options;
  const references = new Map<number, ReferenceTokens>(
    options.config.chains.map((c) => [c.id, c.referenceTokens] as const),
  );
  const timer = createStepTimer();
  const now = options.now ?? (() => new Date());
  const stage: Stage = {
    options: {
      liquidityFloorUsd: options.config.pricing.liquidityFloorUsd,
      maxDeviation: options.config.pricing.maxDeviation,
    },
    referenceOf: (chainId) => {
      const reference = references.get(chainId);
      if (!reference) throw new Error(`pricing: chain ${chainId} is not configured`);
      return reference;
    },
    now,
    markets: createMarketCache(timer.step),
    deferFigures: options.deferFigures ?? { minBlocks: 64, maxAgeMs: 60_000 },
    perBatch: options.figuresPerBatch ??
      options.config.pricing.figuresPerBatch ?? { tokens: 0, pools: 0, fromPools: 0 },
    timer,
    logger,
  };
  const slides = createSlideSchedule<SlideResult>(now);

  return {
    priceBatch: (client, batch) => priceBatch(stage, client, batch),
    afterRollback: async (client, rollback) => {
      const started = performance.now();
      const pools = await rollbackPricing(stage, client, rollback);
      if (pools > 0)
        logger.debug(
          {
            chain_id: rollback.chainId,
            ancestor_block: rollback.ancestorBlock,
            pools,
            ms: Math.round(performance.now() - started),
          },
          "rolled back derived data",
        );
    },
    // One slide of a chain at a time in a database: a minute's slide that finds the last one
    // still running leaves it to finish (the next one covers the minutes since it began).
    refreshStats: (db, chainId, at, signal) =>
      slides.run(db, chainId, at, (time, since) =>
        slideChainStats(db, chainId, time, {
          liquidityFloorUsd: stage.options.liquidityFloorUsd,
          wrappedNative: stage.referenceOf(chainId).wrappedNative,
          mirror: stage.markets.pairLiquidityMirror(chainId),
          since,
          ...(options.slideChunks ? { chunks: options.slideChunks } : {}),
          signal,
          logger,
        }),
      ),
  };
}
