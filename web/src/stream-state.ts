// The live stream's pure parts: the messages of `/v1/stream` (docs/API.md "Stream"), the key of a
// subscription, the reconnection backoff and the connection's state machine. stream.ts runs them
// against a real WebSocket; keeping them pure lets the tests walk every transition without one.

import type { components } from "./api-types.js";
import type { Interval } from "./route.js";

/** A message of the server, as the API's OpenAPI document describes it (`StreamServerMessage`). */
export type ServerMessage = components["schemas"]["StreamServerMessage"];

/** A message of the page (`StreamClientMessage`). */
export type ClientMessage = components["schemas"]["StreamClientMessage"];

/** What the page subscribes to: the REST parameters of the same data. */
export type Subscription =
  | { channel: "trades"; pair_id: string; asset_id: string }
  | { channel: "candles"; pair_id: string; asset_id: string; interval: Interval; currency?: "token" | "usd" }
  | { channel: "prices"; asset_ids: string };

/** The data pushed by the server: a trade, a candle, a price, a rollback. */
export type PushMessage = Extract<ServerMessage, { type: "trade" | "candle" | "price" | "rollback" }>;

/** A token record as `/api/v1/assets` gives it (`chain` an integer). */
export type PriceRecord = Extract<ServerMessage, { type: "price" }>["data"];

/** True for the messages that carry data (trade, candle, price, rollback). */
export function isPush(message: ServerMessage): message is PushMessage {
  return (
    message.type === "trade" ||
    message.type === "candle" ||
    message.type === "price" ||
    message.type === "rollback"
  );
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A server message, or undefined for anything else (not JSON, an unknown type, a push without
 * its data): the page acts on the messages it understands and ignores the rest, so a newer server
 * with more message types does not break an older page.
 */
export function parseServerMessage(text: string): ServerMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value.type !== "string") return undefined;
  switch (value.type) {
    case "trade":
    case "price":
      return isObject(value.data) ? (value as ServerMessage) : undefined;
    case "candle":
      return isObject(value.data) &&
        typeof value.pair_id === "string" &&
        typeof value.asset_id === "string" &&
        typeof value.interval === "string"
        ? (value as ServerMessage)
        : undefined;
    case "rollback":
      return typeof value.chain === "number" && typeof value.block === "number"
        ? (value as ServerMessage)
        : undefined;
    case "subscribed":
    case "unsubscribed":
      return typeof value.channel === "string" ? (value as ServerMessage) : undefined;
    case "error":
      return typeof value.statusCode === "number"
        ? { type: "error", statusCode: value.statusCode, message: String(value.message ?? "") }
        : undefined;
    case "pong":
      return { type: "pong" };
    default:
      return undefined;
  }
}

/**
 * The identity of a subscription, from its channel and parameters (ids lowercased, the default
 * `currency=token` left out), so that the server's acknowledgement, which echoes the parameters,
 * finds the subscription it answers.
 */
export function subscriptionKey(params: { channel: string; [param: string]: unknown }): string {
  const text = (name: string) => {
    const value = params[name];
    return typeof value === "string" ? value.toLowerCase() : "";
  };
  switch (params.channel) {
    case "trades":
      return `trades|${text("pair_id")}|${text("asset_id")}`;
    case "candles": {
      const currency = text("currency") || "token";
      return `candles|${text("pair_id")}|${text("asset_id")}|${params.interval}|${currency}`;
    }
    case "prices":
      return `prices|${text("asset_ids")}`;
    default:
      return `${params.channel}|?`;
  }
}

/** Longest wait between two connection attempts. */
export const maxBackoffMs = 30_000;

/**
 * The wait before reconnection attempt `attempt` (1, 2, …): 1 s doubling up to 30 s, each drawn
 * between half and all of it (`random` in [0, 1)), so that many pages cut off by one server
 * restart do not all come back in the same instant.
 */
export function backoffMs(attempt: number, random: number): number {
  const base = Math.min(maxBackoffMs, 1000 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (base / 2) * Math.min(Math.max(random, 0), 1));
}

/**
 * - `connecting`: a socket is being opened; `open`: it is, and the key and subscriptions are sent;
 * - `live`: the server answered after the key (the key is good): pushes arrive;
 * - `backoff`: the socket closed or failed; a new attempt waits `retryInMs`;
 * - `refused`: the server refused the key (403, close code 4403): no retry with the same key;
 * - `paused`: the tab has been hidden for a while; `stopped`: the page is gone.
 */
export type StreamPhase =
  | "idle"
  | "connecting"
  | "open"
  | "live"
  | "backoff"
  | "refused"
  | "paused"
  | "stopped";

