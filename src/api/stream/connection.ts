/**
 * One stream connection: authentication (the `x-api-key` header of the upgrade, or a first
 * message `{"type":"auth","api_key":…}` within the auth timeout), the client's messages in order,
 * the per-connection limits, and every send guarded against a slow consumer.
 */
import { type RawData, WebSocket } from "ws";
import type { Config } from "../../config/schema.js";
import { HttpError } from "../../internal/errors.js";
import type { Logger } from "../../internal/logger.js";
import { isDatabaseUnavailable } from "../../store/db.js";
import type { FailedKeyLimiter, KeyCheck } from "../auth.js";
import type { StreamMetrics } from "../metrics.js";
import type { StreamClient, StreamFeeder } from "./feeder.js";
import { type ConnectionLimiter, createMessageRate } from "./limits.js";
import { type ClientMessage, parseClientMessage } from "./messages.js";

/** Close codes of the stream (docs/API.md "Stream"). */
export const CLOSE = {
  /** Server shutting down. */
  goingAway: 1001,
  /** A frame larger than the hard cap (sent by the WebSocket layer). */
  tooBig: 1009,
  /** The database could not check the key. */
  internal: 1011,
  /** Send buffer over api.stream.maxBufferedBytes. */
  slowConsumer: 4008,
  /** No key, a wrong key, or no auth message in time. */
  forbidden: 4403,
  /** Too many connections for the key, or too many failed key checks from the address. */
  tooMany: 4429,
} as const;

/** Longer keys are refused without a look-up (as on the HTTP endpoints). */
const MAX_KEY_LENGTH = 200;

export type StreamConnection = {
  client: StreamClient;
  /** Called by the keep-alive timer: false when the previous ping got no pong (then it is terminated). */
  heartbeat(): boolean;
  /** Closes the connection with `code` (server shutdown: 1001). */
  close(code: number, reason: string, metricReason: string): void;
  /** Drops the connection at once (after a close the client did not answer). */
  terminate(): void;
};

export type ConnectionDeps = {
  settings: Config["api"]["stream"];
  keys: KeyCheck;
  failedKeys: FailedKeyLimiter;
  connections: ConnectionLimiter;
  feeder: StreamFeeder;
  metrics: StreamMetrics;
  logger: Logger;
};

/**
 * Takes over an upgraded socket. `apiKey` is the upgrade's `x-api-key` header (undefined: the
 * client authenticates by its first message); `address` is the client's, for the failed-key limit.
 */
