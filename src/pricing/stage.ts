/**
 * What the pieces of the pricing stage share (pricing.ts builds it once per stage): the pricing
 * options, each chain's reference tokens, the clock, the markets in memory, the figures' policy,
 * the batch's step timer and the logger.
 */
import type { Logger } from "../internal/logger.js";
import type { DeferFigures, FiguresPerBatch } from "./figure-policy.js";
import type { MarketCache } from "./market-cache.js";
import type { StepTimer } from "./step-timer.js";
import type { PricingOptions, ReferenceTokens } from "./usd-prices.js";

export type Stage = {
  options: PricingOptions;
  /** The chain's reference tokens; throws for a chain not configured. */
  referenceOf(chainId: number): ReferenceTokens;
  /** The clock of the 24-hour statistics and the market windows. */
  now(): Date;
  markets: MarketCache;
  deferFigures: DeferFigures;
  perBatch: FiguresPerBatch;
  timer: StepTimer;
  logger: Logger;
};
