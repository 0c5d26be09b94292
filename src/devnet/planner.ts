// The simulator's pure half: what to trade next, from the market state and a seeded random. It
// never talks to a node; the simulator (simulator.ts) sends what it plans and brings back reads.

import type { Deployment } from "./deploy.js";
import { peripheryOf } from "./deploy.js";
import { devnetFamilyOf } from "./families/index.js";
import {
  type LiquidityBook,
  type LiquidityContext,
  planLiquidityChange,
  planRemovals,
  type RemovalIntent,
} from "./liquidity-planning.js";
import { routeSpecs } from "./market.js";
import { createMarketEstimates, type MarketEstimates, type Trade } from "./market-estimates.js";
import { createMarketModel, type MarketModel, tradingActivity } from "./market-model.js";
import type { PoolState } from "./pool-state.js";
import type { Random } from "./random.js";
import type { RpcCall } from "./rpc.js";
import {
  planArbitrage,
  planRandomTrade,
  type Route,
  routeHops,
  type TradeContext,
  tradeTx,
} from "./trade-planning.js";
import type { TxRequest } from "./transactions.js";

export type { Hop, Trade } from "./market-estimates.js";

// Tuning of the simulated market. Blocks are sparse (minutes apart by day, longer at night) and
// carry a few trades each: Hardhat's EVM traces every step, so a swap costs it ~2 ms of CPU, and
// a week of history must be written in seconds.
/** Mean seconds between history blocks at activity 1 (divided by the hour's activity). */
const meanBlockGapSeconds = 300;
/** Random trades per history block beyond the first, at activity 1 (Poisson mean). */
const extraTradesPerBlock = 1.9;
/** Per block: chance of a liquidity change at activity 1. */
const liquidityChangeChance = 0.03;
/** Per block: chance of a liquidity change in the Algebra pools (their own stream), at activity 1. */
const algebraLiquidityChangeChance = 0.03;
/**
 * The pools' state is estimated locally from the trades sent (exact for V2) and read from the
 * chain every this many blocks, and after any liquidity change.
 */
const refreshEveryBlocks = 8;

export type PlannedBlock = {
  txs: TxRequest[];
  /** The trades in block order, replayed on a fresh read of the pools. */
  trades: Trade[];
  expectedSwaps: number;
  liquidityChanges: number;
  intents: RemovalIntent[];
  /** Reads (other than the pools' state) sent with the block; the next block's removals use them. */
  reads: RpcCall[];
  /** Whether the batch reads every pool's state first. */
  refresh: boolean;
  /** Pools known to be off when the block was planned; the read clears them. */
  readDirty: string[];
};

/** How many trades a block gets: a number of random ones on top of due arbitrage, or 0-5 in all. */
export type TradeBudget = { randomTrades: number } | { totalTrades: number };

export type Planner = {
  /**
   * Starts again from what the chain holds: every pool's state and the id the next V3 position
   * gets. The first call also starts the market model at `startTimestamp`.
   */
  reset(chain: { states: Map<string, PoolState>; nextTokenId: bigint; startTimestamp: number }): void;
  /** Plans the block dated `timestamp`: pending removals, arbitrage, random trades, maybe a liquidity change. */
  planBlock(timestamp: number, budget: TradeBudget): PlannedBlock;
  /**
   * Takes in a sent block's reads: the pools' states (when `planned.refresh`), as of before the
   * block, on which its trades and those of `later` blocks already planned are replayed; and the
   * other reads, for the removals of the next block.
   */
  settle(
    planned: PlannedBlock,
    reads: { poolStates: Map<string, PoolState> | undefined; results: readonly unknown[] },
    later: readonly Trade[],
  ): void;
};

