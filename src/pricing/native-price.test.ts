import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { graphOptions, graphPool, referenceTokens } from "../_test/price-graph.js";
import { NATIVE_COIN, type SwapAmounts } from "../model/index.js";
import { lazyUsdPrices } from "./lazy-prices.js";
import { tradeOf } from "./trade.js";
import { valueTrade } from "./trade-usd.js";
import {
  computeUsdPrices,
  createPriceMemo,
  createRoutingGraph,
  type GraphPool,
  newestOfPools,
  type TokenPrice,
} from "./usd-prices.js";

/**
 * The native coin (a V4 pool's currency address zero) answers the wrapped native token's USD
 * price, the same double, at every block; its own pools value its trades and price the tokens
 * quoted against it, but never set its price.
 */

const reference = referenceTokens();
const options = graphOptions;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;
const pool = graphPool;

/** WETH against USDC; native ETH against USDC (a V4 pool) at another price; FROG only against ETH. */
function market() {
  const wethUsdc = pool("weth-usdc", "usdc", "weth", 1 / 3000, 3_000_000, 1000);
  const nativeUsdc = pool("eth-usdc", NATIVE_COIN, "usdc", 3010, 500, 1_505_000);
  const frogNative = pool("frog-eth", NATIVE_COIN, "frog", 1_000_000, 40, 40_000_000);
  const pools: GraphPool[] = [wethUsdc, nativeUsdc, frogNative];
  const decimals = new Map<string, number | null>([
    ["usdc", 6],
    ["weth", 18],
    [NATIVE_COIN, 18],
    ["frog", 18],
  ]);
  return { wethUsdc, nativeUsdc, frogNative, graph: createRoutingGraph(decimals, pools) };
}

const usd = (prices: Map<string, TokenPrice>, token: string) => prices.get(token)?.usdPrice;

/** The USD figures of a trade of these raw amounts (decimals of token0 and token1) on `pool`, at `prices`. */
function valueOn(
  pool: GraphPool,
  raw: SwapAmounts,
  [decimals0, decimals1]: [number, number],
  prices: Map<string, TokenPrice>,
) {
  const trade = tradeOf(raw, decimals0, decimals1);
  return valueTrade({
    pool,
    trade,
    amounts: { exact0: trade?.exact0 ?? null, exact1: trade?.exact1 ?? null },
    price0: prices.get(pool.token0),
    price1: prices.get(pool.token1),
    reference,
    options,
  });
}

describe("the native coin's USD price", () => {
  it("is the wrapped native token's, the same double, block after block (memo and lazy prices too)", () => {
    const m = market();
    const memo = createPriceMemo();
    // Block by block: WETH's pool moves, then the native pool alone moves far, then both move.
    const steps: [number, number][] = [
      [1 / 3000, 3010],
      [1 / 3100, 3010],
      [1 / 3100, 5000],
      [1 / 2900.5, 2000],
    ];
    const seen: number[] = [];
    for (const [block, [wethPrice0, nativePrice0]] of steps.entries()) {
      m.wethUsdc.price0 = wethPrice0;
      m.nativeUsdc.price0 = nativePrice0;
      for (const p of [m.wethUsdc, m.nativeUsdc]) {
        p.stateBlock = block + 1;
        p.version = block + 1;
      }
      const fresh = computeUsdPrices(m.graph, reference, options);
      const memoized = computeUsdPrices(m.graph, reference, options, memo);
      // As the service builds it: with the newest state per token (lazy prices then read phase 1 from
      // the reference tokens' pools only).
      const served = { ...m.graph, newestOf: newestOfPools(m.graph.poolsOf) };
      const lazy = lazyUsdPrices(served, reference, options, [NATIVE_COIN, "weth", "frog"]);
      assert.ok(lazy, "within the budget");
      for (const prices of [fresh, memoized]) {
        const weth = usd(prices, "weth");
        assert.ok(typeof weth === "number" && weth > 0, `block ${block + 1}: WETH priced`);
        assert.ok(
          Object.is(usd(prices, NATIVE_COIN), weth),
          `block ${block + 1}: ETH ${usd(prices, NATIVE_COIN)} = WETH ${weth}`,
        );
        assert.deepEqual(prices.get(NATIVE_COIN)?.usdRatio, prices.get("weth")?.usdRatio);
        // Its own pool (priced at 2,000 to 5,000) never moves it: WETH's pool alone sets both.
        assert.equal(weth, fresh.get("weth")?.usdPrice);
      }
      assert.ok(
        Object.is(lazy.get(NATIVE_COIN)?.usdPrice, usd(fresh, "weth")),
        `block ${block + 1}: lazy prices`,
      );
      assert.ok(Object.is(lazy.get("weth")?.usdPrice, usd(fresh, "weth")));
      seen.push(usd(fresh, NATIVE_COIN) as number);
    }
    // WETH at 3,000, 3,100, 3,100 (the native pool's move to 5,000 moves nothing), 2,900.5.
    assert.deepEqual(seen, [3000, 3100, 3100, 2900.5]);
  });

  it("values a native-only pool's trades and prices the tokens quoted against it", () => {
    const m = market();
    const prices = computeUsdPrices(m.graph, reference, options);
    const eth = usd(prices, NATIVE_COIN);
    assert.equal(eth, 3000);
    // FROG only trades against ETH: 1 ETH = 1,000,000 FROG, so FROG at 3,000 / 1,000,000 USD.
    assert.equal(usd(prices, "frog"), 0.003);
    // A trade of 2 ETH for 1,990,000 FROG on the native pool: valued from the ETH side at WETH's price.
    const figures = valueOn(
      m.frogNative,
      { amount0In: 2n * E18, amount1In: 0n, amount0Out: 0n, amount1Out: 1_990_000n * E18 },
      [18, 18],
      prices,
    );
    assert.equal(figures.token0Usd, 3000);
    assert.equal(figures.token0Usd, usd(prices, "weth"));
    assert.equal(figures.volumeUsd, 6000);
    // A trade on the native/USDC pool: 1 ETH for 3,009 USDC, valued from the USDC side (the anchor).
    const usdcFigures = valueOn(
      m.nativeUsdc,
      { amount0In: E18, amount1In: 0n, amount0Out: 0n, amount1Out: 3009n * E6 },
      [18, 6],
      prices,
    );
    assert.equal(usdcFigures.token0Usd, 3000);
    assert.equal(usdcFigures.volumeUsd, 3009);
  });

  it("has no price while the wrapped native token has none", () => {
    const m = market();
    m.wethUsdc.depth0 = 1000; // $2,000 of USDC quoting WETH: below the floor
    m.wethUsdc.version = 2;
    const prices = computeUsdPrices(m.graph, reference, options, undefined, true);
    assert.equal(prices.has("weth"), false);
    assert.equal(prices.has(NATIVE_COIN), false);
    const served = { ...m.graph, newestOf: newestOfPools(m.graph.poolsOf) };
    const lazy = lazyUsdPrices(served, reference, options, [NATIVE_COIN, "weth", "frog"]);
    assert.ok(lazy, "within the budget");
    assert.equal(lazy.has("weth"), false);
    assert.equal(lazy.has(NATIVE_COIN), false, "its own pool does not price it");
    assert.equal(lazy.has("frog"), false);
  });
});
