import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { exact, exactMul, exactOfDouble, toDouble } from "../_test/exact.js";
import { ratio } from "../exact/ratio.js";
import { parseExact } from "../internal/exact-decimal.js";
import { pairLiquidityUsd, percentChange, statsWindow, usdRatioOf } from "./stats.js";

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
  /** A decimal amount as raw digits and decimals. */
  const units = (text: string) => parseExact(text);
  const usd = usdRatioOf;
  /** The pair's USD liquidity of these decimal reserves, exact price of token0 in token1 and USD prices. */
  const liquidity = (
    [reserve0, reserve1]: [string, string],
    ratio0: ReturnType<typeof ratio> | null,
    [usd0, usd1]: [number | null, number | null],
  ) =>
    pairLiquidityUsd({
      reserve0: units(reserve0),
      reserve1: units(reserve1),
      ratio0,
      usd0: usd(usd0),
      usd1: usd(usd1),
    });

  it("values both reserves at their USD prices", () => {
    assert.equal(liquidity(["10", "20000"], ratio(2000n, 1n), [2000, 1]), 40_000, "10 ETH + 20k USDC");
  });

  it("is the exact value rounded once, not a sum of rounded products", () => {
    // 0.1 × 3 + 0.2 × 3 = 0.9 exactly; in doubles 0.1 × 3 + 0.2 × 3 is 0.9000000000000001.
    const value = liquidity(["0.1", "0.2"], null, [3, 3]);
    assert.ok(Object.is(value, 0.9), `${value}`);
    assert.notEqual(0.1 * 3 + 0.2 * 3, 0.9);
    // A USD price is the double it is: 3 × 3001.7 (the double) exactly, rounded once.
    const price = liquidity(["3", "0"], null, [3001.7, 1]);
    assert.ok(Object.is(price, toDouble(exactMul(exact(3n), exactOfDouble(3001.7)))), `${price}`);
  });

  it("values an unpriced side at the pool's exact price", () => {
    // 1 token0 = 1/1000 token1 exactly; token1 at 2,000: token0 at 2.
    assert.equal(liquidity(["1000", "1"], ratio(1n, 1000n), [null, 2000]), 4000, "2 × the priced side");
    // 1 token0 = 1/3 token1, token0 at 2,000: token1 at 2,000 / (1/3) = 6,000.
    const third = liquidity(["1", "1"], ratio(1n, 3n), [2000, null]);
    assert.equal(third, 8000, "2,000 + 1 × 6,000");
    assert.equal(liquidity(["1", "1"], ratio(1n, 1n), [null, null]), null, "neither priced");
  });
});
