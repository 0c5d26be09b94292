import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Timers } from "./poller.js";
import {
  createStream,
  hiddenGraceMs,
  pingEveryMs,
  type SocketLike,
  type StreamHandlers,
  silenceLimitMs,
  streamUrl,
} from "./stream.js";
import type { PushMessage, StreamState, Subscription } from "./stream-state.js";

/** A socket the test drives: it records what the page sent and fires the server's events. */
class FakeSocket implements SocketLike {
  sent: Record<string, unknown>[] = [];
  closed: number | undefined;
  /** Answer every ping with a pong, as a server that is there does. */
  answersPings = false;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string) {
    const message = JSON.parse(data) as Record<string, unknown>;
    this.sent.push(message);
    if (message.type === "ping" && this.answersPings) this.serverSays({ type: "pong" });
  }
  close(code = 1000) {
    this.closed = code;
  }
  serverOpens() {
    this.onopen?.({});
  }
  serverSays(message: unknown) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  serverCloses(code: number) {
    this.onerror?.({});
    this.onclose?.({ code });
  }
}

/** Timers on a clock the test moves by hand. */
function fakeClock() {
  let time = 0;
  let next = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  const timers: Timers = {
    setTimeout: (callback, ms) => {
      pending.set(++next, { at: time + ms, callback });
      return next;
    },
    clearTimeout: (handle) => pending.delete(handle as number),
  };
  const advance = (ms: number) => {
    const end = time + ms;
    for (;;) {
      const due = [...pending.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      pending.delete(due[0]);
      time = due[1].at;
      due[1].callback();
    }
    time = end;
  };
  return { timers, now: () => time, advance, pending };
}

function fakeDoc() {
  const listeners = new Set<() => void>();
  const doc = {
    visibilityState: "visible" as DocumentVisibilityState,
    addEventListener: (_: string, listener: () => void) => listeners.add(listener),
    removeEventListener: (_: string, listener: () => void) => listeners.delete(listener),
  };
  const set = (state: DocumentVisibilityState) => {
    doc.visibilityState = state;
    for (const l of listeners) l();
  };
  return { doc: doc as unknown as Document, set, listeners };
}

function setup(key = "tm_key") {
  const sockets: FakeSocket[] = [];
  const clock = fakeClock();
  const seen = {
    pushes: [] as PushMessage[],
    subscribed: [] as Subscription[],
    errors: [] as string[],
    states: [] as StreamState[],
  };
  const handlers: StreamHandlers = {
    onPush: (m) => seen.pushes.push(m),
    onSubscribed: (s) => seen.subscribed.push(s),
    onError: (status, message) => seen.errors.push(`${status} ${message}`),
    onState: (s) => seen.states.push(s),
  };
  const visibility = fakeDoc();
  const stream = createStream({
    url: "ws://127.0.0.1:8080/v1/stream",
    getKey: () => key,
    handlers,
    connect: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    timers: clock.timers,
    now: clock.now,
    random: () => 0.999_999,
    doc: visibility.doc,
  });
  const last = () => sockets[sockets.length - 1] as FakeSocket;
  return { stream, sockets, last, clock, seen, visibility };
}

const trades: Subscription = { channel: "trades", pair_id: "0xp:1", asset_id: "0xa:1" };
const candles: Subscription = { channel: "candles", pair_id: "0xp:1", asset_id: "0xa:1", interval: "1m" };

describe("createStream", () => {
  it("sends the key first, then a ping and the subscriptions, and is live at the first answer", () => {
    const t = setup();
    t.stream.subscribe(trades);
    assert.equal(t.sockets.length, 1);
    assert.equal(t.last().url, "ws://127.0.0.1:8080/v1/stream", "no key in the URL");
    assert.deepEqual(t.last().sent, [], "nothing before the socket opens");
    t.last().serverOpens();
    assert.deepEqual(t.last().sent, [
      { type: "auth", api_key: "tm_key" },
      { type: "ping" },
      { type: "subscribe", channel: "trades", pair_id: "0xp:1", asset_id: "0xa:1" },
    ]);
    assert.equal(t.stream.isLive(), false, "not live before the server answers");
    t.last().serverSays({ type: "pong" });
    assert.equal(t.stream.isLive(), true);
    t.last().serverSays({ type: "subscribed", channel: "trades", pair_id: "0xP:1", asset_id: "0xA:1" });
    assert.deepEqual(t.seen.subscribed, [trades], "the echo finds its subscription");

    // Subscriptions made while connected go out at once; an unsubscribe names the same fields.
    t.stream.subscribe(candles);
    t.stream.subscribe(candles);
    t.stream.unsubscribe(trades);
    assert.deepEqual(t.last().sent.slice(3), [
      { type: "subscribe", ...candles },
      { type: "unsubscribe", ...trades },
    ]);
  });

  it("hands pushes over and leaves out what it does not understand", () => {
    const t = setup();
    t.last().serverOpens();
    t.last().serverSays({ type: "trade", data: { hash: "0x1", log_index: 0 } });
    t.last().serverSays({ type: "mystery" });
    t.last().onmessage?.({ data: "{broken" });
    t.last().serverSays({ type: "rollback", chain: 1, block: 5 });
    assert.deepEqual(
      t.seen.pushes.map((p) => p.type),
      ["trade", "rollback"],
    );
    assert.equal(t.stream.isLive(), true);
  });

  it("reconnects with backoff after a close and subscribes again", () => {
    const t = setup();
    t.stream.subscribe(trades);
    t.last().serverOpens();
    t.last().serverSays({ type: "pong" });
    t.last().serverCloses(1006);
    assert.equal(t.stream.state.phase, "backoff");
    assert.equal(t.stream.isLive(), false);
    t.clock.advance(999);
    assert.equal(t.sockets.length, 1, "the first retry waits about a second");
    t.clock.advance(1);
    assert.equal(t.sockets.length, 2);
    t.last().serverCloses(1006); // the server is still away
    t.clock.advance(1999);
    assert.equal(t.sockets.length, 2, "then two seconds");
    t.clock.advance(1);
    assert.equal(t.sockets.length, 3);
    t.last().serverOpens();
    assert.deepEqual(t.last().sent[2], { type: "subscribe", ...trades }, "subscriptions are sent again");
    t.last().serverSays({ type: "pong" });
    assert.equal(t.stream.isLive(), true);
    assert.deepEqual(
      t.seen.states.map((s) => s.phase),
      ["connecting", "open", "live", "backoff", "connecting", "backoff", "connecting", "open", "live"],
    );
  });

  it("stops on a refused key and reports the server's message", () => {
    const t = setup("tm_wrong");
    t.last().serverOpens();
    t.last().serverSays({ type: "error", statusCode: 403, message: "invalid API key" });
    t.last().serverCloses(4403);
    assert.equal(t.stream.state.phase, "refused");
    assert.deepEqual(t.seen.errors, ["403 invalid API key"]);
    t.clock.advance(120_000);
    assert.equal(t.sockets.length, 1, "a refused key is not tried again");
  });

  it("reports a bad subscription without dropping the connection", () => {
    const t = setup();
    t.last().serverOpens();
    t.last().serverSays({ type: "pong" });
    t.last().serverSays({ type: "error", statusCode: 400, message: "pair_id must be …" });
    assert.deepEqual(t.seen.errors, ["400 pair_id must be …"]);
    assert.equal(t.stream.isLive(), true);
  });

  it("pings while connected and drops a connection that went silent", () => {
    const t = setup();
    t.last().serverOpens();
    t.last().serverSays({ type: "pong" });
    const socket = t.last();
    t.clock.advance(pingEveryMs);
    assert.deepEqual(socket.sent.at(-1), { type: "ping" });
    socket.serverSays({ type: "pong" });
    // No answer any more: within the silence limit and one more ping period the socket is dropped.
    t.clock.advance(silenceLimitMs + pingEveryMs);
    assert.equal(socket.closed, 1000, "the silent socket is closed");
    assert.notEqual(t.stream.state.phase, "live");
    const { attempt } = t.stream.state;
    assert.equal(attempt, 1);
    socket.serverCloses(1006); // its late close event changes nothing
    assert.equal(t.stream.state.attempt, attempt);
    t.clock.advance(1000);
    assert.equal(t.sockets.length, 2, "a new connection after the backoff");
  });

  it("lets the socket go after the tab stays hidden, and reconnects when it is shown", () => {
    const t = setup();
    t.last().answersPings = true;
    t.last().serverOpens();
    t.last().serverSays({ type: "pong" });
    t.visibility.set("hidden");
    t.clock.advance(hiddenGraceMs - 1);
    assert.equal(t.stream.isLive(), true, "a short switch of tabs keeps the connection");
    t.visibility.set("visible");
    t.visibility.set("hidden");
    t.clock.advance(hiddenGraceMs);
    assert.equal(t.stream.state.phase, "paused");
    assert.equal(t.sockets[0]?.closed, 1000);
    t.visibility.set("visible");
    assert.equal(t.sockets.length, 2);
    assert.equal(t.stream.state.phase, "connecting");
  });

  it("stops for good", () => {
    const t = setup();
    t.last().serverOpens();
    t.stream.stop();
    assert.equal(t.last().closed, 1000);
    assert.equal(t.visibility.listeners.size, 0);
    t.clock.advance(600_000);
    assert.equal(t.sockets.length, 1);
    assert.equal(t.clock.pending.size, 0, "no timer left behind");
  });

  it("builds ws:// or wss:// on the page's own host", () => {
    assert.equal(streamUrl({ protocol: "http:", host: "127.0.0.1:8080" }), "ws://127.0.0.1:8080/v1/stream");
    assert.equal(streamUrl({ protocol: "https:", host: "example.org" }), "wss://example.org/v1/stream");
  });
});
