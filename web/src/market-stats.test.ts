import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { TokenMarket, Windows } from "./api.js";
import { missing } from "./format.js";
import { formatCount, marketFacts, windowRow, windowRows } from "./market-stats.js";

const windows: Windows = {
  "5m": { price_change: 0.1234, volume_usd: 1234.5, buys: 3, sells: 1, makers: 4 },
  "1h": { price_change: -2.5, volume_usd: 98_765.4, buys: 40, sells: 60, makers: 77 },
  "6h": { price_change: null, volume_usd: 0, buys: 0, sells: 0, makers: 0 },
  "24h": { price_change: 12, volume_usd: 2_500_000, buys: 1200, sells: 1300, makers: 2048 },
};

const market = (over: Partial<TokenMarket> = {}): TokenMarket => ({
  token_id: "0xabc:1",
  chain: 1,
  contract: "0xabc",
  name: "Wrapped Ether",
  symbol: "WETH",
  decimals: 18,
  usd_price: 3012.5,
  windows,
  liquidity_usd: 123_456.7,
  total_supply: 1_000_000,
  fdv: 3.0125e9,
  circulating_supply: null,
  market_cap: null,
  pools: 12,
  first_trade_at: "2026-03-01T10:00:00Z",
  ...over,
});

describe("windowRows", () => {
  it("formats each window's change, volume, buys and sells, and makers, shortest first", () => {
    const rows = windowRows(windows);
    assert.deepEqual(
      rows.map((r) => r.window),
      ["5m", "1h", "6h", "24h"],
    );
    const [m5, h1, h6, h24] = rows;
    assert.deepEqual(m5?.change, { text: "+0.12%", direction: "up" });
    assert.equal(m5?.volume, "$1.23K");
    assert.equal(m5?.buys, "3");
    assert.equal(m5?.sells, "1");
    assert.equal(m5?.buyShare, 0.75);
    assert.equal(m5?.makers, "4");
    assert.deepEqual(h1?.change, { text: "−2.50%", direction: "down" });
    assert.equal(h1?.buyShare, 0.4);
    assert.equal(h24?.volume, "$2.5M");
    assert.equal(h24?.buys, "1,200");
    assert.equal(h24?.makers, "2,048");
    assert.equal(h24?.trades, 2500);
    // A quiet window: no change known, zero volume and trades, and no buy/sell bar.
    assert.equal(h6?.change.text, missing);
    assert.equal(h6?.volume, "$0.00");
    assert.equal(h6?.buyShare, null);
    assert.equal(h6?.buys, "0");
  });
  it("shows dashes, not zeros, for a window the answer lacks", () => {
    const row = windowRow("1h", undefined);
    assert.equal(row.buys, missing);
    assert.equal(row.makers, missing);
    assert.equal(row.volume, missing);
    assert.equal(windowRows(undefined).length, 4);
  });
});

describe("marketFacts", () => {
  const now = Date.parse("2026-03-08T10:00:00Z");
  it("lists liquidity, FDV, market cap, pools and the first trade", () => {
    const facts = Object.fromEntries(marketFacts(market(), now).map((f) => [f.label, f]));
    assert.equal(facts.Liquidity?.value, "$123.46K");
    assert.equal(facts.FDV?.value, "$3.01B");
    assert.equal(facts["Market cap"]?.value, missing, "no circulating supply configured");
    assert.match(facts["Market cap"]?.title ?? "", /No circulating supply/);
    assert.equal(facts.Pools?.value, "12");
    assert.equal(facts["First trade"]?.value, "7 d ago");
  });
  it("shows a configured market cap, and no first trade without one", () => {
    const facts = marketFacts(
      market({ market_cap: 2.5e9, circulating_supply: 830_000, first_trade_at: null }),
      now,
    );
    assert.equal(facts.find((f) => f.label === "Market cap")?.value, "$2.5B");
    assert.equal(
      facts.some((f) => f.label === "First trade"),
      false,
    );
  });
  it("counts with grouping", () => {
    assert.equal(formatCount(1234567), "1,234,567");
    assert.equal(formatCount(null), missing);
  });
});
