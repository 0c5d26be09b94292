import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  exact,
  exactDiv,
  exactMul,
  exactOfDouble,
  referenceRatioToNumber,
  toDouble,
  weightedMean,
} from "../_test/exact.js";
import { graphOptions, graphPool, referenceTokens } from "../_test/price-graph.js";
import type { PoolPriceState } from "../model/index.js";
import { applyEvent, depthOf } from "./pool-state.js";
import { computeUsdPrices, createRoutingGraph, type GraphPool, type TokenPrice } from "./usd-prices.js";

const reference = referenceTokens(["usdc", "usdt"], ["wbtc"]);
const options = graphOptions;
const pool = graphPool;

/** A small market: the anchors, WETH and WBTC against them, tokens one and two hops away. */
function market(): GraphPool[] {
  return [
    pool("usdc-weth", "usdc", "weth", 1 / 3000, 3_000_000, 1000), // WETH 3,000, $6M
    pool("wbtc-usdc", "wbtc", "usdc", 60_000, 20, 1_200_000), // WBTC 60,000
    pool("wbtc-weth", "wbtc", "weth", 20.1, 20, 400), // a WBTC price 0.5 % off, not used: WETH is not an anchor
    pool("link-usdc", "link", "usdc", 15, 100_000, 2_000_000), // LINK 15, $4M deep
    pool("link-weth", "link", "weth", 0.005, 4000, 10), // LINK 15, thin but above the floor ($60k)
    pool("kibl-weth", "kibl", "weth", 0.0042 / 3000, 35_714_285, 50), // KIBL only against WETH
    pool("dust-weth", "dust", "weth", 0.013 / 3000, 100_000, 0.3), // $1,800: below the floor
  ];
}

function decimalsOf(pools: GraphPool[], unknown: string[] = []): Map<string, number | null> {
  const map = new Map<string, number | null>();
  for (const p of pools) for (const t of [p.token0, p.token1]) map.set(t, unknown.includes(t) ? null : 18);
  return map;
}

function pricesOf(pools: GraphPool[], unknown: string[] = []): Map<string, TokenPrice> {
  return computeUsdPrices(createRoutingGraph(decimalsOf(pools, unknown), pools), reference, options);
}

const usd = (prices: Map<string, TokenPrice>, token: string) => prices.get(token)?.usdPrice;

describe("computeUsdPrices: exact rationals, rounded once", () => {
  /** A pool whose spot price is given as an exact ratio of integers (as from reserves or sqrtPriceX96). */
  const exactPool = (
    address: string,
    token0: string,
    token1: string,
    num: bigint,
    den: bigint,
    depth0: number,
    depth1: number,
  ) => ({
    ...pool(address, token0, token1, Number(num) / Number(den), depth0, depth1),
    ratio0: { num, den },
  });

  it("prices through a route as the exact product and combines pools as the exact weighted mean", () => {
    const pools = [
      exactPool("usdc-weth", "usdc", "weth", 1n, 3001n, 3_000_000, 1000), // WETH: exactly 3001
      exactPool("kibl-weth", "kibl", "weth", 7n, 30_000_000n, 1e9, 50), // KIBL: 7/3e7 WETH
      exactPool("link-usdc", "link", "usdc", 151n, 10n, 100_000, 2_000_000), // 15.1, $4M
      exactPool("link-usdc2", "link", "usdc", 152n, 10n, 100_000, 1_000_000), // 15.2, $2M
    ];
    const prices = pricesOf(pools);
    assert.equal(usd(prices, "weth"), 3001, "the exact reciprocal of 1/3001");
    assert.equal(
      usd(prices, "kibl"),
      referenceRatioToNumber(7n * 3001n, 30_000_000n),
      "7/3e7 × 3001, rounded once",
    );
    // (15.1 × 4e6 + 15.2 × 2e6) / 6e6 = 227/15 exactly.
    assert.equal(usd(prices, "link"), referenceRatioToNumber(227n, 15n), "the weighted mean, rounded once");
    const kibl = prices.get("kibl");
    assert.equal(kibl?.pools[0]?.priceUsd, usd(prices, "kibl"), "the pool's own USD price, exact too");
  });
});

