import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pairLiquidityUsd, percentChange, statsWindow } from "./stats.js";

describe("statsWindow", () => {
  it("covers the 1,440 minutes ending with the current one", () => {
    const now = Date.parse("2024-01-05T12:34:56Z");
    const w = statsWindow(now);
    assert.equal(new Date(w.start).toISOString(), "2024-01-04T12:35:00.000Z", "first minute");
    assert.equal(new Date(w.fullHoursFrom).toISOString(), "2024-01-04T13:00:00.000Z", "first full hour");
    assert.equal(new Date(w.fullHoursTo).toISOString(), "2024-01-05T12:00:00.000Z", "current hour: minutes");
  });

  it("starts on an hour when now is at the end of an hour", () => {
    const w = statsWindow(Date.parse("2024-01-05T12:59:10Z"));
    assert.equal(new Date(w.start).toISOString(), "2024-01-04T13:00:00.000Z", "a whole hour");
    assert.equal(w.fullHoursFrom, w.start, "no leading minutes");
  });
});

describe("percentChange", () => {
  it("is in percent", () => {
    // 100 → 125: 125 / 100 − 1 = 0.25 and 0.25 × 100 = 25, each exact in doubles.
    assert.equal(percentChange(100, 125), 25, "25 means +25 %");
    assert.equal(percentChange(200, 100), -50, "halved");
    assert.equal(percentChange(null, 1), null, "no reference price");
    assert.equal(percentChange(0, 1), null, "no change from zero");
  });
});

describe("pairLiquidityUsd", () => {
  it("values both reserves at their USD prices", () => {
    assert.equal(
      pairLiquidityUsd({ reserve0: 10, reserve1: 20_000, price0: 2000, usd0: 2000, usd1: 1 }),
      40_000,
      "10 ETH + 20k USDC",
    );
  });

  it("values an unpriced side at the pool's price", () => {
    assert.equal(
      pairLiquidityUsd({ reserve0: 1000, reserve1: 1, price0: 0.001, usd0: null, usd1: 2000 }),
      4000,
      "2 × the priced side",
    );
    assert.equal(
      pairLiquidityUsd({ reserve0: 1, reserve1: 1000, price0: 1000, usd0: 2000, usd1: null }),
      4000,
      "token1 unpriced",
    );
    assert.equal(
      pairLiquidityUsd({ reserve0: 1, reserve1: 1, price0: 1, usd0: null, usd1: null }),
      null,
      "neither priced",
    );
  });
});
