import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Candle, Pair, Trade } from "./api.js";
import {
  alignDown,
  appendOlderTrades,
  candleRange,
  choosePair,
  chooseSide,
  insertPushedTrade,
  mergeCandles,
  mergeNewTrades,
  refreshFrom,
  sideInfo,
  sortPairs,
  tokenIdOf,
  tradeKey,
} from "./market.js";

const candle = (minute: number, close: number): Candle => ({
  open: close,
  high: close,
  low: close,
  close,
  volume: 1,
  time: minute * 60_000,
  date: new Date(minute * 60_000).toISOString(),
});

const trade = (block: number, logIndex: number): Trade =>
  ({ hash: `0x${block.toString(16).padStart(64, "0")}`, log_index: logIndex, block_number: block }) as Trade;

describe("candle ranges", () => {
  it("aligns buckets to the UTC epoch", () => {
    const t = Date.parse("2026-03-04T13:37:12Z");
    assert.equal(new Date(alignDown(t, "4h")).toISOString(), "2026-03-04T12:00:00.000Z");
    assert.equal(new Date(alignDown(t, "1d")).toISOString(), "2026-03-04T00:00:00.000Z");
    assert.equal(new Date(alignDown(t, "15m")).toISOString(), "2026-03-04T13:30:00.000Z");
  });
  it("asks for a few hundred bars at most, ending now", () => {
    const now = Date.parse("2026-03-04T13:37:12Z");
    for (const interval of ["1m", "5m", "15m", "30m", "1h", "4h", "1d"] as const) {
      const { from, to } = candleRange(interval, now);
      assert.equal(to.getTime(), now);
      const bars =
        (now - from.getTime()) /
        { "1m": 1, "5m": 5, "15m": 15, "30m": 30, "1h": 60, "4h": 240, "1d": 1440 }[interval] /
        60_000;
      assert.ok(bars >= 100 && bars <= 400, `${interval}: ${bars} bars`);
    }
  });
  it("refreshes from the last bar on screen", () => {
    assert.equal(refreshFrom([candle(10, 1), candle(11, 2)], "1m", 0).getTime(), 11 * 60_000);
    assert.equal(refreshFrom([], "1m", 90_500).getTime(), 60_000);
  });
});

describe("mergeCandles", () => {
  it("replaces the last bar and appends newer ones, in order", () => {
    const shown = [candle(1, 1), candle(2, 2)];
    const { bars, updates } = mergeCandles(shown, [candle(3, 4), candle(2, 3)]);
    assert.deepEqual(
      bars.map((b) => [b.time / 60_000, b.close]),
      [
        [1, 1],
        [2, 3],
        [3, 4],
      ],
    );
    assert.deepEqual(
      updates.map((b) => b.time / 60_000),
      [2, 3],
    );
  });
  it("drops bars older than the last one (the chart cannot update them)", () => {
    const { updates } = mergeCandles([candle(1, 1), candle(2, 2)], [candle(1, 9)]);
    assert.deepEqual(updates, []);
  });
});

describe("insertPushedTrade", () => {
  const order = (trades: Trade[]) => trades.map((t) => `${t.block_number}/${t.log_index}`);
  it("puts a pushed trade on top, and pushes of one block in their order", () => {
    let shown = [trade(10, 1), trade(10, 0)];
    for (const pushed of [trade(11, 0), trade(11, 4)]) {
      const next = insertPushedTrade(shown, pushed);
      assert.equal(next.index, 0);
      shown = next.trades;
    }
    assert.deepEqual(order(shown), ["11/4", "11/0", "10/1", "10/0"]);
  });
  it("leaves out a trade already shown (a catch-up got it first)", () => {
    const shown = [trade(11, 0), trade(10, 1)];
    const next = insertPushedTrade(shown, trade(10, 1));
    assert.equal(next.index, -1);
    assert.deepEqual(order(next.trades), ["11/0", "10/1"]);
  });
  it("puts a late trade where it belongs, and fills an empty list", () => {
    const next = insertPushedTrade([trade(12, 0), trade(10, 0)], trade(11, 0));
    assert.equal(next.index, 1);
    assert.deepEqual(order(next.trades), ["12/0", "11/0", "10/0"]);
    assert.equal(insertPushedTrade([], trade(1, 0)).index, 0);
  });
});

