import type { Address } from "viem";
import type { DeployedPool, Deployment } from "./deploy.js";
import { type PoolSpec, poolSpecs, type TokenKey } from "./market.js";
import { rawPriceFromUsd } from "./pool-math.js";
import { applySwap, type PoolState, poolRawPrice } from "./pool-state.js";

/** One pool crossed by a trade, and the side that goes in. */
export type Hop = { pool: DeployedPool; zeroForOne: boolean };
/** An exact-input trade along one or more pools of one protocol. */
export type Trade = { from: Address; hops: Hop[]; amountIn: bigint };

/**
 * What the planner believes about the market between reads of the chain: the pools' states,
 * estimated locally from the trades planned (exact for V2), and the market model's USD prices.
 */
export type MarketEstimates = {
  readonly deployment: Deployment;
  /** Pools whose estimate is known to be off (a liquidity change): read them with the next block. */
  readonly dirty: Set<string>;
  specOf(pool: DeployedPool): PoolSpec;
  stateOf(pool: DeployedPool): PoolState;
  /** Replaces every pool's estimate with states read from the chain. */
  setStates(states: Map<string, PoolState>): void;
  /** The market's price of a token with its unit, as pool-math takes them. */
  unit(key: TokenKey): { priceUsd: number; decimals: number };
  /** Raw amount of a token worth `usd` at the market price (rounded down). */
  rawAmount(key: TokenKey, usd: number): bigint;
  /** log(pool price / market price) of token0 in token1: > 0 when token0 is dear in the pool. */
  deviation(pool: DeployedPool): number;
  /** Applies a trade to the estimates, hop by hop (each hop's output is the next one's input). */
  applyTrade(trade: Trade): void;
};

export function createMarketEstimates(options: {
  deployment: Deployment;
  /** The market model's USD price of a token now. */
  priceUsd: (key: TokenKey) => number;
}): MarketEstimates {
  const { deployment, priceUsd } = options;
  let states = new Map<string, PoolState>();
  const specOf = (pool: DeployedPool): PoolSpec => {
    const spec = poolSpecs.find((s) => s.key === pool.key);
    if (spec === undefined) throw new Error(`pool ${pool.key} is not in the market`);
    return spec;
  };
  const stateOf = (pool: DeployedPool): PoolState => {
    const state = states.get(pool.key);
    if (state === undefined) throw new Error(`no state for pool ${pool.key}`);
    return state;
  };
  const unit = (key: TokenKey) => ({
    priceUsd: priceUsd(key),
    decimals: deployment.tokens[key].unitDecimals,
  });
  return {
    deployment,
    dirty: new Set(),
    specOf,
    stateOf,
    setStates(next) {
      states = next;
    },
    unit,
    rawAmount: (key, usd) =>
      BigInt(Math.floor((usd / priceUsd(key)) * 10 ** deployment.tokens[key].unitDecimals)),
    deviation: (pool) =>
      Math.log(poolRawPrice(stateOf(pool)) / rawPriceFromUsd(unit(pool.token0Key), unit(pool.token1Key))),
    applyTrade(trade) {
      let amount = trade.amountIn;
      for (const hop of trade.hops) {
        const result = applySwap(stateOf(hop.pool), hop.pool.fee, hop.zeroForOne, amount);
        states.set(hop.pool.key, result.state);
        amount = result.amountOut;
      }
    },
  };
}
