import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  chainName,
  formatAge,
  formatAmount,
  formatChange,
  formatPrice,
  formatSupply,
  formatTradeTime,
  formatUsd,
  formatUsdCompact,
  missing,
  pricePrecision,
  shortHex,
} from "./format.js";

describe("formatUsd", () => {
  it("shows cents from one dollar up, grouped", () => {
    assert.equal(formatUsd(1234.5), "$1,234.50");
    assert.equal(formatUsd(1), "$1.00");
  });
  it("keeps 4 significant digits below a dollar, so small prices are not $0.00", () => {
    assert.equal(formatUsd(0.00012345), "$0.0001235");
    assert.equal(formatUsd(0.5), "$0.50");
  });
  it("shows a dash for a price the API could not derive (null), never 0", () => {
    assert.equal(formatUsd(null), missing);
    assert.equal(formatUsd(undefined), missing);
    assert.equal(formatUsd(Number.NaN), missing);
  });
});

describe("formatUsdCompact", () => {
  it("abbreviates large figures", () => {
    assert.equal(formatUsdCompact(1_234_567), "$1.23M");
    assert.equal(formatUsdCompact(950_500), "$950.5K");
    assert.equal(formatUsdCompact(12.345), "$12.35");
    assert.equal(formatUsdCompact(null), missing);
  });
});

describe("formatChange", () => {
  it("signs and colours the 24 h percentage", () => {
    assert.deepEqual(formatChange(5.2), { text: "+5.20%", direction: "up" });
    assert.deepEqual(formatChange(-3.106), { text: "−3.11%", direction: "down" });
    assert.deepEqual(formatChange(0.001), { text: "0.00%", direction: "flat" });
    assert.deepEqual(formatChange(null), { text: missing, direction: "flat" });
  });
});

describe("amounts and prices", () => {
  it("formats token amounts by size", () => {
    assert.equal(formatAmount(1_500_000), "1.5M");
    assert.equal(formatAmount(1234.56789), "1,234.5679");
    assert.equal(formatAmount(0.000123456789), "0.0001235");
    assert.equal(formatAmount(0), "0");
  });
  it("gives a price the decimals its size needs", () => {
    assert.equal(pricePrecision(2500), 2);
    assert.equal(pricePrecision(0.5), 4);
    assert.equal(pricePrecision(0.000012345), 8);
    assert.equal(pricePrecision(1e-20), 12);
    assert.equal(formatPrice(0.000012345), "0.00001235");
    assert.equal(formatPrice(2500.123), "2,500.12");
  });
  it("formats supplies", () => {
    assert.equal(formatSupply(1_000_000), "1,000,000");
    assert.equal(formatSupply(21_000_000_000), "21B");
  });
});

describe("texts", () => {
  it("shortens hex", () => {
    assert.equal(shortHex("0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"), "0xc02a…6cc2");
    assert.equal(shortHex("0x1234"), "0x1234");
  });
  it("shows a trade's UTC time, with the day when not today", () => {
    const now = new Date("2026-03-04T18:00:00Z");
    assert.equal(formatTradeTime("2026-03-04T14:03:27.000Z", now), "14:03:27");
    assert.equal(formatTradeTime("2026-03-01T09:05:00Z", now), "Mar 1 09:05");
  });
  it("says how long ago", () => {
    assert.equal(formatAge(0, 500), "just now");
    assert.equal(formatAge(0, 12_000), "12 s ago");
    assert.equal(formatAge(0, 180_000), "3 min ago");
    assert.equal(formatAge(0, 47 * 3_600_000), "47 h ago");
    assert.equal(formatAge(0, 7 * 86_400_000 + 3_600_000), "7 d ago");
  });
  it("names chains", () => {
    assert.equal(chainName("1"), "Ethereum");
    assert.equal(chainName(31337), "Devnet");
    assert.equal(chainName(10), "Chain 10");
  });
});
