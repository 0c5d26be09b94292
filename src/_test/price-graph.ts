import type { GraphPool, ReferenceTokens } from "../pricing/usd-prices.js";

/** The pricing options of the routing tests: a 10,000 USD liquidity floor, at most 10 % deviation. */
export const graphOptions = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };

/** Reference tokens by name: WETH the wrapped native, with these stablecoins and wrapped bitcoins. */
export function referenceTokens(
  stablecoins: string[] = ["usdc"],
  wrappedBtc: string[] = [],
): ReferenceTokens {
  return { stablecoins, wrappedNative: "weth", wrappedBtc, others: [] };
}

/** A pool of the routing graph from human figures: price of token0 in token1 and the depth of each side, in units. */
export function graphPool(
  address: string,
  token0: string,
  token1: string,
  price0: number,
  depth0: number,
  depth1: number,
): GraphPool {
  return { address, dex: "test", token0, token1, price0, depth0, depth1, stateBlock: 1, stateTime: 1000 };
}
