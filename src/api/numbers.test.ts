import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import { finite } from "../model/index.js";
import { toDecimalString, unitsOrNull } from "./numbers.js";

describe("unitsOrNull", () => {
  it("scales raw integers by their decimals", () => {
    assert.equal(unitsOrNull("1500000", 6), 1.5);
    assert.equal(unitsOrNull(10n ** 18n, 18), 1);
    assert.equal(unitsOrNull("0", 18), 0);
    assert.equal(unitsOrNull("123", 0), 123);
  });
  it("keeps large raw values precise by scaling before converting", () => {
    // 2^200 wei would lose everything past 2^53 if converted first; scaled first it is exact to double precision.
    const raw = (2n ** 200n).toString();
    assert.equal(unitsOrNull(raw, 18), Number(2n ** 200n) / 1e18);
    assert.equal(unitsOrNull("123456789012345678901234567890", 18), 123456789012.34567);
    const odd = 123456789012345678901234567891n;
    assert.ok(Object.is(unitsOrNull(odd, 18), referenceRatioToNumber(odd, 10n ** 18n)), "rounded once");
  });
  it("answers null when the amount or the decimals are unknown", () => {
    assert.equal(unitsOrNull(null, 18), null);
    assert.equal(unitsOrNull("1", null), null);
    assert.equal(unitsOrNull("not a number", 18), null);
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
