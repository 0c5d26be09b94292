import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  backoffMs,
  initialStreamState,
  liveIndicator,
  maxBackoffMs,
  parseServerMessage,
  refusedCloseCode,
  type StreamEvent,
  type StreamState,
  streamStep,
  subscriptionKey,
} from "./stream-state.js";

/** Runs events from the initial state; returns every state and the effects in order. */
function walk(events: StreamEvent[], random = 0.5, from: StreamState = initialStreamState) {
  let state = from;
  const effects: string[] = [];
  const phases: string[] = [];
  for (const event of events) {
    const step = streamStep(state, event, random);
    state = step.state;
    phases.push(state.phase);
    for (const e of step.effects) effects.push(e.type === "schedule" ? `schedule:${e.ms}` : e.type);
  }
  return { state, effects, phases };
}

describe("streamStep", () => {
  it("connects, sends the key and subscriptions once open, and is live at the first answer", () => {
    const run = walk([{ type: "start" }, { type: "opened" }, { type: "confirmed" }]);
    assert.deepEqual(run.phases, ["connecting", "open", "live"]);
    assert.deepEqual(run.effects, ["connect", "hello"]);
    assert.equal(run.state.attempt, 0);
  });

  it("backs off after a close, doubling up to the cap, and connects again when the timer fires", () => {
    const events: StreamEvent[] = [{ type: "start" }];
    for (let i = 0; i < 8; i++) events.push({ type: "closed", code: 1006 }, { type: "retry" });
    const run = walk(events, 0.999_999);
    const waits = run.effects.filter((e) => e.startsWith("schedule:")).map((e) => Number(e.slice(9)));
    assert.deepEqual(waits, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    assert.equal(run.state.phase, "connecting");
    assert.equal(run.state.attempt, 8);
  });

  it("starts counting again once live, so a long-lived connection that drops retries after a second", () => {
    const run = walk(
      [
        { type: "start" },
        { type: "closed", code: 1006 },
        { type: "retry" },
        { type: "closed", code: 1006 },
        { type: "retry" },
        { type: "opened" },
        { type: "confirmed" },
        { type: "closed", code: 1001 },
      ],
      0.999_999,
    );
    assert.equal(run.state.phase, "backoff");
    assert.equal(run.state.attempt, 1);
    assert.equal(run.state.retryInMs, 1000);
  });

  it("stops retrying when the key is refused, by message or by close code, until started again", () => {
    const byMessage = walk([
      { type: "start" },
      { type: "opened" },
      { type: "refused" },
      { type: "closed", code: 1006 },
    ]);
    assert.equal(byMessage.state.phase, "refused");
    assert.deepEqual(byMessage.effects, ["connect", "hello", "disconnect"], "no retry scheduled");
    const byCode = walk([{ type: "start" }, { type: "opened" }, { type: "closed", code: refusedCloseCode }]);
    assert.equal(byCode.state.phase, "refused");
    assert.ok(!byCode.effects.some((e) => e.startsWith("schedule")));
    const again = walk([{ type: "start" }], 0.5, byCode.state);
    assert.equal(again.state.phase, "connecting");
  });

  it("a slow-consumer close (4008) is retried like any other", () => {
    const run = walk([
      { type: "start" },
      { type: "opened" },
      { type: "confirmed" },
      { type: "closed", code: 4008 },
    ]);
    assert.equal(run.state.phase, "backoff");
  });

  it("pauses (cancelling a pending retry) and resumes with a fresh count", () => {
    const run = walk([
      { type: "start" },
      { type: "closed", code: 1006 },
      { type: "closed", code: 1006 }, // a stray close while waiting changes nothing
      { type: "pause" },
      { type: "retry" }, // a timer that fired anyway
      { type: "resume" },
    ]);
    assert.deepEqual(run.phases, ["connecting", "backoff", "backoff", "paused", "paused", "connecting"]);
    assert.deepEqual(run.effects.slice(2), ["cancel", "disconnect", "connect"]);
    assert.equal(run.state.attempt, 0);
  });

  it("ignores events that do not fit the phase, and does nothing once stopped", () => {
    assert.equal(walk([{ type: "opened" }, { type: "confirmed" }, { type: "retry" }]).state.phase, "idle");
    const live = walk([{ type: "start" }, { type: "opened" }, { type: "confirmed" }]).state;
    assert.equal(walk([{ type: "start" }, { type: "opened" }, { type: "resume" }], 0.5, live).state, live);
    const stopped = walk([{ type: "stop" }], 0.5, live);
    assert.deepEqual(stopped.effects, ["cancel", "disconnect"]);
    const after = walk(
      [{ type: "closed", code: 1006 }, { type: "start" }, { type: "resume" }],
      0.5,
      stopped.state,
    );
    assert.equal(after.state.phase, "stopped");
    assert.deepEqual(after.effects, []);
  });
});

describe("backoffMs", () => {
  it("stays between half and all of the doubling wait", () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const full = Math.min(maxBackoffMs, 1000 * 2 ** (attempt - 1));
      assert.equal(backoffMs(attempt, 0), full / 2);
      assert.equal(backoffMs(attempt, 1), full);
      const mid = backoffMs(attempt, 0.5);
      assert.ok(mid > full / 2 && mid < full);
    }
  });
});