describe("mergeNewTrades", () => {
  it("puts new trades on top, once", () => {
    const shown = [trade(10, 1), trade(10, 0), trade(9, 3)];
    const page = [trade(12, 0), trade(11, 2), trade(10, 1), trade(10, 0)];
    const merged = mergeNewTrades(shown, page);
    assert.equal(merged.reset, false);
    assert.deepEqual(merged.added.map(tradeKey), [trade(12, 0), trade(11, 2)].map(tradeKey));
    assert.deepEqual(
      merged.trades.map((t) => `${t.block_number}/${t.log_index}`),
      ["12/0", "11/2", "10/1", "10/0", "9/3"],
    );
  });
  it("changes nothing when no trade is new", () => {
    const shown = [trade(10, 1), trade(10, 0)];
    const merged = mergeNewTrades(shown, [trade(10, 1), trade(10, 0)]);
    assert.deepEqual(merged.added, []);
    assert.equal(merged.trades.length, 2);
    assert.equal(mergeNewTrades(shown, []).added.length, 0);
  });
  it("starts over when the page does not reach the trades shown (some were missed)", () => {
    const shown = [trade(10, 0)];
    const merged = mergeNewTrades(shown, [trade(30, 0), trade(29, 0)]);
    assert.equal(merged.reset, true);
    assert.deepEqual(
      merged.trades.map((t) => t.block_number),
      [30, 29],
    );
  });
  it("appends older pages without repeating trades", () => {
    const list = appendOlderTrades([trade(10, 0), trade(9, 0)], [trade(9, 0), trade(8, 1), trade(8, 0)]);
    assert.deepEqual(
      list.map((t) => `${t.block_number}/${t.log_index}`),
      ["10/0", "9/0", "8/1", "8/0"],
    );
  });
});

describe("pairs and sides", () => {
  const weth = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
  const usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
  const pair = (id: string, volume: number | null, liquidity: number, token0 = usdc, token1 = weth): Pair =>
    ({
      pair_id: `${id}:1`,
      chain: 1,
      volume,
      liquidity_value: liquidity,
      token0_address: `${token0}:1`,
      token1_address: `${token1}:1`,
      token0_symbol: token0 === usdc ? "USDC" : "WETH",
      token1_symbol: token1 === weth ? "WETH" : "USDC",
    }) as Pair;

  it("orders pairs by volume, then liquidity, unknown last", () => {
    const sorted = sortPairs([pair("0xa", null, 9), pair("0xb", 5, 1), pair("0xc", 5, 2), pair("0xd", 7, 0)]);
    assert.deepEqual(
      sorted.map((p) => p.pair_id),
      ["0xd:1", "0xc:1", "0xb:1", "0xa:1"],
    );
  });
  it("charts the asked pair when listed, else the first", () => {
    const pairs = [pair("0xb", 5, 1), pair("0xc", 4, 2)];
    assert.equal(choosePair(pairs, "0xc:1")?.pair_id, "0xc:1");
    assert.equal(choosePair(pairs, "0xf:1")?.pair_id, "0xb:1");
    assert.equal(choosePair([], undefined), undefined);
  });
  it("charts the page's token unless the other side is asked for", () => {
    const p = pair("0xb", 5, 1);
    assert.equal(chooseSide(p, `${weth}:1`, undefined), 1);
    assert.equal(chooseSide(p, `${usdc}:1`, undefined), 0);
    assert.equal(chooseSide(p, `${weth}:1`, 0), 0);
    assert.deepEqual(sideInfo(p, 1), { assetId: `${weth}:1`, symbol: "WETH", quoteSymbol: "USDC" });
  });
  it("accepts pair token fields with or without the chain suffix", () => {
    assert.equal(tokenIdOf("0xABC", 1), "0xabc:1");
    assert.equal(tokenIdOf("0xabc:56", 1), "0xabc:56");
  });
});
