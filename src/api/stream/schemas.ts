/**
 * JSON schemas of the stream's messages, published in /openapi.json under
 * `components.schemas` (StreamClientMessage, StreamServerMessage), each kind of message with its
 * `example` (OpenAPI 3.0 has no `examples` inside a schema), so clients can generate types and
 * the tests can check every message against the document.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { CANDLE_INTERVALS } from "../../model/index.js";
import { Trade, tradeExample } from "../routes/trades.js";
import { AssetToken, examples, exampleTokens, StringEnum } from "../schemas.js";
import { CHANNELS, CURRENCIES } from "./messages.js";

const intervals = Object.keys(CANDLE_INTERVALS);
const channel = StringEnum(CHANNELS, { description: "What to receive." });
const pairId = Type.String({ description: "Pair id `<pair address>:<network id>` (trades, candles)." });
const assetId = Type.String({
  description: "Token id `<address>:<network id>`, one of the pair's two tokens: the side seen from.",
});
const interval = StringEnum(intervals, { description: "Candle width (candles)." });
const currency = StringEnum(CURRENCIES, {
  description: "Candle prices in the pair's other token (`token`, the default).",
});
const assetIds = Type.String({
  description: "Comma-separated token ids, at most 100 (prices); each counts as one subscription.",
});
/** A subscription's parameters, as a client sends them and its acknowledgement echoes them. */
const subscription = {
  channel,
  pair_id: Type.Optional(pairId),
  asset_id: Type.Optional(assetId),
  interval: Type.Optional(interval),
  currency: Type.Optional(currency),
  asset_ids: Type.Optional(assetIds),
};

const AuthMessage = Type.Object(
  {
    type: StringEnum(["auth"] as const),
    api_key: Type.String({ description: "Your API key (when the upgrade could not carry `x-api-key`)." }),
  },
  {
    additionalProperties: false,
    description: "The first message of a connection without `x-api-key`.",
    example: { type: "auth", api_key: "tm_…" },
  },
);
const SubscriptionMessage = Type.Object(
  {
    type: StringEnum(["subscribe", "unsubscribe"] as const),
    ...subscription,
  },
  {
    description:
      'trades: `pair_id`, `asset_id`; candles: `pair_id`, `asset_id`, `interval` (and `currency`); prices: `asset_ids`. For example `{"type":"subscribe","channel":"candles","pair_id":"…","asset_id":"…","interval":"1m"}`, `{"type":"subscribe","channel":"prices","asset_ids":"id,id"}`.',
    example: { type: "subscribe", channel: "trades", pair_id: examples.pairId, asset_id: examples.wethId },
  },
);
const PingMessage = Type.Object(
  { type: StringEnum(["ping"] as const) },
  { description: "Answered by a pong.", example: { type: "ping" } },
);

export const StreamClientMessage = Type.Union([AuthMessage, SubscriptionMessage, PingMessage], {
  $id: "StreamClientMessage",
  description: "A message a client sends on /v1/stream (a JSON text frame).",
});

const Candle = Type.Object(
  {
    open: Type.Number(),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number(),
    volume: Type.Number({ description: "Amount of `asset_id` traded in the interval." }),
    date: Type.String({ format: "date-time", description: "Interval start, ISO 8601 UTC." }),
    time: Type.Integer({ description: "Interval start in milliseconds since the epoch." }),
  },
  { additionalProperties: false, description: "The candle record of /api/v1/candles." },
);

const message = (
  type: string,
  properties: Record<string, TSchema>,
  description: string,
  example: Record<string, unknown>,
) =>
  Type.Object(
    { type: StringEnum([type] as const), ...properties },
    { additionalProperties: false, description, example: { type, ...example } },
  );

const Acknowledgement = Type.Object(
  {
    type: StringEnum(["subscribed", "unsubscribed"] as const),
    ...subscription,
    block: Type.Optional(
      Type.Integer({
        description:
          "Trades only: the stream carries this pair's trades of the blocks after this one (fetch older ones from /api/v1/trades).",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "A subscription's acknowledgement, echoing its parameters (ids in lowercase).",
    example: {
      type: "subscribed",
      channel: "trades",
      pair_id: examples.pairId,
      asset_id: examples.wethId,
      block: 23800122,
    },
  },
);

export const StreamServerMessage = Type.Union(
  [
    Acknowledgement,
    message(
      "trade",
      { asset_id: assetId, data: Trade },
      "A new trade: the record of /api/v1/trades for `asset_id`, oldest first.",
      { asset_id: examples.wethId, data: tradeExample },
    ),
    message(
      "candle",
      { pair_id: pairId, asset_id: assetId, interval, currency, data: Candle },
      "The candle of the interval holding the pair's latest trade, each time it changed.",
      {
        pair_id: examples.pairId,
        asset_id: examples.wethId,
        interval: "1m",
        currency: "token",
        data: {
          open: 3150.1,
          high: 3152.5,
          low: 3149.8,
          close: 3151.2,
          volume: 2.5,
          date: "2026-11-21T10:00:00Z",
          time: 1795255200000,
        },
      },
    ),
    message(
      "price",
      { data: AssetToken },
      "A token's record as /api/v1/assets gives it, each time it changed at a commit.",
      { data: exampleTokens.asset },
    ),
    message(
      "rollback",
      {
        chain: Type.Integer({ description: "Network id." }),
        block: Type.Integer({ description: "The new checkpoint: data of the blocks after it was undone." }),
      },
      "A reorg undid the data after `block` on `chain`; the corrected data follows.",
      { chain: 1, block: 23800120 },
    ),
    message("pong", {}, "The answer to a ping.", {}),
    message(
      "error",
      {
        statusCode: Type.Integer({ description: "400, 403, 404, 429 (or 500, 503), as the HTTP errors." }),
        message: Type.String({ description: "What was wrong, naming the field." }),
      },
      "A message that could not be served; the connection stays open unless a close follows.",
      { statusCode: 400, message: 'interval must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d (got "2m")' },
    ),
  ],
  {
    $id: "StreamServerMessage",
    description: "A message the server sends on /v1/stream (JSON text frames).",
  },
);