/** Creates the planner of a deployment; its plans depend on `random`, the market and the reads alone. */
export function createPlanner(options: { deployment: Deployment; random: Random }): Planner {
  const { deployment, random } = options;
  const periphery = peripheryOf(deployment);
  let model: MarketModel | undefined;
  const marketModel = (): MarketModel => {
    if (model === undefined) throw new Error("the planner has not been reset with the chain's state");
    return model;
  };
  const estimates: MarketEstimates = createMarketEstimates({
    deployment,
    priceUsd: (key) => marketModel().priceUsd(key),
  });
  // The pools of the families with a random stream of their own (Algebra) trade on it, so that
  // every other pool's history is the same with or without them; each of a block's random trades
  // goes to them with their share of the activity.
  const ownStream = (pool: Deployment["pools"][number]) => devnetFamilyOf(pool.protocol).ownStream;
  const mainPools = deployment.pools.filter((pool) => !ownStream(pool));
  const algebraPools = deployment.pools.filter(ownStream);
  const algebraRandom = random.fork("algebra");
  const algebraKeys = new Set(algebraPools.map((pool) => pool.key));
  const weightsOf = (pools: readonly Deployment["pools"][number][]) =>
    pools.map((pool) => estimates.specOf(pool).activity);
  const poolWeights = weightsOf(mainPools);
  const algebraWeights = weightsOf(algebraPools);
  const sum = (weights: readonly number[]) => weights.reduce((a, b) => a + b, 0);
  const algebraShare = sum(algebraWeights) / (sum(poolWeights) + sum(algebraWeights));
  const routes: Route[] = routeSpecs.map((spec) => ({ spec, hops: routeHops(deployment, spec) }));
  const book: LiquidityBook = {
    nextTokenId: 1n,
    lpPositions: [],
    busyV2Removals: new Set(),
    v4Positions: new Map(),
    algebraPositions: new Map(),
  };
  const liquidity: LiquidityContext = {
    estimates,
    periphery,
    liquidityProviders: deployment.accounts.liquidityProviders,
    v4ModifyLiquidityRouter: deployment.v4.modifyLiquidityRouter,
    v4DonateRouter: deployment.v4.donateRouter,
    algebraCallee: deployment.algebra.callee,
    pools: mainPools,
    poolWeights,
    book,
  };
  const routers = { v4SwapRouter: deployment.v4.swapRouter, algebraCallee: deployment.algebra.callee };
  let pendingRemovals: { intents: RemovalIntent[]; results: readonly unknown[] } = {
    intents: [],
    results: [],
  };
  let blockIndex = 0;

  return {
    reset(chain) {
      model ??= createMarketModel({
        tokens: deployment.tokens,
        random: random.fork("market"),
        startTimestamp: chain.startTimestamp,
      });
      estimates.setStates(chain.states);
      estimates.dirty.clear();
      book.nextTokenId = chain.nextTokenId;
    },

    planBlock(timestamp, budget) {
      marketModel().advanceTo(timestamp);
      const planned: PlannedBlock = {
        txs: [],
        trades: [],
        expectedSwaps: 0,
        liquidityChanges: 0,
        intents: [],
        reads: [],
        // Read the pools now and then, and after liquidity changes (which are not estimated).
        // (An Algebra pool's change waits for the periodic read: an extra read would move the
        // other pools' estimates, and so their history.)
        refresh:
          blockIndex % refreshEveryBlocks === 0 || [...estimates.dirty].some((key) => !algebraKeys.has(key)),
        readDirty: [...estimates.dirty],
      };
      const pending = pendingRemovals;
      pendingRemovals = { intents: [], results: [] };
      planRemovals(liquidity, pending, planned);
      const trading: TradeContext = {
        estimates,
        traders: deployment.accounts.traders,
        routes,
        pools: mainPools,
        poolWeights,
        addTrade(trade) {
          if (trade.amountIn <= 0n) return;
          estimates.applyTrade(trade);
          planned.trades.push(trade);
          planned.txs.push(tradeTx(periphery, trade, routers));
          planned.expectedSwaps += trade.hops.length;
        },
      };
      // Live blocks carry 0-5 trades in all; history blocks take every arbitrage that is due.
      const maxArbitrage =
        "totalTrades" in budget ? Math.min(2, budget.totalTrades) : Number.POSITIVE_INFINITY;
      const arbitrage = planArbitrage(trading, random, maxArbitrage);
      const randomTrades = "totalTrades" in budget ? budget.totalTrades - arbitrage : budget.randomTrades;
      for (let i = 0; i < randomTrades; i++) planRandomTrade(trading, random);
      if (random.chance(liquidityChangeChance * tradingActivity(timestamp))) {
        planLiquidityChange(liquidity, random, planned);
      }
      if (algebraPools.length > 0) {
        const algebraTrading = { ...trading, routes: [], pools: algebraPools, poolWeights: algebraWeights };
        planArbitrage(algebraTrading, algebraRandom, Math.min(1, maxArbitrage));
        const trades = "totalTrades" in budget ? budget.totalTrades : budget.randomTrades;
        for (let i = 0; i < trades; i++) {
          if (algebraRandom.chance(algebraShare)) planRandomTrade(algebraTrading, algebraRandom);
        }
        if (algebraRandom.chance(algebraLiquidityChangeChance * tradingActivity(timestamp))) {
          planLiquidityChange(
            { ...liquidity, pools: algebraPools, poolWeights: algebraWeights },
            algebraRandom,
            planned,
          );
        }
      }
      blockIndex++;
      return planned;
    },

    settle(planned, reads, later) {
      if (reads.poolStates !== undefined) {
        estimates.setStates(reads.poolStates);
        for (const trade of [...planned.trades, ...later]) estimates.applyTrade(trade);
        for (const key of planned.readDirty) estimates.dirty.delete(key);
      }
      pendingRemovals = { intents: planned.intents, results: reads.results };
    },
  };
}

/**
 * The history's blocks: when each is due and how many random trades it carries, a function of
 * `random` and the range alone. Fewer blocks (and fewer trades in each) in quiet hours.
 */
export function* historySchedule(
  random: Random,
  fromSeconds: number,
  untilSeconds: number,
): Generator<{ time: number; randomTrades: number }> {
  let t = fromSeconds;
  for (;;) {
    const gap = random.exponential(meanBlockGapSeconds) / tradingActivity(t);
    t += Math.max(1, Math.round(gap));
    if (t > untilSeconds) return;
    yield { time: t, randomTrades: 1 + random.poisson(extraTradesPerBlock * tradingActivity(t)) };
  }
}