export function openConnection(
  deps: ConnectionDeps,
  socket: WebSocket,
  options: { id: number; apiKey: string | undefined; address: string; onClosed: () => void },
): StreamConnection {
  const { settings, metrics, feeder } = deps;
  const log = deps.logger.child({ connection: options.id });
  const rate = createMessageRate(settings.messagesPerSecond);
  let phase: "auth" | "open" | "closing" = "auth";
  let keyId: number | undefined;
  let closeReason: string | undefined;
  let firstMessageSeen = false;
  let alive = true;
  /** The client's messages are handled one after the other, in order. */
  let queue: Promise<void> = Promise.resolve();

  const send = (text: string, type: string, since?: number): boolean => {
    if (phase === "closing" || socket.readyState !== WebSocket.OPEN) return false;
    const waiting = socket.bufferedAmount;
    if (waiting + Buffer.byteLength(text) > settings.maxBufferedBytes) {
      close(
        CLOSE.slowConsumer,
        `slow consumer: ${waiting} bytes not yet read, at most ${settings.maxBufferedBytes}`,
        "slow_consumer",
      );
      return false;
    }
    socket.send(text);
    metrics.sent(type);
    if (since !== undefined) metrics.delay(Math.max(0, Date.now() - since) / 1000);
    return true;
  };

  const client: StreamClient = {
    id: options.id,
    send,
    subscriptions: new Map(),
    closed: () => phase === "closing",
  };

  const error = (statusCode: number, message: string) =>
    send(JSON.stringify({ type: "error", statusCode, message }), "error");

  /**
   * Stops everything for this connection at once (nothing more is sent or registered) and starts
   * the closing handshake; the close frame goes after what is already buffered, and the
   * WebSocket layer drops the connection if the client does not answer it within 30 s.
   */
  const close = (code: number, reason: string, metricReason: string) => {
    if (phase === "closing") return;
    phase = "closing";
    // Counted now: a client that does not read may take 30 s to let the handshake end.
    closeReason = metricReason;
    metrics.closed(metricReason);
    clearTimeout(authTimer);
    feeder.drop(client);
    socket.close(code, reason);
  };

  /** An error message, then the close: for failures that end the connection. */
  const fail = (statusCode: number, message: string, code: number, metricReason: string) => {
    error(statusCode, message);
    close(code, closeReasonOf(message), metricReason);
  };

  const authTimer = options.apiKey
    ? undefined
    : setTimeout(() => {
        if (phase === "auth" && !firstMessageSeen) {
          fail(
            403,
            `no API key: send {"type":"auth","api_key":"…"} within ${settings.authTimeoutMs / 1000} s of connecting, or the x-api-key header with the upgrade`,
            CLOSE.forbidden,
            "auth",
          );
        }
      }, settings.authTimeoutMs);
  authTimer?.unref();

  const authenticate = async (key: string) => {
    const wait = deps.failedKeys.blockedFor(options.address);
    if (wait > 0) {
      fail(
        429,
        `too many failed API key checks from this address; retry after ${wait} s`,
        CLOSE.tooMany,
        "limit",
      );
      return;
    }
    let identity: Awaited<ReturnType<KeyCheck["find"]>>;
    try {
      identity =
        key.length === 0 || key.length > MAX_KEY_LENGTH
          ? null
          : await deps.keys.find(key, () => deps.failedKeys.begin(options.address));
    } catch (e) {
      log.warn({ err: e }, "stream key check failed");
      fail(503, "the database did not answer in time; retry later", CLOSE.internal, "error");
      return;
    }
    if (phase === "closing") return;
    if (!identity) {
      fail(403, "the API key is unknown or revoked", CLOSE.forbidden, "auth");
      return;
    }
    if (!deps.connections.acquire(identity.id)) {
      fail(
        429,
        `too many stream connections for this key: at most ${settings.connectionsPerKey} per API process`,
        CLOSE.tooMany,
        "limit",
      );
      return;
    }
    keyId = identity.id;
    phase = "open";
    clearTimeout(authTimer);
  };

  const handle = async (message: ClientMessage) => {
    if (phase !== "open") return;
    try {
      switch (message.type) {
        case "ping":
          send(JSON.stringify({ type: "pong" }), "pong");
          return;
        case "auth":
          error(400, "the connection is already authenticated");
          return;
        case "subscribe":
          await feeder.subscribe(client, message.subscription);
          return;
        case "unsubscribe":
          feeder.unsubscribe(client, message.subscription);
          return;
      }
    } catch (e) {
      if (e instanceof HttpError && e.statusCode < 500) error(e.statusCode, e.message);
      else if (isDatabaseUnavailable(e)) error(503, "the database did not answer in time; retry later");
      else {
        log.error({ err: e }, "stream message failed");
        error(500, `unexpected processing error (connection ${options.id})`);
      }
    }
  };

  const enqueue = (task: () => Promise<void>) => {
    queue = queue.then(task).catch((e: unknown) => log.error({ err: e }, "stream connection task failed"));
  };

  socket.on("message", (data: RawData, isBinary: boolean) => {
    if (phase === "closing") return;
    const verdict = rate();
    if (verdict !== "ok") {
      if (verdict === "over") {
        error(
          429,
          `too many messages: at most ${settings.messagesPerSecond} per second; the others of this second are ignored`,
        );
      }
      return;
    }
    let message: ClientMessage;
    try {
      message = parseClientMessage(toBuffer(data), isBinary, settings.maxMessageBytes);
    } catch (e) {
      const text = e instanceof HttpError ? e.message : "the message is not valid";
      if (phase === "auth" && !options.apiKey && !firstMessageSeen) {
        firstMessageSeen = true;
        fail(403, `authentication required: ${text}`, CLOSE.forbidden, "auth");
      } else error(400, text);
      return;
    }
    if (phase === "auth" && !options.apiKey && !firstMessageSeen) {
      firstMessageSeen = true;
      if (message.type !== "auth") {
        fail(
          403,
          'authentication required: the first message must be {"type":"auth","api_key":"…"} (or send the x-api-key header with the upgrade)',
          CLOSE.forbidden,
          "auth",
        );
        return;
      }
      const key = message.apiKey;
      enqueue(() => authenticate(key));
      return;
    }
    enqueue(() => handle(message));
  });

  socket.on("pong", () => {
    alive = true;
  });

  socket.on("close", (code: number) => {
    if (closeReason === undefined) metrics.closed(code === CLOSE.tooBig ? "too_big" : "client");
    phase = "closing";
    clearTimeout(authTimer);
    feeder.drop(client);
    if (keyId !== undefined) deps.connections.release(keyId);
    options.onClosed();
  });

  if (options.apiKey !== undefined) {
    const key = options.apiKey;
    enqueue(() => authenticate(key));
  }

  return {
    client,
    heartbeat() {
      if (!alive) {
        if (closeReason === undefined) {
          closeReason = "timeout";
          metrics.closed(closeReason);
        }
        phase = "closing";
        socket.terminate();
        return false;
      }
      alive = false;
      if (socket.readyState === WebSocket.OPEN) socket.ping();
      return true;
    },
    close,
    terminate: () => socket.terminate(),
  };
}

/** A close frame's reason holds at most 123 bytes of UTF-8: the message, cut at a character boundary. */
export function closeReasonOf(message: string): string {
  if (Buffer.byteLength(message) <= 123) return message;
  const chars = [...message];
  while (Buffer.byteLength(`${chars.join("")}…`) > 123) chars.pop();
  return `${chars.join("")}…`;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
