import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bigintToDecimal, finite, toDecimalString, toUnits } from "./numbers.js";

describe("toUnits", () => {
  it("scales raw integers by their decimals", () => {
    assert.equal(toUnits("1500000", 6), 1.5);
    assert.equal(toUnits(10n ** 18n, 18), 1);
    assert.equal(toUnits("0", 18), 0);
    assert.equal(toUnits("123", 0), 123);
  });
  it("keeps large raw values precise by scaling before converting", () => {
    // 2^200 wei would lose everything past 2^53 if converted first; scaled first it is exact to double precision.
    const raw = (2n ** 200n).toString();
    assert.equal(toUnits(raw, 18), Number(2n ** 200n) / 1e18);
    assert.equal(toUnits("123456789012345678901234567890", 18), 123456789012.34567);
  });
  it("answers null when the amount or the decimals are unknown", () => {
    assert.equal(toUnits(null, 18), null);
    assert.equal(toUnits("1", null), null);
    assert.equal(toUnits("not a number", 18), null);
  });
});

describe("bigintToDecimal", () => {
  it("writes exact decimal text", () => {
    assert.equal(bigintToDecimal(1n, 18), "0.000000000000000001");
    assert.equal(bigintToDecimal(-1500n, 3), "-1.5");
    assert.equal(bigintToDecimal(1000n, 3), "1");
    assert.equal(bigintToDecimal(0n, 6), "0");
  });
});

describe("toDecimalString", () => {
  it("never uses exponent notation", () => {
    assert.equal(toDecimalString(1e-7), "0.0000001");
    assert.equal(toDecimalString(1.25e-10), "0.000000000125");
    assert.equal(toDecimalString(1.5e21), "1500000000000000000000");
    assert.equal(toDecimalString(-2.5e-8), "-0.000000025");
    assert.equal(toDecimalString(3150.42), "3150.42");
    assert.equal(toDecimalString(0), "0");
    assert.equal(toDecimalString(-5.2), "-5.2");
  });
  it("round-trips through Number", () => {
    for (const value of [1e-7, 123.456e-12, 9.87654321e25, 0.1 + 0.2, -4.2e-9]) {
      assert.equal(Number(toDecimalString(value)), value);
    }
  });
  it("refuses non-finite numbers", () => {
    assert.throws(() => toDecimalString(Number.NaN));
  });
});

describe("finite", () => {
  it("turns NaN, infinities and missing values into null", () => {
    assert.equal(finite(Number.NaN), null);
    assert.equal(finite(Number.POSITIVE_INFINITY), null);
    assert.equal(finite(undefined), null);
    assert.equal(finite(2), 2);
  });
});
