import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import { graphOptions, referenceTokens } from "../_test/price-graph.js";
import { parseExact } from "../internal/exact-decimal.js";
import type { SwapAmounts } from "../model/index.js";
import { type Trade, tradeOf } from "./trade.js";
import { valueTrade } from "./trade-usd.js";
import type { GraphPool, TokenPrice } from "./usd-prices.js";

const reference = referenceTokens();
const options = graphOptions;

/** The trade of raw amounts (the one trade function). */
function trade(amounts: Partial<SwapAmounts>, decimals0: number, decimals1: number): Trade {
  const t = tradeOf(
    { amount0In: 0n, amount1In: 0n, amount0Out: 0n, amount1Out: 0n, ...amounts },
    decimals0,
    decimals1,
  );
  assert.ok(t);
  return t;
}

/** Each side's exact amount from its decimal text (null: decimals unknown). */
const amounts = (amount0: number | null, amount1: number | null) => ({
  exact0: amount0 === null ? null : parseExact(String(amount0)),
  exact1: amount1 === null ? null : parseExact(String(amount1)),
});

const pool = (token0: string, token1: string, depth0: number, depth1: number): GraphPool => ({
  address: `${token0}-${token1}`,
  dex: "test",
  token0,
  token1,
  price0: null,
  depth0,
  depth1,
  stateBlock: 1,
  stateTime: 0,
});

function price(token: string, usdPrice: number | null, extra: Partial<TokenPrice> = {}): TokenPrice {
  return {
    token,
    usdPrice,
    method: usdPrice === null ? "none" : "pools",
    layer: 1,
    confidence: 0.9,
    route: [],
    median: null,
    pools: [],
    dropped: [],
    belowFloor: 0,
    asOfBlock: 1,
    asOfTime: 0,
    ...extra,
  };
}

const quote = (p: string, quoteUsd: number) => ({
  pool: p,
  dex: "test",
  quote: "",
  quoteUsd,
  liquidityUsd: 1e6,
  price: 0,
  priceUsd: 0,
  weight: 1,
});

/** valueTrade with the tests' reference tokens and options. */
const value = (args: Omit<Parameters<typeof valueTrade>[0], "reference" | "options">) =>
  valueTrade({ ...args, reference, options });

