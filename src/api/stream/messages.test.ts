import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpError } from "../../internal/errors.js";
import { closeReasonOf } from "./connection.js";
import { subscriptionKeys } from "./feeder.js";
import { createConnectionLimiter, createMessageRate } from "./limits.js";
import { parseClientMessage, subscriptionFields } from "./messages.js";

const PAIR = "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc";
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const parse = (value: unknown, options: { binary?: boolean; max?: number } = {}) =>
  parseClientMessage(
    Buffer.from(typeof value === "string" ? value : JSON.stringify(value)),
    options.binary ?? false,
    options.max ?? 16_384,
  );
const refused = (value: unknown, message: string | RegExp, options = {}) =>
  assert.throws(
    () => parse(value, options),
    (error: unknown) => {
      assert.ok(error instanceof HttpError);
      assert.equal(error.statusCode, 400);
      if (typeof message === "string") assert.equal(error.message, message);
      else assert.match(error.message, message);
      return true;
    },
  );

describe("stream client messages", () => {
  it("parses the four kinds, normalising ids and defaulting the candle currency", () => {
    assert.deepEqual(parse({ type: "ping" }), { type: "ping" });
    assert.deepEqual(parse({ type: "auth", api_key: "k" }), { type: "auth", apiKey: "k" });
    const candles = parse({
      type: "subscribe",
      channel: "candles",
      pair_id: `${PAIR.toUpperCase().replace("0X", "0x")}:1`,
      asset_id: ` ${WETH}:1 `,
      interval: "5m",
    });
    assert.equal(candles.type, "subscribe");
    assert.ok(candles.type === "subscribe");
    assert.deepEqual(subscriptionFields(candles.subscription), {
      channel: "candles",
      pair_id: `${PAIR}:1`,
      asset_id: `${WETH}:1`,
      interval: "5m",
      currency: "token",
    });
    assert.deepEqual(subscriptionKeys(candles.subscription), [`candles|${PAIR}:1|${WETH}:1|5m|token`]);
    const prices = parse({
      type: "unsubscribe",
      channel: "prices",
      asset_ids: `${WETH}:1, ${WETH}:1,${PAIR}:1`,
    });
    assert.ok(prices.type === "unsubscribe");
    assert.deepEqual(subscriptionKeys(prices.subscription), [`prices|${WETH}:1`, `prices|${PAIR}:1`]);
  });

  it("refuses everything else with a 400 naming the field, worded like the HTTP errors", () => {
    refused("{", "the message is not valid JSON");
    refused("[1]", 'a message must be a JSON object with a type (got "[1]")');
    refused({ type: "ping" }, "messages must be JSON text frames, not binary frames", { binary: true });
    refused(
      { type: "ping", pad: "x".repeat(100) },
      "the message is 124 bytes long; at most 100 are allowed",
      { max: 100 },
    );
    refused({}, "type is required");
    refused({ type: 1 }, 'type must be a string (got "1")');
    refused({ type: "subscribe" }, "channel is required");
    refused(
      { type: "subscribe", channel: "books" },
      'channel must be one of trades, candles, prices (got "books")',
    );
    refused({ type: "subscribe", channel: "trades", asset_id: `${WETH}:1` }, "pair_id is required");
    refused({ type: "subscribe", channel: "trades", pair_id: `${PAIR}:1` }, "asset_id is required");
    refused(
      { type: "subscribe", channel: "trades", pair_id: "x", asset_id: `${WETH}:1` },
      /^pair_id must be an id <address>:<chainId>/,
    );
    refused(
      { type: "subscribe", channel: "candles", pair_id: `${PAIR}:1`, asset_id: `${WETH}:1`, interval: "1w" },
      'interval must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d (got "1w")',
    );
    refused(
      {
        type: "subscribe",
        channel: "candles",
        pair_id: `${PAIR}:1`,
        asset_id: `${WETH}:1`,
        interval: "1m",
        currency: "eur",
      },
      'currency must be one of token, usd (got "eur")',
    );
    refused(
      { type: "subscribe", channel: "prices", asset_ids: Array(101).fill(`${WETH}:1`).join(",") },
      "asset_ids lists 101 items; at most 100 are allowed",
    );
    // Fields inherited from Object.prototype are no fields of the message.
    refused('{"type":"subscribe","channel":"trades","__proto__":{"pair_id":"x"}}', "pair_id is required");
  });
});

describe("stream limits", () => {
  it("counts connections per key and releases them", () => {
    const limiter = createConnectionLimiter(2);
    assert.equal(limiter.acquire(7), true);
    assert.equal(limiter.acquire(7), true);
    assert.equal(limiter.acquire(7), false);
    assert.equal(limiter.acquire(8), true);
    limiter.release(7);
    assert.equal(limiter.count(7), 1);
    assert.equal(limiter.acquire(7), true);
  });

  it("allows n messages per second: one 429 for the excess, the rest ignored, a new budget each second", () => {
    let now = 0;
    const take = createMessageRate(3, () => now);
    assert.deepEqual([take(), take(), take(), take(), take()], ["ok", "ok", "ok", "over", "ignored"]);
    now = 999;
    assert.equal(take(), "ignored");
    now = 1000;
    assert.equal(take(), "ok");
  });

  it("cuts a close reason to 123 bytes of UTF-8 at a character boundary", () => {
    assert.equal(closeReasonOf("short"), "short");
    for (const text of ["x".repeat(200), "é".repeat(100), "😀".repeat(50)]) {
      const reason = closeReasonOf(text);
      assert.ok(Buffer.byteLength(reason) <= 123 && reason.endsWith("…"), reason);
      assert.ok(text.startsWith(reason.slice(0, -1)));
    }
  });
});
