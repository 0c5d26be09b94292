import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { combinePrices, weightedMedian } from "./robust-price.js";

describe("weightedMedian", () => {
  it("follows the weight, not the count", () => {
    const prices = [
      { priceUsd: 10, liquidityUsd: 1_000_000 },
      { priceUsd: 100, liquidityUsd: 20_000 },
      { priceUsd: 101, liquidityUsd: 20_000 },
      { priceUsd: 102, liquidityUsd: 20_000 },
    ];
    assert.equal(weightedMedian(prices), 10, "one deep pool outweighs three thin ones");
  });

  it("is the middle of equal weights", () => {
    const prices = [1, 2, 3].map((priceUsd) => ({ priceUsd, liquidityUsd: 1 }));
    assert.equal(weightedMedian(prices), 2, "unweighted median");
  });
});

describe("combinePrices", () => {
  it("drops prices beyond maxDeviation from the median and averages the rest by liquidity", () => {
    const combined = combinePrices(
      [
        { priceUsd: 100, liquidityUsd: 3_000_000 },
        { priceUsd: 102, liquidityUsd: 1_000_000 },
        { priceUsd: 1_000, liquidityUsd: 50_000 },
      ],
      0.1,
    );
    assert.ok(combined);
    assert.equal(combined.median, 100, "the deep pool's price");
    assert.equal(combined.dropped.length, 1, "the 10× pool is left out");
    assert.equal(combined.priceUsd, (100 * 3 + 102 * 1) / 4, "liquidity-weighted mean of the kept");
  });

  it("is null without prices", () => {
    assert.equal(combinePrices([], 0.1), null, "nothing to combine");
  });
});
