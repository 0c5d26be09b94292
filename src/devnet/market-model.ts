import type { DeployedToken } from "./deploy.js";
import { type TokenKey, tokenSpec } from "./market.js";
import type { Random } from "./random.js";

/**
 * The "true" market the simulated traders believe in: one USD price per token, moving as a
 * random walk with trends. Every pool is nudged towards these prices, so pools of the same token
 * agree roughly, as arbitrage makes them agree on a real chain.
 */
export type MarketModel = {
  /** Moves the prices forward to `timestamp` (unix seconds); an earlier time changes nothing. */
  advanceTo(timestamp: number): void;
  priceUsd(token: TokenKey): number;
};

/** Trends last about this long before a new one is drawn. */
const meanTrendDays = 1.5;
/** Pull back towards the initial price per day: keeps a week's wandering within tens of percent. */
const meanReversionPerDay = 0.25;

/**
 * Log price = initial + ETH beta × (ETH's own move) + own move. Each own move is an
 * Ornstein-Uhlenbeck walk with a drift (the trend) redrawn at random times; stablecoins
 * (volatility 0) stay at their price.
 */
export function createMarketModel(options: {
  tokens: Record<TokenKey, DeployedToken>;
  random: Random;
  startTimestamp: number;
}): MarketModel {
  const { random } = options;
  const tokens = Object.values(options.tokens);
  const own = new Map<TokenKey, { move: number; trendPerDay: number; trendEnds: number }>();
  const newTrend = (volatility: number) => random.normal() * volatility * 1.2;
  for (const token of tokens) {
    const volatility = tokenSpec(token.key).dailyVolatility;
    own.set(token.key, {
      move: 0,
      trendPerDay: newTrend(volatility),
      trendEnds: options.startTimestamp + random.exponential(meanTrendDays) * 86_400,
    });
  }
  let now = options.startTimestamp;

  return {
    advanceTo(timestamp) {
      if (timestamp <= now) return;
      const days = (timestamp - now) / 86_400;
      for (const token of tokens) {
        const spec = tokenSpec(token.key);
        const state = own.get(token.key);
        if (state === undefined || spec.dailyVolatility === 0) continue;
        if (timestamp >= state.trendEnds) {
          state.trendPerDay = newTrend(spec.dailyVolatility);
          state.trendEnds = timestamp + random.exponential(meanTrendDays) * 86_400;
        }
        state.move +=
          (state.trendPerDay - meanReversionPerDay * state.move) * days +
          spec.dailyVolatility * Math.sqrt(days) * random.normal();
      }
      now = timestamp;
    },
    priceUsd(key) {
      const token = options.tokens[key];
      const spec = tokenSpec(key);
      const ethMove = own.get("WETH")?.move ?? 0;
      const move = (own.get(key)?.move ?? 0) + spec.ethBeta * ethMove;
      return token.initialPriceUsd * Math.exp(move);
    },
  };
}

/**
 * How busy trading is at a time, 1 on an ordinary weekday hour: quiet at night UTC (Asia only),
 * busiest when Europe and the US overlap, a bit quieter at weekends.
 *
 * The demo's history ends at the wall clock, so how much it holds depends on the hour and the
 * weekday of the run (a day ending on a Sunday has about a quarter fewer blocks than one ending
 * on a Wednesday). Whatever uses a history counts what it wrote (the simulator's HistoryStats,
 * the chain itself) rather than assuming an amount.
 */
export function tradingActivity(timestamp: number): number {
  const date = new Date(timestamp * 1000);
  const hour = date.getUTCHours();
  const byHour = hour < 6 ? 0.25 : hour < 8 ? 0.6 : hour < 12 ? 1 : hour < 17 ? 1.35 : hour < 21 ? 1 : 0.6;
  const day = date.getUTCDay();
  return byHour * (day === 0 || day === 6 ? 0.75 : 1);
}
