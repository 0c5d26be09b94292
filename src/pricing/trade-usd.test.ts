import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import type { SwapAmounts } from "../model/index.js";
import { type Trade, tradeOf } from "./trade.js";
import { valueTrade } from "./trade-usd.js";
import type { GraphPool, ReferenceTokens, TokenPrice } from "./usd-prices.js";

const reference: ReferenceTokens = {
  stablecoins: ["usdc"],
  wrappedNative: "weth",
  wrappedBtc: [],
  others: [],
};
const options = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };

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

describe("valueTrade", () => {
  const usdc = price("usdc", 1, { method: "anchor", layer: 0, confidence: 1 });

  it("values a trade on its most trustworthy side", () => {
    // LINK (token0) bought with WETH (token1) at 0.005 WETH; WETH at 3,000.
    const p = pool("link", "weth", 1e5, 500);
    const link = price("link", 16, { pools: [quote(p.address, 3000)] });
    const weth = price("weth", 3000);
    const usd = valueTrade({
      pool: p,
      trade: trade({ amount1In: 5n, amount0Out: 1000n }, 1, 1), // 100 LINK for 0.5 WETH
      volumes: { volume0: 100, volume1: 0.5 },
      price0: link,
      price1: weth,
      reference,
      options,
    });
    assert.equal(usd.volumeUsd, 1500, "0.5 WETH × 3,000: the reference side, not 100 LINK × 16");
    assert.equal(usd.token0Usd, 16, "the robust LINK price, not the trade's 15");
    assert.equal(usd.series0Usd, 15, "LINK's series: 0.005 × 3,000");
    assert.equal(usd.series1Usd, null, "the pool does not price WETH");
  });

  it("leaves an outlier trade out of the series", () => {
    const p = pool("link", "weth", 1e5, 500);
    const link = price("link", 15, { pools: [quote(p.address, 3000)] });
    const usd = valueTrade({
      pool: p,
      trade: trade({ amount1In: 5n, amount0Out: 1n }, 0, 2), // 1 LINK for 0.05 WETH
      volumes: { volume0: 1, volume1: 0.05 },
      price0: link,
      price1: price("weth", 3000),
      reference,
      options,
    });
    assert.equal(usd.series0Usd, null, "150 against a robust 15");
    assert.equal(usd.volumeUsd, 150, "still valued: 0.05 WETH");
  });

  it("records an anchor's trades at 1 USD where its side is deep enough", () => {
    const deep = pool("usdc", "weth", 3e6, 1000);
    const thin = pool("usdc", "weth", 4000, 1);
    const args = {
      trade: trade({ amount0In: 3000n, amount1Out: 1n }, 0, 0), // 3,000 USDC for 1 WETH
      volumes: { volume0: 3000, volume1: 1 },
      price0: usdc,
      price1: price("weth", 3000),
      reference,
      options,
    };
    assert.equal(valueTrade({ ...args, pool: deep }).series0Usd, 1, "deep pool");
    assert.equal(valueTrade({ ...args, pool: thin }).series0Usd, null, "$8,000 < $10,000");
    assert.equal(valueTrade({ ...args, pool: deep }).volumeUsd, 3000, "the anchor side");
  });

  it("values a trade whose other token has unknown decimals", () => {
    const usd = valueTrade({
      pool: pool("nodec", "weth", 0, 10),
      trade: null,
      volumes: { volume0: null, volume1: 2 },
      price0: price("nodec", null),
      price1: price("weth", 3000),
      reference,
      options,
    });
    assert.equal(usd.volumeUsd, 6000, "2 WETH × 3,000");
    assert.equal(usd.series1Usd, null, "no price, no series point");
  });

  it("prices a series point as the exact trade price × the exact quote price, rounded once", () => {
    // 7 LINK for 3 WETH at a WETH price of exactly 1/3 × 10 (as a ratio): 3/7 × 10/3 = 10/7.
    const p = pool("link", "weth", 1e5, 500);
    const third = { num: 10n, den: 3n };
    const link = price("link", 10 / 7, {
      pools: [{ ...quote(p.address, 10 / 3), quoteUsdRatio: third }],
    });
    const usd = valueTrade({
      pool: p,
      trade: trade({ amount1In: 3n, amount0Out: 7n }, 0, 0),
      volumes: { volume0: 7, volume1: 3 },
      price0: link,
      price1: price("weth", 10 / 3, { usdRatio: third }),
      reference,
      options,
    });
    assert.equal(usd.series0Usd, referenceRatioToNumber(10n, 7n));
  });

  it("has no USD value when neither side is priced", () => {
    const usd = valueTrade({
      pool: pool("a", "b", 1, 1),
      trade: trade({ amount1In: 1n, amount0Out: 1n }, 0, 0),
      volumes: { volume0: 1, volume1: 1 },
      price0: price("a", null),
      price1: price("b", null),
      reference,
      options,
    });
    assert.deepEqual(
      usd,
      { token0Usd: null, token1Usd: null, volumeUsd: null, series0Usd: null, series1Usd: null },
      "null, never 0",
    );
  });
});
