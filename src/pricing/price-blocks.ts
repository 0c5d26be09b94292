import type { MarketEvent, MarketPool, SwapUsd } from "../model/index.js";
import type { CandleTrade } from "./candles.js";
import { lazyUsdPrices } from "./lazy-prices.js";
import { graphPoolOf, type MarketState } from "./market-state.js";
import { applyEvent, updateGraphPool } from "./pool-state.js";
import type { SeriesPoint } from "./series.js";
import { eventKey, sideAmounts, type Trade, tradeOf } from "./trade.js";
import { valueTrade } from "./trade-usd.js";
import {
  computeUsdPrices,
  createRoutingGraph,
  type GraphPool,
  noteNewest,
  type PricingOptions,
  type ReferenceTokens,
  type TokenPrice,
  withUnpriced,
} from "./usd-prices.js";

/** A swap with its trade and USD figures. */
export type PricedSwap = {
  pool: string;
  blockNumber: number;
  logIndex: number;
  key: number;
  /** ms */
  time: number;
  /** Null when the swap has no price (decimals unknown, a zero side). */
  trade: Trade | null;
  usd: SwapUsd;
};

export type PriceBlocksResult = {
  swaps: PricedSwap[];
  /** Every token's price after the last event; null when there was no event or none was wanted (`fullPrices`). */
  prices: Map<string, TokenPrice> | null;
  /** Pools whose state the events changed. */
  touched: Set<string>;
};

/**
 * Walks events (ascending by block, log index) block by block: applies each block's events to
 * the pools' states, then prices every token from the states at the end of the block and values
 * the block's swaps with those prices. End-of-block prices make a trade's USD figures a function
 * of the chain up to its block only (never of how blocks were batched) and ignore what happens
 * inside a block (a sandwich's front-run, a flash loan).
 */
export type PriceBlocksInput = {
  /** Moved in place by the events (pool states, routing graph, memo). */
  market: MarketState;
  reference: ReferenceTokens;
  options: PricingOptions;
  events: readonly MarketEvent[];
  /**
   * Whether every token's price is wanted after the last block (default): false when only the
   * trades' are (a batch whose stored figures are left for later: `prices` is then null).
   */
  fullPrices?: boolean;
};

export function priceBlocks(input: PriceBlocksInput): PriceBlocksResult {
  const walk = walkBlocks(input);
  for (;;) {
    const next = walk.next();
    if (next.done) return next.value;
  }
}

/**
 * priceBlocks in slices: the same walk, giving the event loop a turn whenever a slice of about
 * `sliceMs` has run (between two blocks). A backfill batch of tens of blocks at 10⁴–10⁵ pools
 * prices for seconds; in one process with the API (`tokenmarket start`) the API answers
 * meanwhile. The market is the batch's alone while it moves (taken out of the stage's map), so
 * nothing else reads it between slices.
 */
