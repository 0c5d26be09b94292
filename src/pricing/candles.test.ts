import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../_test/random.js";
import { type Ratio, ratioOfNumber, ratioToNumber } from "../exact/ratio.js";
import { CANDLE_INTERVALS, type Candle } from "../model/index.js";
import {
  aggregateTrades,
  baseResolutionOf,
  type CandleTrade,
  candleSide,
  fillCandleGaps,
  foldTrade,
  rollUpCandles,
} from "./candles.js";
import { tradeOf } from "./trade.js";

/** Random trades over a few days, several per block at times, sorted by key. */
function randomTrades(random: () => number, count: number): CandleTrade[] {
  const trades: CandleTrade[] = [];
  let block = 1_000;
  let time = Date.parse("2024-01-05T00:00:00Z") + Math.floor(random() * 3_600_000);
  let price = 2000;
  for (let i = 0; i < count; i++) {
    if (random() < 0.7) {
      const gapBlocks = random() < 0.05 ? 300 + Math.floor(random() * 3000) : 1 + Math.floor(random() * 5);
      block += gapBlocks;
      time += gapBlocks * 12_000;
    }
    price *= Math.exp((random() - 0.5) * 0.02);
    // Raw amounts (6 decimals each side) priced by the one trade function, both sides exact.
    const raw0 = BigInt(1 + Math.floor(random() * 1e7));
    const raw1 = BigInt(1 + Math.floor(Number(raw0) * price));
    const trade = tradeOf({ amount0In: raw0, amount1In: 0n, amount0Out: 0n, amount1Out: raw1 }, 6, 6);
    assert.ok(trade);
    // USD prices of each token as stored on the swap: now and then unknown (null), for stretches too.
    const known = random() < 0.8;
    trades.push({
      key: block * 100_000 + i,
      time,
      price: trade.price,
      price1: trade.price1,
      volume0: trade.volume0,
      volume1: trade.volume1,
      exact0: trade.exact0,
      exact1: trade.exact1,
      // A USD value that is not a short decimal: its exact sum differs from a running double sum.
      volumeUsd: trade.volume1 * 1.000_000_1,
      usd0: known && random() < 0.9 ? price * (1 + (random() - 0.5) * 1e-3) : null,
      usd1: known && random() < 0.7 ? 1 + (random() - 0.5) * 1e-4 : null,
      buy0: random() < 0.5,
    });
  }
  return trades;
}

/**
 * The reference: a direct aggregation of raw trades, written independently of candles.ts. In USD a
 * side keeps only the trades with a USD price of its token, and its volume is their USD volume.
 */
function directCandles(
  trades: readonly CandleTrade[],
  seconds: number,
  side: 0 | 1,
  currency: "token" | "usd" = "token",
) {
  const groups = new Map<number, CandleTrade[]>();
  const usdPrice = (t: CandleTrade) => (side === 0 ? t.usd0 : t.usd1);
  for (const t of trades) {
    if (currency === "usd" && usdPrice(t) === null) continue;
    const bucket = Math.floor(t.time / (seconds * 1000)) * seconds * 1000;
    groups.set(bucket, [...(groups.get(bucket) ?? []), t]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([time, group]) => {
      const sorted = [...group].sort((a, b) => a.key - b.key);
      const prices = sorted.map((t) =>
        currency === "usd" ? (usdPrice(t) as number) : side === 0 ? t.price : t.price1,
      );
      // The exact volume: raw amounts (6 decimals) summed as integers; USD values as the exact
      // rationals their doubles are; then rounded once.
      const volume =
        currency === "usd"
          ? ratioToNumber(...ratioSum(sorted.map((t) => ratioOfNumber(t.volumeUsd))))
          : ratioToNumber(
              sorted.reduce((sum, t) => sum + (side === 0 ? t.exact0 : t.exact1).digits, 0n),
              10n ** 6n,
            );
      return {
        time,
        open: prices[0],
        high: Math.max(...prices),
        low: Math.min(...prices),
        close: prices[prices.length - 1],
        volume,
        trades: sorted.length,
      };
    });
}

/** Σ of rationals, exactly, as [num, den]. */
function ratioSum(terms: readonly Ratio[]): [bigint, bigint] {
  let num = 0n;
  let den = 1n;
  for (const t of terms) {
    num = num * t.den + t.num * den;
    den *= t.den;
  }
  return [num, den];
}

describe("candles: property", () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`every interval equals a direct aggregation of the trades (seed ${seed})`, () => {
      const random = seededRandom(seed);
      const trades = randomTrades(random, 1500);
      // The stored resolutions, grown batch by batch as at ingest.
      const stored = new Map<number, Map<number, Candle>>();
      let i = 0;
      while (i < trades.length) {
        const batch = trades.slice(i, i + 1 + Math.floor(random() * 40));
        i += batch.length;
        for (const seconds of [60, 3600, 86_400]) {
          const rows = stored.get(seconds) ?? new Map<number, Candle>();
          stored.set(seconds, rows);
          for (const trade of batch) {
            const bucket = Math.floor(trade.time / (seconds * 1000)) * seconds * 1000;
            rows.set(bucket, foldTrade(rows.get(bucket), trade, bucket));
          }
        }
      }
      for (const seconds of [60, 3600, 86_400]) {
        const grown = [...(stored.get(seconds)?.values() ?? [])];
        assert.deepEqual(
          grown,
          aggregateTrades(trades, seconds),
          `${seconds}s: batch by batch is bit for bit all at once`,
        );
      }
      for (const interval of Object.values(CANDLE_INTERVALS)) {
        const base = [...(stored.get(baseResolutionOf(interval))?.values() ?? [])].sort(
          (a, b) => a.bucket - b.bucket,
        );
        const rolled = rollUpCandles(base, interval);
        for (const side of [0, 1] as const) {
          const expected = directCandles(trades, interval, side);
          const actual = rolled.map((c) => ({ ...candleSide(c, side), trades: c.trades }));
          assert.equal(actual.length, expected.length, `${interval}s side ${side}: as many candles`);
          actual.forEach((c, k) => {
            const e = expected[k];
            assert.ok(e);
            assert.equal(c.time, e.time, `${interval}s: bucket`);
            assert.equal(c.open, e.open, `${interval}s side ${side}: open is the first trade`);
            assert.equal(c.high, e.high, `${interval}s side ${side}: high`);
            assert.equal(c.low, e.low, `${interval}s side ${side}: low`);
            assert.equal(c.close, e.close, `${interval}s side ${side}: close is the last trade`);
            assert.equal(c.trades, e.trades, `${interval}s: trade count`);
            assert.equal(c.volume, e.volume, `${interval}s side ${side}: volume, the exact sum rounded once`);
          });
          const usdExpected = directCandles(trades, interval, side, "usd");
          const usdRolled = rolled.flatMap((c) => candleSide(c, side, "usd") ?? []);
          assert.ok(usdExpected.length > 0 && usdExpected.length <= expected.length, "some USD candles");
          assert.equal(
            usdRolled.length,
            usdExpected.length,
            `${interval}s side ${side}: as many USD candles`,
          );
          usdRolled.forEach((c, k) => {
            const e = usdExpected[k];
            assert.ok(e);
            assert.equal(c.time, e.time, `${interval}s USD: bucket`);
            for (const field of ["open", "high", "low", "close"] as const) {
              assert.equal(c[field], e[field], `${interval}s side ${side} USD: ${field}`);
            }
            assert.equal(
              c.volume,
              e.volume,
              `${interval}s side ${side}: USD volume, the exact sum rounded once`,
            );
          });
        }
      }
    });
  }
});

