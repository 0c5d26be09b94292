import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { priceFromReserves, priceFromSqrtPriceX96, ratioToNumber } from "./price.js";

describe("ratioToNumber", () => {
  it("is exact for small ratios", () => {
    assert.equal(ratioToNumber(1n, 4n), 0.25);
    assert.equal(ratioToNumber(-3n, 2n), -1.5);
    assert.equal(ratioToNumber(0n, 7n), 0);
  });

  it("keeps precision where Number(a) / Number(b) would not", () => {
    // Checked against Python's float(Fraction(a, b)), which rounds correctly.
    const a = 1843661792113971427282631473n;
    const b = 1000003n;
    assert.equal(ratioToNumber(a, b), 1.843656261145188e21, "correctly rounded");
    assert.notEqual(Number(a) / Number(b), 1.843656261145188e21, "rounding a before dividing is one ulp off");
  });

  it("handles extreme magnitudes", () => {
    assert.equal(ratioToNumber(1n << 1000n, 1n), 2 ** 1000);
    assert.equal(ratioToNumber(1n, 1n << 1000n), 2 ** -1000);
  });
});

describe("pool prices", () => {
  it("reads the USDC/WETH 0.05 % pool's price from sqrtPriceX96", () => {
    // USDC (6) / WETH (18): the price of 1 USDC in WETH around 2,250 USD per ETH.
    const price = priceFromSqrtPriceX96(1662995104975155420368771254341874n, 6, 18);
    assert.ok(Math.abs(1 / price - 2269.7) < 1, `1/price ${1 / price} is the ETH price in USDC`);
  });

  it("reads V2 reserves, decimal-adjusted", () => {
    assert.equal(priceFromReserves(2n * 10n ** 18n, 4000n * 10n ** 6n, 18, 6), 2000);
    assert.equal(priceFromReserves(0n, 1n, 18, 18), null, "no price from an empty reserve");
  });
});
