/**
 * Each chain's market kept in memory between batches (docs/PRICING.md, *The market in memory*),
 * with the pricing_sync row it is current for, and each chain's copy of its pools' liquidity. A batch takes
 * its chain's market out while it moves it and puts it back once pricing_sync holds its new
 * block, so that a batch that fails half-way leaves nothing half-moved behind.
 */
import type { DbClient } from "../store/db.js";
import { loadMarketPools, type PricingSync } from "../store/pricing-state.js";
import type { FoldedUpTo } from "./aggregates.js";
import { newTurn, type Turn } from "./figure-policy.js";
import { createMarketState, type MarketState } from "./market-state.js";
import {
  createPairLiquidityMirror,
  emptyStatsChanges,
  type PairLiquidityMirror,
  type SeriesEndsMemo,
  type StatsChanges,
} from "./market-stats.js";
import type { StepTimer } from "./step-timer.js";
import type { TokenPrice } from "./usd-prices.js";

/**
 * A chain's market in memory: its state, the pricing_sync row (block, writing transaction) it is
 * current for (null until stored), and per token the price whose row was last stored.
 */
export type Market = {
  state: MarketState;
  block: number | null;
  writer: string | null;
  /** Per token, the price whose row was last stored (compared by `sameRow`: no row text is kept). */
  stored: Map<string, TokenPrice>;
  /** `token_prices.usd_price` per token as stored (absent: no row); null until first read. */
  usd: Map<string, number | null> | null;
  /** The statistics' memo of tokens' series at the window's start (market-stats.ts). */
  series: Map<string, SeriesEndsMemo>;
  /** The latest trade time folded into the stored candles and series by this market (aggregates.ts). */
  folded: FoldedUpTo;
  /** When the market-wide figures were last brought up to date, or the market loaded (performance.now()). */
  figuresAt: number;
  /** The turn of a large chain's figures (figure-policy.ts): the tokens and pools of when it started. */
  turn: { tokens: Turn; pools: Turn };
  /** What the batches that deferred the figures changed since (figure-policy.ts `defersFigures`). */
  deferred: StatsChanges;
  /** The figures fell behind before this market was loaded: every pool's statistics are due. */
  deferredAll: boolean;
};

export type MarketCache = {
  /**
   * Takes the chain's market out of the cache: the one in memory while it is current for `sync`
   * (the row this stage last wrote) and `reload` is false, else loaded from the database.
   */
  take(client: DbClient, chainId: number, sync: PricingSync | null, reload: boolean): Promise<Market>;
  /** Puts a market back (its pricing_sync row now stored). */
  put(chainId: number, market: Market): void;
  /** The kept market, left in the cache (null: none). */
  peek(chainId: number): Market | null;
  /** Forgets the chain's market and its copy of the pools' liquidity (a rollback). */
  drop(chainId: number): void;
  /** The chain's copy of the pools' liquidity (market-stats.ts), shared with the minute slide. */
  pairLiquidityMirror(chainId: number): PairLiquidityMirror;
};

export function createMarketCache(step: StepTimer["step"]): MarketCache {
  const markets = new Map<number, Market>();
  // Apart from the markets (which a batch takes out while it runs): the minute slide updates them too.
  const mirrors = new Map<number, PairLiquidityMirror>();
  const pairLiquidityMirror = (chainId: number): PairLiquidityMirror => {
    let mirror = mirrors.get(chainId);
    if (!mirror) {
      mirror = createPairLiquidityMirror();
      mirrors.set(chainId, mirror);
    }
    return mirror;
  };
  return {
    async take(client, chainId, sync, reload) {
      const kept = markets.get(chainId);
      markets.delete(chainId);
      if (kept && !reload && sync && kept.block === sync.block && kept.writer === sync.writer) return kept;
      // What the copy of the liquidity holds may be a failed batch's: read again too.
      pairLiquidityMirror(chainId).pairs = null;
      const { pools, decimals } = await step("load", () => loadMarketPools(client, chainId));
      return {
        state: createMarketState(pools, decimals),
        block: null,
        writer: null,
        stored: new Map(),
        usd: null,
        series: new Map(),
        folded: { time: null },
        figuresAt: performance.now(),
        turn: { tokens: newTurn(), pools: newTurn() },
        deferred: emptyStatsChanges(),
        // What the batches that left the figures behind changed died with their process.
        deferredAll: sync !== null && sync.figuresBlock < sync.block,
      };
    },
    put(chainId, market) {
      markets.set(chainId, market);
    },
    peek(chainId) {
      return markets.get(chainId) ?? null;
    },
    drop(chainId) {
      markets.delete(chainId);
      pairLiquidityMirror(chainId).pairs = null;
    },
    pairLiquidityMirror,
  };
}
