import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Fastify from "fastify";
import type { ChartCandle } from "../model/index.js";
import { candleRecords } from "./candle-records.js";
import { OkResponse } from "./routes/candles.js";

/**
 * The candles answer is written by JSON.stringify (`plainJson`, context.ts) instead of the
 * route's schema serializer: both must give the same bytes for every answer candleRecords builds.
 */
describe("candle records as JSON", () => {
  it("JSON.stringify writes what the route's schema serializer writes", async () => {
    const stored: ChartCandle[] = [];
    const prices = [
      3150.1,
      1,
      0,
      -0,
      5e-324,
      1e-7,
      1.5e-7,
      123456789012345680000,
      1e21,
      2.5e21,
      0.1 + 0.2,
      1 / 3,
      65021.918352992696,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
    ];
    const volumes = [...prices, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    // Deterministic mixes, every price in every field and every volume, at whole-minute, whole-second
    // and odd-millisecond times (candles' times are whole intervals; the others test the dates).
    let state = 7;
    const pick = <T>(list: readonly T[]) => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return list[state % list.length] as T;
    };
    for (let i = 0; i < 2000; i++) {
      stored.push({
        time: 1_787_718_900_000 + i * ([60_000, 3_600_000, 1000, 7][i % 4] as number),
        open: pick(prices),
        high: pick(prices),
        low: pick(prices),
        close: pick(prices),
        volume: pick(volumes),
      });
    }
    // Non-finite prices: candleRecords leaves such candles out.
    stored.push({ time: 0, open: Number.NaN, high: 1, low: 1, close: 1, volume: 1 });
    stored.push({ time: 60_000, open: 1, high: Number.POSITIVE_INFINITY, low: 1, close: 1, volume: 1 });
    const records = candleRecords(stored);
    assert.equal(records.length, 2000);

    const app = Fastify();
    app.get("/candles", { schema: { response: { 200: OkResponse } } }, async () => records);
    app.get("/none", { schema: { response: { 200: OkResponse } } }, async () => []);
    try {
      const written = await app.inject({ method: "GET", url: "/candles" });
      assert.equal(written.statusCode, 200);
      assert.equal(JSON.stringify(records), written.body);
      assert.equal(JSON.stringify([]), (await app.inject({ method: "GET", url: "/none" })).body);
    } finally {
      await app.close();
    }
  });
});
