// The page's client of the live stream `/v1/stream` (WebSocket). A browser cannot set headers on
// a WebSocket, so the key goes in the first message, never in the URL (which access logs keep).
// The connection's transitions are stream-state.ts's; this module runs them: opens the socket,
// sends the key and the subscriptions (again after every reconnection), pings to notice a dead
// connection, waits out the backoff, and lets go of the socket while the tab stays hidden.

import type { Timers } from "./poller.js";
import {
  type ClientMessage,
  initialStreamState,
  isPush,
  type PushMessage,
  parseServerMessage,
  type StreamEffect,
  type StreamEvent,
  type StreamState,
  type Subscription,
  streamStep,
  subscriptionKey,
} from "./stream-state.js";

/** What the stream needs of a WebSocket (the browser's satisfies it). */
export type SocketLike = {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
};

export type VisibilityDoc = Pick<Document, "visibilityState" | "addEventListener" | "removeEventListener">;

export type StreamHandlers = {
  /** A trade, candle, price or rollback. */
  onPush(message: PushMessage): void;
  /** The server acknowledged a subscription: pushes follow; whatever came before is the page's to fetch. */
  onSubscribed(subscription: Subscription): void;
  /** An error message of the server (a bad subscription, a limit, a refused key). */
  onError(statusCode: number, message: string): void;
  /** Every change of the connection's state. */
  onState(state: StreamState): void;
};

export type Stream = {
  readonly state: StreamState;
  /** True while pushes arrive: polling can rest. */
  isLive(): boolean;
  /** Adds a subscription (sent now when connected, and after every reconnection). */
  subscribe(subscription: Subscription): void;
  unsubscribe(subscription: Subscription): void;
  stop(): void;
};

/** A ping this often keeps proxies from closing a quiet connection and proves the server is there. */
export const pingEveryMs = 20_000;
/** Nothing heard for this long (two pings unanswered): the connection is taken for dead. */
export const silenceLimitMs = 45_000;
/** The socket is let go after the tab has been hidden this long, and reopened when it is shown. */
export const hiddenGraceMs = 60_000;

/** `ws://` or `wss://` + the page's host + `/v1/stream`. */
export function streamUrl(location: Pick<Location, "protocol" | "host">): string {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/stream`;
}

export function createStream(options: {
  url: string;
  getKey: () => string;
  handlers: StreamHandlers;
  connect?: (url: string) => SocketLike;
  timers?: Timers;
  now?: () => number;
  random?: () => number;
  doc?: VisibilityDoc;
}): Stream {
  const { handlers } = options;
  const connect = options.connect ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
  const timers: Timers = options.timers ?? {
    setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
    clearTimeout: (handle) => globalThis.clearTimeout(handle as number),
  };
  const now = options.now ?? (() => Date.now());
  const random = options.random ?? Math.random;
  const wanted = new Map<string, Subscription>();
  let state: StreamState = initialStreamState;
  let socket: SocketLike | undefined;
  let retryTimer: unknown;
  let pingTimer: unknown;
  let hiddenTimer: unknown;
  let heardAt = 0;

  const clear = (handle: unknown) => {
    if (handle !== undefined) timers.clearTimeout(handle);
  };

  /** Sends a message; its type is the API's own description of the client's messages. */
  const send = (message: ClientMessage) => {
    try {
      socket?.send(JSON.stringify(message));
    } catch {
      // A socket closing under us: its close event follows and the stream reconnects.
    }
  };

  const dispatch = (event: StreamEvent) => {
    const step = streamStep(state, event, random());
    const changed = step.state !== state;
    state = step.state;
    for (const effect of step.effects) run(effect);
    if (changed) handlers.onState(state);
  };

  /** Lets go of the current socket without waiting for its close handshake. */
  const drop = () => {
    clear(pingTimer);
    pingTimer = undefined;
    const current = socket;
    socket = undefined;
    if (!current) return;
    current.onopen = current.onmessage = current.onclose = current.onerror = null;
    try {
      current.close(1000, "bye");
    } catch {
      // Already closed.
    }
  };

  const heartbeat = () => {
    pingTimer = timers.setTimeout(() => {
      if (now() - heardAt > silenceLimitMs) {
        // A dead connection (a sleeping laptop, a dropped network) may never fire `close`.
        drop();
        dispatch({ type: "closed", code: 4000 });
        return;
      }
      send({ type: "ping" });
      heartbeat();
    }, pingEveryMs);
  };

  const open = () => {
    let current: SocketLike;
    try {
      current = connect(options.url);
    } catch {
      dispatch({ type: "closed", code: 1006 });
      return;
    }
    socket = current;
    current.onopen = () => {
      heardAt = now();
      dispatch({ type: "opened" });
    };
    current.onmessage = (event) => {
      heardAt = now();
      const message = typeof event.data === "string" ? parseServerMessage(event.data) : undefined;
      if (!message) return;
      if (message.type === "error") {
        if (message.statusCode === 401 || message.statusCode === 403) dispatch({ type: "refused" });
        handlers.onError(message.statusCode, message.message);
        return;
      }
      if (state.phase === "open") dispatch({ type: "confirmed" });
      if (message.type === "subscribed") {
        const subscription = wanted.get(subscriptionKey(message));
        if (subscription) handlers.onSubscribed(subscription);
      } else if (isPush(message)) handlers.onPush(message);
    };
    current.onclose = (event) => {
      if (socket !== current) return;
      socket = undefined;
      clear(pingTimer);
      pingTimer = undefined;
      dispatch({ type: "closed", code: event.code });
    };
    // An error is always followed by a close event, which decides what happens next.
    current.onerror = () => {};
  };

  function run(effect: StreamEffect) {
    switch (effect.type) {
      case "connect":
        open();
        break;
      case "hello":
        send({ type: "auth", api_key: options.getKey() });
        // The pong (or any answer) tells that the key was taken: there is no other acknowledgement.
        send({ type: "ping" });
        for (const subscription of wanted.values()) send({ type: "subscribe", ...subscription });
        heartbeat();
        break;
      case "disconnect":
        drop();
        break;
      case "schedule":
        clear(retryTimer);
        retryTimer = timers.setTimeout(() => {
          retryTimer = undefined;
          dispatch({ type: "retry" });
        }, effect.ms);
        break;
      case "cancel":
        clear(retryTimer);
        retryTimer = undefined;
        break;
    }
  }

  const canSend = () => state.phase === "open" || state.phase === "live";

  const onVisibility = () => {
    const doc = options.doc;
    if (!doc) return;
    clear(hiddenTimer);
    hiddenTimer = undefined;
    if (doc.visibilityState === "visible") dispatch({ type: "resume" });
    else
      hiddenTimer = timers.setTimeout(() => {
        hiddenTimer = undefined;
        dispatch({ type: "pause" });
      }, hiddenGraceMs);
  };
  options.doc?.addEventListener("visibilitychange", onVisibility);

  dispatch({ type: "start" });

  return {
    get state() {
      return state;
    },
    isLive: () => state.phase === "live",
    subscribe(subscription) {
      const key = subscriptionKey(subscription);
      if (wanted.has(key)) return;
      wanted.set(key, subscription);
      if (canSend()) send({ type: "subscribe", ...subscription });
    },
    unsubscribe(subscription) {
      if (!wanted.delete(subscriptionKey(subscription))) return;
      if (canSend()) send({ type: "unsubscribe", ...subscription });
    },
    stop() {
      options.doc?.removeEventListener("visibilitychange", onVisibility);
      clear(hiddenTimer);
      dispatch({ type: "stop" });
    },
  };
}
