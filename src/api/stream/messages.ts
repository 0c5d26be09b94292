/**
 * The stream's client messages: parsing and validation (pure). Errors are HttpErrors worded like
 * the HTTP API's parameter errors (src/api/validation.ts, src/api/ids.ts), naming the field.
 */
import { badRequest } from "../../internal/errors.js";
import { CANDLE_INTERVALS, type CandleInterval } from "../../model/index.js";
import { type ChainAddress, parseId, parseIdList, parsePairId, quote } from "../ids.js";

export const CHANNELS = ["trades", "candles", "prices"] as const;
export type Channel = (typeof CHANNELS)[number];
export const CURRENCIES = ["token", "usd"] as const;
export type Currency = (typeof CURRENCIES)[number];
const TYPES = ["auth", "subscribe", "unsubscribe", "ping"] as const;
const INTERVALS = Object.keys(CANDLE_INTERVALS) as CandleInterval[];

export type TradesSubscription = { channel: "trades"; pair: ChainAddress; asset: ChainAddress };
export type CandlesSubscription = {
  channel: "candles";
  pair: ChainAddress;
  asset: ChainAddress;
  interval: CandleInterval;
  currency: Currency;
};
export type PricesSubscription = { channel: "prices"; assets: ChainAddress[] };
export type Subscription = TradesSubscription | CandlesSubscription | PricesSubscription;

export type ClientMessage =
  | { type: "auth"; apiKey: string }
  | { type: "subscribe"; subscription: Subscription }
  | { type: "unsubscribe"; subscription: Subscription }
  | { type: "ping" };

/** Frames larger than this are refused by the WebSocket layer itself (close 1009). */
export const MAX_FRAME_BYTES = 1_048_576;

/**
 * One client frame → a message. Binary frames, frames over `maxBytes`, invalid JSON, anything but
 * an object with a known `type`, and bad fields are a 400 naming what was wrong.
 */
export function parseClientMessage(data: Buffer, isBinary: boolean, maxBytes: number): ClientMessage {
  if (isBinary) throw badRequest("messages must be JSON text frames, not binary frames");
  if (data.length > maxBytes) {
    throw badRequest(`the message is ${data.length} bytes long; at most ${maxBytes} are allowed`);
  }
  let value: unknown;
  try {
    value = JSON.parse(data.toString("utf8"));
  } catch {
    throw badRequest("the message is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badRequest(`a message must be a JSON object with a type (got ${quote(value)})`);
  }
  const fields = value as Record<string, unknown>;
  const type = oneOf(fields, "type", TYPES);
  switch (type) {
    case "auth":
      return { type, apiKey: string(fields, "api_key") };
    case "ping":
      return { type };
    case "subscribe":
    case "unsubscribe":
      return { type, subscription: parseSubscription(fields) };
  }
}

/** The channel and its parameters: the REST parameters of the same data, checked the same way. */
export function parseSubscription(fields: Record<string, unknown>): Subscription {
  const channel = oneOf(fields, "channel", CHANNELS);
  if (channel === "prices") return { channel, assets: parseIdList(string(fields, "asset_ids"), "asset_ids") };
  const pair = parsePairId(string(fields, "pair_id"), "pair_id");
  const asset = parseId(string(fields, "asset_id"), "asset_id");
  if (channel === "trades") return { channel, pair, asset };
  const interval = oneOf(fields, "interval", INTERVALS);
  const currency = own(fields, "currency") === undefined ? "token" : oneOf(fields, "currency", CURRENCIES);
  return { channel, pair, asset, interval, currency };
}

/** The subscription's fields as a client writes them (ids normalised), echoed in acknowledgements. */
export function subscriptionFields(subscription: Subscription): Record<string, string> {
  switch (subscription.channel) {
    case "prices":
      return { channel: "prices", asset_ids: subscription.assets.map((a) => a.id).join(",") };
    case "trades":
      return { channel: "trades", pair_id: subscription.pair.id, asset_id: subscription.asset.id };
    case "candles":
      return {
        channel: "candles",
        pair_id: subscription.pair.id,
        asset_id: subscription.asset.id,
        interval: subscription.interval,
        currency: subscription.currency,
      };
  }
}

/** A field of the message itself, never one inherited from Object.prototype (`__proto__`, `constructor`). */
function own(fields: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

function string(fields: Record<string, unknown>, name: string): string {
  const value = own(fields, name);
  if (value === undefined || value === null) throw badRequest(`${name} is required`);
  if (typeof value !== "string") throw badRequest(`${name} must be a string (got ${quote(value)})`);
  return value;
}

function oneOf<const T extends readonly string[]>(
  fields: Record<string, unknown>,
  name: string,
  values: T,
): T[number] {
  const value = string(fields, name);
  if (!values.includes(value)) {
    throw badRequest(`${name} must be one of ${values.join(", ")} (got ${quote(value)})`);
  }
  return value as T[number];
}
