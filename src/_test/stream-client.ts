import { once } from "node:events";
import { WebSocket } from "ws";
import { createOpenApiValidator, type OpenApiDocument } from "./openapi-validator.js";

/** A message the server sent, as parsed, with when it arrived (performance.timeOrigin-based ms). */
export type Received = { at: number; message: StreamMessage };
export type StreamMessage = { type: string; [field: string]: unknown };

export type TestStreamClient = {
  ws: WebSocket;
  /** Every message received so far, in order. */
  received: Received[];
  /** The next message not yet taken that matches `predicate` (default: any), waiting up to `timeoutMs`. */
  next(predicate?: (m: StreamMessage) => boolean, timeoutMs?: number): Promise<StreamMessage>;
  /** Sends an object as JSON, or a string / buffer as it is. */
  send(value: unknown, options?: { binary?: boolean }): void;
  /** Resolves with the close code and reason once the connection is closed. */
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
};

/**
 * A WebSocket client of /v1/stream for the tests (the `ws` package, real TCP): the key in the
 * upgrade's `x-api-key` header when given; every server message is checked against
 * `components.schemas.StreamServerMessage` of the server's /openapi.json.
 */
export async function connectStream(
  base: string,
  options: { key?: string; document?: OpenApiDocument; maxPayload?: number } = {},
): Promise<TestStreamClient> {
  const document =
    options.document ?? ((await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDocument);
  const validator = createOpenApiValidator(document);
  const url = `${base.replace(/^http/, "ws")}/v1/stream`;
  const ws = new WebSocket(url, {
    headers: options.key === undefined ? {} : { "x-api-key": options.key },
    ...(options.maxPayload ? { maxPayload: options.maxPayload } : {}),
  });
  const received: Received[] = [];
  let taken = 0;
  const waiters = new Set<() => void>();
  const failures: Error[] = [];
  ws.on("message", (data, isBinary) => {
    const at = performance.timeOrigin + performance.now();
    let message: StreamMessage;
    try {
      if (isBinary) throw new Error("the server sent a binary frame");
      message = JSON.parse(data.toString()) as StreamMessage;
      validator.checkComponent("StreamServerMessage", message);
    } catch (error) {
      failures.push(error as Error);
      message = { type: "invalid", error: String(error) };
    }
    received.push({ at, message });
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once("close", (code, reason) => {
      resolve({ code, reason: reason.toString() });
      for (const wake of waiters) wake();
    });
  });
  ws.on("error", () => {});
  await Promise.race([once(ws, "open"), closed]);

  const next = (predicate: (m: StreamMessage) => boolean = () => true, timeoutMs = 10_000) =>
    new Promise<StreamMessage>((resolve, reject) => {
      const look = () => {
        if (failures.length > 0) return fail(failures[0] as Error);
        for (let i = taken; i < received.length; i++) {
          const m = (received[i] as Received).message;
          if (predicate(m)) {
            taken = i + 1;
            return done(m);
          }
        }
        if (ws.readyState === WebSocket.CLOSED)
          fail(new Error("the connection closed before the message came"));
      };
      const timer = setTimeout(
        () =>
          fail(
            new Error(
              `no such message within ${timeoutMs} ms; received: ${JSON.stringify(received.slice(taken).map((r) => r.message)).slice(0, 600)}`,
            ),
          ),
        timeoutMs,
      );
      const done = (m: StreamMessage) => {
        clearTimeout(timer);
        waiters.delete(look);
        resolve(m);
      };
      const fail = (error: Error) => {
        clearTimeout(timer);
        waiters.delete(look);
        reject(error);
      };
      waiters.add(look);
      look();
    });

  return {
    ws,
    received,
    next,
    send(value, sendOptions = {}) {
      const data = typeof value === "string" || Buffer.isBuffer(value) ? value : JSON.stringify(value);
      ws.send(data, { binary: sendOptions.binary ?? false });
    },
    closed,
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close();
      await closed;
    },
  };
}