describe("computeUsdPrices", () => {
  it("anchors stablecoins, prices WETH and WBTC against them, the rest through priced tokens", () => {
    const prices = pricesOf(market());
    assert.equal(usd(prices, "usdc"), 1, "anchor");
    assert.equal(prices.get("usdc")?.method, "anchor", "method");
    assert.equal(usd(prices, "weth"), 3000, "WETH from its USDC pool");
    assert.equal(usd(prices, "wbtc"), 60_000, "WBTC from its anchor pool only, not through WETH");
    assert.equal(usd(prices, "link"), 15, "LINK: both pools agree");
    // A pool given by a double price is that double's exact rational: KIBL = its price in WETH ×
    // WETH's exact USD price, the exact reciprocal of the USDC pool's price of USDC in WETH.
    const wethUsd = exactDiv(exact(1n), exactOfDouble(1 / 3000));
    assert.equal(
      usd(prices, "kibl"),
      toDouble(exactMul(exactOfDouble(0.0042 / 3000), wethUsd)),
      "KIBL two hops away: (0.0042 / 3000) × WETH's exact price, rounded once",
    );
    assert.deepEqual(prices.get("kibl")?.route, ["kibl", "weth", "usdc"], "route of KIBL");
    assert.equal(prices.get("weth")?.layer, 1, "WETH in the first layer");
    assert.equal(prices.get("kibl")?.layer, 2, "KIBL after WETH");
    assert.equal(usd(prices, "dust"), null, "DUST's only pool is below the floor");
    assert.equal(prices.get("dust")?.reason, "no-qualifying-pool", "why DUST has no price");
    assert.equal(prices.get("dust")?.belowFloor, 1, "its pool is counted below the floor");
  });

  it("weights pools by liquidity and records them", () => {
    const pools = market();
    const thin = pools.find((p) => p.address === "link-weth") as GraphPool;
    thin.price0 = 0.0052; // LINK 15.6 in the thin pool: within maxDeviation
    const link = pricesOf(pools).get("link") as TokenPrice;
    // Each pool's exact USD price weighted by its liquidity 2 × quote depth × quote USD price:
    // 2 × 2,000,000 USDC × 1 and 2 × 10 WETH × 3000 (WETH's rounded price), exactly 4e6 and 6e4.
    const wethUsd = exactDiv(exact(1n), exactOfDouble(1 / 3000));
    const expected = weightedMean([
      { price: exact(15n), weight: 4_000_000 },
      { price: exactMul(exactOfDouble(0.0052), wethUsd), weight: 60_000 },
    ]);
    assert.equal(link.usdPrice, toDouble(expected), "the exact liquidity-weighted mean, rounded once");
    assert.equal(link.pools.length, 2, "both pools kept");
    assert.deepEqual(
      Object.fromEntries(link.pools.map((p) => [p.pool, p.weight])),
      { "link-usdc": 4_000_000 / 4_060_000, "link-weth": 60_000 / 4_060_000 },
      "each kept pool's share of the kept liquidity",
    );
    assert.ok(link.confidence > 0.9 && link.confidence <= 1, `confidence ${link.confidence}`);
  });

  it("(3a) a look-alike USDC in a thin pool changes nothing", () => {
    const before = pricesOf(market());
    const pools = [
      ...market(),
      pool("fake-weth", "fakeusdc", "weth", 0.25 / 3000, 6000, 0.5), // $3,000 of WETH: thin
      pool("scam-fake", "scam", "fakeusdc", 100, 10_000, 100_000_000), // deep only in the fake
      pool("fake-usdc", "fakeusdc", "usdc", 1, 100, 100), // $200 against the real USDC
    ];
    const after = pricesOf(pools);
    assert.equal(usd(after, "fakeusdc"), null, "the look-alike has no price");
    assert.equal(usd(after, "scam"), null, "nothing is priced through it");
    for (const token of ["usdc", "weth", "wbtc", "link", "kibl"]) {
      assert.equal(usd(after, token), usd(before, token), `${token} unchanged`);
    }
  });

  it("(3b) one trade moving a thin pool 10× moves the price by less than 1 %", () => {
    const before = usd(pricesOf(market()), "link") as number;
    const pools = market();
    const thin = pools.find((p) => p.address === "link-weth") as GraphPool;
    thin.price0 = (thin.price0 as number) * 10;
    const prices = pricesOf(pools);
    const after = usd(prices, "link") as number;
    assert.ok(Math.abs(after / before - 1) < 0.01, `LINK ${before} → ${after}`);
    assert.deepEqual(
      prices.get("link")?.dropped.map((p) => p.pool),
      ["link-weth"],
      "the pushed pool is dropped as an outlier",
    );
  });

  it("(3c) a token whose only pool is below the floor has no price, never 0", () => {
    const prices = pricesOf([...market(), pool("only-thin", "lonely", "usdc", 2, 100, 9_999 / 2)]);
    assert.equal(usd(prices, "lonely"), null, "$9,999 < $10,000");
  });

  it("neither prices nor routes through a token of unknown decimals", () => {
    const pools = [
      ...market(),
      pool("nodec-weth", "nodec", "weth", 0.8 / 3000, 1_000_000, 1000),
      pool("child-nodec", "child", "nodec", 2, 1_000_000, 1_000_000),
    ];
    const prices = pricesOf(pools, ["nodec"]);
    assert.equal(usd(prices, "nodec"), null, "decimals unknown");
    assert.equal(prices.get("nodec")?.reason, "decimals-unknown", "why");
    assert.equal(usd(prices, "child"), null, "no route through it");
  });

  it("prefers the shortest route: a token next to WETH ignores a longer way round", () => {
    const pools = [
      ...market(),
      // ABC is next to WETH; also in a deep pool with KIBL at a different price.
      pool("abc-weth", "abc", "weth", 1 / 3000, 1_000_000, 500),
      pool("abc-kibl", "abc", "kibl", 1000, 1_000_000, 1_000_000_000),
    ];
    const abc = pricesOf(pools).get("abc") as TokenPrice;
    assert.equal(abc.usdPrice, 1, "from WETH only (KIBL is in the same layer)");
    assert.deepEqual(
      abc.pools.map((p) => p.pool),
      ["abc-weth"],
      "one pool used",
    );
  });

  it("records the latest block of the states a price reflects", () => {
    const pools = market();
    (pools[0] as GraphPool).stateBlock = 99;
    (pools[0] as GraphPool).stateTime = 99_000;
    const prices = pricesOf(pools);
    assert.equal(prices.get("kibl")?.asOfBlock, 99, "KIBL through WETH through the pool of block 99");
    assert.equal(prices.get("wbtc")?.asOfBlock, 1, "WBTC's pools did not move");
  });
});

