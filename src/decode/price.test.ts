import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import { priceFromReserves, priceFromSqrtPriceX96 } from "./price.js";

describe("pool prices", () => {
  it("reads the USDC/WETH 0.05 % pool's price from sqrtPriceX96", () => {
    // USDC (6) / WETH (18): the price of 1 USDC in WETH around 2,250 USD per ETH.
    const sqrtPriceX96 = 1662995104975155420368771254341874n;
    const price = priceFromSqrtPriceX96(sqrtPriceX96, 6, 18);
    // (sqrtPriceX96 / 2^96)^2 · 10^(6 − 18), rounded once by the independent reference.
    const exact = referenceRatioToNumber(sqrtPriceX96 * sqrtPriceX96 * 10n ** 6n, (1n << 192n) * 10n ** 18n);
    assert.ok(Object.is(price, exact), `${price} is the correctly rounded ${exact}`);
    assert.equal(Math.round(1 / price), 2270, "1/price is the ETH price in USDC");
  });

  it("reads V2 reserves, decimal-adjusted", () => {
    assert.equal(priceFromReserves(2n * 10n ** 18n, 4000n * 10n ** 6n, 18, 6), 2000);
    assert.equal(priceFromReserves(0n, 1n, 18, 18), null, "no price from an empty reserve");
  });
});
