import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRateGate } from "./rate-gate.js";

describe("rate gate", () => {
  it("lets `concurrency` waves in at once; the next waits for one to leave, in arrival order", async () => {
    const gate = createRateGate({ concurrency: 2 });
    const first = await gate.enter();
    const second = await gate.enter();
    const order: string[] = [];
    const third = gate.enter().then((leave) => {
      order.push("third");
      return leave;
    });
    const fourth = gate.enter().then((leave) => {
      order.push("fourth");
      return leave;
    });
    await Promise.resolve();
    assert.deepEqual(order, [], "both wait while two waves are in flight");
    first();
    first(); // leaving twice gives back one place only
    (await third)();
    second();
    (await fourth)();
    assert.deepEqual(order, ["third", "fourth"]);
  });

  it("a throttled answer pauses every wave until its Retry-After has passed and halves the share", async () => {
    const gate = createRateGate({ concurrency: 4 });
    assert.deepEqual(gate.state(), { share: 1, waves: 4, pausedForMs: 0 });
    gate.throttled(60);
    const until = Date.now() + 60;
    const state = gate.state();
    assert.equal(state.share, 0.5);
    assert.equal(state.waves, 2);
    assert.ok(state.pausedForMs > 0 && state.pausedForMs <= 60);
    const leave = await gate.enter();
    assert.ok(Date.now() >= until - 1, "entered only once the pause was over");
    leave();
  });

  it("shrinks waves to one and batches to half a batch at most, and grows back by 1/16 per answered wave", () => {
    const gate = createRateGate({ concurrency: 4 });
    assert.equal(gate.calls(400, 100), 400, "the full wave while nothing was throttled");
    for (let i = 0; i < 10; i++) gate.throttled(0);
    assert.equal(gate.state().share, 1 / 64, "the share's floor");
    assert.equal(gate.state().waves, 1);
    assert.equal(gate.calls(400, 100), 50, "half a batch");
    assert.equal(gate.calls(20, 5), 3, "half a block batch, rounded up");
    gate.succeeded();
    assert.equal(gate.state().share, 1 / 64 + 1 / 16);
    for (let i = 0; i < 16; i++) gate.succeeded();
    assert.equal(gate.state().share, 1, "back to the full share, not beyond");
    assert.equal(gate.calls(400, 100), 400);
  });

  it("a waiting wave leaves the queue when its signal aborts", async () => {
    const gate = createRateGate({ concurrency: 1 });
    const held = await gate.enter();
    const abort = new AbortController();
    const waiting = gate.enter(abort.signal);
    abort.abort(new Error("stopped"));
    await assert.rejects(waiting, /stopped/);
    held();
    (await gate.enter())();
  });
});