describe("depth", () => {
  it("one trade cannot lift a thin pool over the floor", () => {
    // A thin DUST/WETH pool: 0.8 WETH ($4,800 at 3,000 → $9,600 < $10k). One trade pays 2 WETH in.
    const state: PoolPriceState = {
      reserve0: 100_000n,
      reserve1: 8n,
      sqrtPriceX96: null,
      swapBlock: null,
      preSwapReserve0: null,
      preSwapReserve1: null,
      stateBlock: 1,
      stateLogIndex: 0,
      stateTime: 0,
    };
    assert.equal(depthOf(state, 1, 1), 0.8, "before any swap: the balance");
    applyEvent(
      state,
      { blockNumber: 5, logIndex: 1, time: 0, reserve0: 28_572n, reserve1: 28n, sqrtPriceX96: null },
      { amount0In: 0n, amount1In: 20n, amount0Out: 71_428n, amount1Out: 0n },
    );
    assert.equal(depthOf(state, 1, 1), 0.8, "after the trade: still the balance before it");
    // A second trade in the same block does not reset the "before" balance.
    applyEvent(
      state,
      { blockNumber: 5, logIndex: 2, time: 0, reserve0: 28_000n, reserve1: 29n, sqrtPriceX96: null },
      { amount0In: 0n, amount1In: 1n, amount0Out: 572n, amount1Out: 0n },
    );
    assert.equal(depthOf(state, 1, 1), 0.8, "the whole block counts as one move");
    const dust = pricesOf([
      ...market(),
      pool("dust2", "dust2", "weth", 0.001, 28_000, depthOf(state, 1, 1) as number),
    ]).get("dust2");
    assert.equal(dust?.usdPrice, null, "still below the floor");
  });
});