export async function priceBlocksInSlices(input: PriceBlocksInput, sliceMs = 50): Promise<PriceBlocksResult> {
  const walk = walkBlocks(input);
  let sliceStart = performance.now();
  for (;;) {
    const next = walk.next();
    if (next.done) return next.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/** The walk of priceBlocks, pausing (`yield`) after each block whose trades it valued. */
function* walkBlocks(input: PriceBlocksInput): Generator<void, PriceBlocksResult, void> {
  const { market, reference, options, events } = input;
  const fullPrices = input.fullPrices ?? true;
  const { pools, decimals, graphPools, graph, memo } = market;
  const decimalsOf = (token: string) => decimals.get(token) ?? null;

  const swaps: PricedSwap[] = [];
  const touched = new Set<string>();
  let prices: Map<string, TokenPrice> | null = null;
  let stale = false;
  let i = 0;
  while (i < events.length) {
    const block = (events[i] as MarketEvent).blockNumber;
    const blockSwaps: MarketEvent[] = [];
    const blockPools = new Set<MarketPool>();
    for (; i < events.length && (events[i] as MarketEvent).blockNumber === block; i++) {
      const event = events[i] as MarketEvent;
      const pool = pools.get(event.pool);
      if (!pool) continue;
      applyEvent(pool.state, event, event.swap ?? undefined);
      blockPools.add(pool);
      touched.add(pool.address);
      if (event.swap) blockSwaps.push(event);
    }
    for (const pool of blockPools) {
      const graphPool = graphPools.get(pool.address) as GraphPool;
      updateGraphPool(graphPool, pool, pool.state, decimalsOf(pool.token0), decimalsOf(pool.token1));
      noteNewest(graph, graphPool);
    }
    stale = true;
    if (blockSwaps.length === 0) continue;
    // The block's trades read the priced tokens only; every token's entry is built once, below.
    // Before the batch's last block, only the traded tokens' prices are needed (the stored rows
    // are the last block's): asked for lazily, the full walk's entries without walking every
    // token; the full walk when the question cannot be settled within its budget.
    const lazy =
      i < events.length || !fullPrices
        ? lazyUsdPrices(graph, reference, options, tokensOf(blockSwaps, pools))
        : null;
    if (lazy) {
      prices = lazy;
    } else {
      prices = computeUsdPrices(graph, reference, options, memo, true);
      stale = false;
    }
    for (const event of blockSwaps) {
      const pool = pools.get(event.pool) as MarketPool;
      const d0 = decimalsOf(pool.token0);
      const d1 = decimalsOf(pool.token1);
      const trade = d0 !== null && d1 !== null && event.swap ? tradeOf(event.swap, d0, d1) : null;
      swaps.push({
        pool: pool.address,
        blockNumber: event.blockNumber,
        logIndex: event.logIndex,
        key: eventKey(event.blockNumber, event.logIndex),
        time: event.time,
        trade,
        usd: valueTrade({
          pool: graphPools.get(pool.address) as GraphPool,
          trade,
          amounts: event.swap ? sideAmounts(event.swap, d0, d1) : { exact0: null, exact1: null },
          price0: prices.get(pool.token0),
          price1: prices.get(pool.token1),
          reference,
          options,
        }),
      });
    }
    yield;
  }
  if (!fullPrices) return { swaps, prices: null, touched };
  if (stale) prices = computeUsdPrices(graph, reference, options, memo);
  else if (prices) prices = withUnpriced(graph, options, prices, memo);
  return { swaps, prices, touched };
}

/** The tokens of the pools of a block's swaps. */
function tokensOf(swaps: readonly MarketEvent[], pools: ReadonlyMap<string, MarketPool>): Set<string> {
  const tokens = new Set<string>();
  for (const event of swaps) {
    const pool = pools.get(event.pool) as MarketPool;
    tokens.add(pool.token0);
    tokens.add(pool.token1);
  }
  return tokens;
}

/** Every token's price from the pools' current states. */
export function pricesOfPools(input: {
  pools: ReadonlyMap<string, MarketPool>;
  decimals: ReadonlyMap<string, number | null>;
  reference: ReferenceTokens;
  options: PricingOptions;
}): Map<string, TokenPrice> {
  const graphPools = [...input.pools.values()].map((pool) => graphPoolOf(pool, input.decimals));
  return computeUsdPrices(createRoutingGraph(input.decimals, graphPools), input.reference, input.options);
}

/** A stored figure as the candles fold it: a non-finite value is stored as null (model `finite`). */
const storedOrNull = (value: number | null): number | null =>
  value !== null && Number.isFinite(value) ? value : null;

/**
 * The candle trade of a priced swap; null when the swap has no price. Its USD prices are the
 * swap's own stored `token0_usd` / `token1_usd`, so the USD candles grown at ingest are those
 * rebuilt from the stored swaps.
 */
export function candleTradeOf(swap: {
  key: number;
  time: number;
  trade: Trade | null;
  volumeUsd: number | null;
  token0Usd: number | null;
  token1Usd: number | null;
}): CandleTrade | null {
  if (!swap.trade) return null;
  return {
    key: swap.key,
    time: swap.time,
    price: swap.trade.price,
    price1: swap.trade.price1,
    volume0: swap.trade.volume0,
    volume1: swap.trade.volume1,
    exact0: swap.trade.exact0,
    exact1: swap.trade.exact1,
    volumeUsd: storedOrNull(swap.volumeUsd) ?? 0,
    usd0: storedOrNull(swap.token0Usd),
    usd1: storedOrNull(swap.token1Usd),
    buy0: swap.trade.buy0,
  };
}

/** The USD series points of a priced swap: up to one per token of the pool. */
export function seriesPointsOf(
  swap: {
    key: number;
    time: number;
    trade: Trade | null;
    series0Usd: number | null;
    series1Usd: number | null;
  },
  token0: string,
  token1: string,
): { token: string; point: SeriesPoint }[] {
  const trade = swap.trade;
  if (!trade) return [];
  const out: { token: string; point: SeriesPoint }[] = [];
  if (swap.series0Usd !== null) {
    out.push({
      token: token0,
      point: {
        key: swap.key,
        time: swap.time,
        priceUsd: swap.series0Usd,
        volume: trade.volume0,
        volumeExact: trade.exact0,
      },
    });
  }
  if (swap.series1Usd !== null) {
    out.push({
      token: token1,
      point: {
        key: swap.key,
        time: swap.time,
        priceUsd: swap.series1Usd,
        volume: trade.volume1,
        volumeExact: trade.exact1,
      },
    });
  }
  return out;
}