describe("candleSide", () => {
  const noUsd = { volumeUsd: 0, usd0: null, usd1: null };
  const units = (n: number) => ({
    exact0: { digits: 1n, scale: 0 },
    exact1: { digits: BigInt(n), scale: 0 },
  });

  it("gives token1's candle from the trades' own side-1 prices", () => {
    const c = aggregateTrades(
      [
        { ...noUsd, ...units(2), key: 1, time: 0, price: 2, price1: 0.5, volume0: 1, volume1: 2, buy0: true },
        {
          ...noUsd,
          ...units(4),
          key: 2,
          time: 1,
          price: 4,
          price1: 0.25,
          volume0: 1,
          volume1: 4,
          buy0: false,
        },
        { ...noUsd, ...units(1), key: 3, time: 2, price: 1, price1: 1, volume0: 1, volume1: 1, buy0: false },
      ],
      60,
    )[0] as Candle;
    assert.deepEqual(
      candleSide(c, 1),
      { time: 0, open: 0.5, high: 1, low: 0.25, close: 1, volume: 7 },
      "token1 in token0",
    );
    assert.equal(c.buys0, 1, "one buy of token0");
    assert.equal(candleSide(c, 0, "usd"), null, "no USD-priced trade: no USD candle");
  });

  it("gives a token's USD candle from the trades with a USD price of it only", () => {
    const trade = { price: 2, price1: 0.5, volume0: 1, volume1: 2, ...units(2), buy0: true };
    const c = aggregateTrades(
      [
        { ...trade, key: 1, time: 0, volumeUsd: 10, usd0: null, usd1: 5 },
        { ...trade, key: 2, time: 1, volumeUsd: 20, usd0: 9, usd1: null },
        { ...trade, key: 3, time: 2, volumeUsd: 30, usd0: 11, usd1: 4 },
        { ...trade, key: 4, time: 3, volumeUsd: 0, usd0: 10, usd1: null },
      ],
      60,
    )[0] as Candle;
    assert.deepEqual(candleSide(c, 0, "usd"), { time: 0, open: 9, high: 11, low: 9, close: 10, volume: 50 });
    assert.deepEqual(candleSide(c, 1, "usd"), { time: 0, open: 5, high: 5, low: 4, close: 4, volume: 40 });
    assert.equal(c.volumeUsd, 60, "the pool candle's USD volume counts every trade");
  });

  it("is the correctly rounded side-1 price where 1 / side 0 is not", () => {
    // 3 token0 for 11 token1 (0 decimals): side 1 is 3/11 rounded once; 1 / (11/3 rounded) is 1 ulp off.
    const trade = tradeOf({ amount0In: 3n, amount1In: 0n, amount0Out: 0n, amount1Out: 11n }, 0, 0);
    assert.ok(trade);
    const c = aggregateTrades([{ key: 1, time: 0, ...trade, ...noUsd }], 60)[0] as Candle;
    assert.equal(candleSide(c, 1).open, 3 / 11);
    assert.notEqual(1 / (11 / 3), 3 / 11, "the old reciprocal");
  });
});

describe("fillCandleGaps", () => {
  const candle = (time: number, close: number) => ({
    time,
    open: close,
    high: close,
    low: close,
    close,
    volume: 1,
  });

  it("fills empty intervals up to the end with the previous close", () => {
    const filled = fillCandleGaps([candle(0, 5), candle(180_000, 7)], 60, 300_000);
    assert.deepEqual(
      filled.map((c) => [c.time / 60_000, c.close, c.volume]),
      [
        [0, 5, 1],
        [1, 5, 0],
        [2, 5, 0],
        [3, 7, 1],
        [4, 7, 0],
      ],
      "minutes 1, 2 and 4 are empty",
    );
  });

  it("returns nothing without candles", () => {
    assert.deepEqual(fillCandleGaps([], 60, 1e9), [], "no trade, no candles");
  });
});