export type StreamState = {
  phase: StreamPhase;
  /** Connection attempts that failed since the stream was last live. */
  attempt: number;
  /** In `backoff`: the wait before the next attempt. */
  retryInMs?: number;
};

export type StreamEvent =
  | { type: "start" }
  | { type: "opened" }
  /** The first message after the key that is not a refusal. */
  | { type: "confirmed" }
  /** An error 403 (a bad key). */
  | { type: "refused" }
  | { type: "closed"; code: number }
  /** The backoff's timer fired. */
  | { type: "retry" }
  | { type: "pause" }
  | { type: "resume" }
  | { type: "stop" };

export type StreamEffect =
  | { type: "connect" }
  /** Send the key, a ping and every subscription. */
  | { type: "hello" }
  | { type: "disconnect" }
  | { type: "schedule"; ms: number }
  | { type: "cancel" };

/** The close code of a refused key (docs/API.md). */
export const refusedCloseCode = 4403;

export const initialStreamState: StreamState = { phase: "idle", attempt: 0 };

/** One transition of the connection; `random` in [0, 1) spreads the backoff. */
export function streamStep(
  state: StreamState,
  event: StreamEvent,
  random: number,
): { state: StreamState; effects: StreamEffect[] } {
  const same = { state, effects: [] };
  const { phase } = state;
  const connected = phase === "connecting" || phase === "open" || phase === "live";
  switch (event.type) {
    case "start":
      return phase === "idle" || phase === "refused"
        ? { state: { phase: "connecting", attempt: 0 }, effects: [{ type: "connect" }] }
        : same;
    case "opened":
      return phase === "connecting"
        ? { state: { phase: "open", attempt: state.attempt }, effects: [{ type: "hello" }] }
        : same;
    case "confirmed":
      return phase === "open" ? { state: { phase: "live", attempt: 0 }, effects: [] } : same;
    case "refused":
      return connected
        ? { state: { phase: "refused", attempt: state.attempt }, effects: [{ type: "disconnect" }] }
        : same;
    case "closed": {
      if (!connected) return same;
      if (event.code === refusedCloseCode) {
        return { state: { phase: "refused", attempt: state.attempt }, effects: [] };
      }
      const attempt = state.attempt + 1;
      const ms = backoffMs(attempt, random);
      return { state: { phase: "backoff", attempt, retryInMs: ms }, effects: [{ type: "schedule", ms }] };
    }
    case "retry":
      return phase === "backoff"
        ? { state: { phase: "connecting", attempt: state.attempt }, effects: [{ type: "connect" }] }
        : same;
    case "pause":
      return connected || phase === "backoff"
        ? {
            state: { phase: "paused", attempt: 0 },
            effects: [{ type: "cancel" }, { type: "disconnect" }],
          }
        : same;
    case "resume":
      return phase === "paused"
        ? { state: { phase: "connecting", attempt: 0 }, effects: [{ type: "connect" }] }
        : same;
    case "stop":
      return phase === "stopped"
        ? same
        : {
            state: { phase: "stopped", attempt: state.attempt },
            effects: [{ type: "cancel" }, { type: "disconnect" }],
          };
  }
}

export type LiveIndicator = {
  /** `live`: pushes arrive; `connecting`: the stream is opening; `polling`: the page polls instead. */
  mode: "live" | "connecting" | "polling" | "paused";
  text: string;
  /** The longer story, for the indicator's tooltip. */
  title: string;
};

/** What the page's live indicator says for a state of the stream. */
export function liveIndicator(state: StreamState, pollEveryMs: number): LiveIndicator {
  const polling = `polling every ${Math.round(pollEveryMs / 1000)} s`;
  switch (state.phase) {
    case "live":
      return { mode: "live", text: "Live", title: "Trades, candles and the price arrive through the stream" };
    case "idle":
    case "connecting":
    case "open":
      return state.attempt === 0
        ? { mode: "connecting", text: "Connecting…", title: `Opening the live stream; ${polling} meanwhile` }
        : {
            mode: "polling",
            text: "Polling",
            title: `The live stream is down (attempt ${state.attempt + 1} to reconnect); ${polling}`,
          };
    case "backoff":
      return {
        mode: "polling",
        text: "Polling",
        title: `The live stream is down; ${polling}, next attempt in ${Math.ceil((state.retryInMs ?? 0) / 1000)} s`,
      };
    case "refused":
      return { mode: "polling", text: "Polling", title: `The stream refused the API key; ${polling}` };
    case "paused":
    case "stopped":
      return { mode: "paused", text: "Paused", title: "The tab is hidden: no updates until it is shown" };
  }
}