describe("parseServerMessage", () => {
  it("reads the documented messages", () => {
    assert.deepEqual(parseServerMessage('{"type":"pong"}'), { type: "pong" });
    assert.deepEqual(parseServerMessage('{"type":"error","statusCode":400,"message":"bad pair_id"}'), {
      type: "error",
      statusCode: 400,
      message: "bad pair_id",
    });
    const trade = parseServerMessage('{"type":"trade","data":{"hash":"0x1","log_index":2}}');
    assert.equal(trade?.type, "trade");
    const candle = parseServerMessage(
      '{"type":"candle","data":{"time":1},"pair_id":"0xp:1","asset_id":"0xa:1","interval":"1m"}',
    );
    assert.equal(candle?.type, "candle");
    assert.deepEqual(parseServerMessage('{"type":"rollback","chain":1,"block":9}'), {
      type: "rollback",
      chain: 1,
      block: 9,
    });
    assert.equal(parseServerMessage('{"type":"subscribed","channel":"trades"}')?.type, "subscribed");
  });

  it("ignores what it does not understand", () => {
    for (const text of [
      "not json",
      "[]",
      "null",
      '{"type":"hello"}',
      '{"type":"trade"}',
      '{"type":"candle","data":{}}',
      '{"type":"rollback","chain":"1","block":2}',
      '{"type":"error","message":"no status"}',
      '{"kind":"trade"}',
    ]) {
      assert.equal(parseServerMessage(text), undefined, text);
    }
  });
});

describe("subscriptionKey", () => {
  it("matches the server's echo whatever the letter case and the default currency", () => {
    const mine = subscriptionKey({
      channel: "candles",
      pair_id: "0xab:1",
      asset_id: "0xcd:1",
      interval: "1m",
    });
    const echo = subscriptionKey({
      type: "subscribed",
      channel: "candles",
      pair_id: "0xAB:1",
      asset_id: "0xCD:1",
      interval: "1m",
      currency: "token",
    });
    assert.equal(mine, echo);
    assert.notEqual(
      mine,
      subscriptionKey({ channel: "candles", pair_id: "0xab:1", asset_id: "0xcd:1", interval: "5m" }),
    );
    assert.notEqual(
      subscriptionKey({ channel: "trades", pair_id: "0xab:1", asset_id: "0xcd:1" }),
      subscriptionKey({ channel: "trades", pair_id: "0xab:1", asset_id: "0xef:1" }),
    );
  });
});

describe("liveIndicator", () => {
  it("says live only while pushes arrive, and polling with the reason otherwise", () => {
    const live = liveIndicator({ phase: "live", attempt: 0 }, 3000);
    assert.equal(live.mode, "live");
    assert.equal(live.text, "Live");
    assert.equal(liveIndicator({ phase: "connecting", attempt: 0 }, 3000).mode, "connecting");
    const down = liveIndicator({ phase: "backoff", attempt: 2, retryInMs: 3500 }, 3000);
    assert.equal(down.mode, "polling");
    assert.match(down.title, /polling every 3 s, next attempt in 4 s/);
    assert.equal(liveIndicator({ phase: "connecting", attempt: 2 }, 3000).mode, "polling");
    assert.match(liveIndicator({ phase: "refused", attempt: 0 }, 3000).title, /refused the API key/);
    assert.equal(liveIndicator({ phase: "paused", attempt: 0 }, 3000).mode, "paused");
  });
});