describe("valueTrade", () => {
  const usdc = price("usdc", 1, { method: "anchor", layer: 0, confidence: 1 });

  it("values a trade on its most trustworthy side", () => {
    // LINK (token0) bought with WETH (token1) at 0.005 WETH; WETH at 3,000.
    const p = pool("link", "weth", 1e5, 500);
    const link = price("link", 16, { pools: [quote(p.address, 3000)] });
    const weth = price("weth", 3000);
    const usd = value({
      pool: p,
      trade: trade({ amount1In: 5n, amount0Out: 1000n }, 1, 1), // 100 LINK for 0.5 WETH
      amounts: amounts(100, 0.5),
      price0: link,
      price1: weth,
    });
    assert.equal(usd.volumeUsd, 1500, "0.5 WETH × 3,000: the reference side, not 100 LINK × 16");
    assert.equal(usd.token0Usd, 16, "the robust LINK price, not the trade's 15");
    assert.equal(
      usd.series0Usd,
      16,
      "LINK's series: its USD price (the trade's 0.005 × 3,000 = 15 is within 10 %)",
    );
    assert.equal(usd.series1Usd, null, "the pool does not price WETH");
  });

  it("leaves an outlier trade out of the series", () => {
    const p = pool("link", "weth", 1e5, 500);
    const link = price("link", 15, { pools: [quote(p.address, 3000)] });
    const usd = value({
      pool: p,
      trade: trade({ amount1In: 5n, amount0Out: 1n }, 0, 2), // 1 LINK for 0.05 WETH
      amounts: amounts(1, 0.05),
      price0: link,
      price1: price("weth", 3000),
    });
    assert.equal(usd.series0Usd, null, "150 against a robust 15");
    assert.equal(usd.volumeUsd, 150, "still valued: 0.05 WETH");
  });

  it("records an anchor's trades at 1 USD where its side is deep enough", () => {
    const deep = pool("usdc", "weth", 3e6, 1000);
    const thin = pool("usdc", "weth", 4000, 1);
    const args = {
      trade: trade({ amount0In: 3000n, amount1Out: 1n }, 0, 0), // 3,000 USDC for 1 WETH
      amounts: amounts(3000, 1),
      price0: usdc,
      price1: price("weth", 3000),
    };
    assert.equal(value({ ...args, pool: deep }).series0Usd, 1, "deep pool");
    assert.equal(value({ ...args, pool: thin }).series0Usd, null, "$8,000 < $10,000");
    assert.equal(value({ ...args, pool: deep }).volumeUsd, 3000, "the anchor side");
  });

  it("values a trade whose other token has unknown decimals", () => {
    const usd = value({
      pool: pool("nodec", "weth", 0, 10),
      trade: null,
      amounts: amounts(null, 2),
      price0: price("nodec", null),
      price1: price("weth", 3000),
    });
    assert.equal(usd.volumeUsd, 6000, "2 WETH × 3,000");
    assert.equal(usd.series1Usd, null, "no price, no series point");
  });

  it("values a trade as its exact amount × its token's exact USD price, rounded once", () => {
    // 7 WETH (token1) at exactly 10/3 USD: 70/3 rounded once is 23.333333333333332; the product
    // of the two rounded doubles, 7 × 3.3333333333333335, is 23.333333333333336.
    const p = pool("link", "weth", 1e5, 500);
    const third = { num: 10n, den: 3n };
    const usd = value({
      pool: p,
      trade: trade({ amount1In: 7n, amount0Out: 3n }, 0, 0),
      amounts: amounts(3, 7),
      price0: price("link", null),
      price1: price("weth", 10 / 3, { usdRatio: third }),
    });
    assert.ok(Object.is(usd.volumeUsd, referenceRatioToNumber(70n, 3n)), `${usd.volumeUsd}`);
    assert.notEqual(usd.volumeUsd, 7 * (10 / 3), "not the product of the rounded doubles");
  });

  it("feeds the series from the pools that set the price only, at the token's USD price", () => {
    // WETH at 3,064 from its pools; one kept pool of small weight trades at 3,175 (fee and price
    // impact included, within the 10 % filter): its trade enters WETH's series at 3,064, the price
    // the trade is valued at, so an hour with only such trades still averages WETH's price.
    const kept = pool("weth", "usdc", 100, 3e5);
    const dropped = pool("weth", "dai", 100, 3e5);
    const weth = price("weth", 3064, {
      pools: [{ ...quote(kept.address, 1), weight: 0.05 }],
      dropped: [{ ...quote(dropped.address, 1), weight: 0 }],
    });
    const args = {
      trade: trade({ amount0Out: 1n, amount1In: 3175n }, 0, 0), // 1 WETH for 3,175
      amounts: amounts(1, 3175),
      price0: weth,
      price1: usdc,
    };
    assert.equal(value({ ...args, pool: kept }).series0Usd, 3064, "a kept pool: WETH's USD price");
    assert.equal(value({ ...args, pool: dropped }).series0Usd, null, "a pool the median filter dropped");
    assert.equal(value({ ...args, pool: dropped }).token0Usd, 3064, "still valued");
  });

  it("has no USD value when neither side is priced", () => {
    const usd = value({
      pool: pool("a", "b", 1, 1),
      trade: trade({ amount1In: 1n, amount0Out: 1n }, 0, 0),
      amounts: amounts(1, 1),
      price0: price("a", null),
      price1: price("b", null),
    });
    assert.deepEqual(
      usd,
      { token0Usd: null, token1Usd: null, volumeUsd: null, series0Usd: null, series1Usd: null },
      "null, never 0",
    );
  });
});
