import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { createPoller, type Timers } from "./poller.js";

/** A document whose visibility the test sets, and timers the test fires by hand. */
function fakes() {
  const listeners = new Set<() => void>();
  const doc = {
    visibilityState: "visible" as DocumentVisibilityState,
    addEventListener: (_: string, listener: () => void) => listeners.add(listener),
    removeEventListener: (_: string, listener: () => void) => listeners.delete(listener),
  };
  const pending = new Map<number, () => void>();
  const waits: number[] = [];
  let next = 0;
  const timers: Timers = {
    setTimeout: (callback, ms) => {
      waits.push(ms);
      pending.set(++next, callback);
      return next;
    },
    clearTimeout: (handle) => pending.delete(handle as number),
  };
  const fire = async () => {
    const callbacks = [...pending.values()];
    pending.clear();
    for (const callback of callbacks) callback();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const setVisible = async (visible: boolean) => {
    doc.visibilityState = visible ? "visible" : "hidden";
    for (const listener of listeners) listener();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { doc: doc as unknown as Document, timers, fire, setVisible, pending, listeners, waits };
}

describe("createPoller", () => {
  it("polls on its timer while the tab is visible", async () => {
    const f = fakes();
    let runs = 0;
    createPoller({ intervalMs: 1000, task: async () => void runs++, doc: f.doc, timers: f.timers });
    assert.equal(runs, 0, "the first run waits for the timer");
    await f.fire();
    await f.fire();
    assert.equal(runs, 2);
  });
  it("reads a changing interval before each wait (slow while the stream is live)", async () => {
    const f = fakes();
    let live = false;
    createPoller({
      intervalMs: () => (live ? 15_000 : 3000),
      task: async () => {},
      doc: f.doc,
      timers: f.timers,
    });
    await f.fire();
    live = true;
    await f.fire();
    live = false;
    await f.fire();
    assert.deepEqual(f.waits, [3000, 3000, 15_000, 3000]);
  });
  it("stops while hidden and runs at once when visible again", async () => {
    const f = fakes();
    let runs = 0;
    createPoller({ intervalMs: 1000, task: async () => void runs++, doc: f.doc, timers: f.timers });
    await f.setVisible(false);
    assert.equal(f.pending.size, 0, "no timer runs while hidden");
    await f.fire();
    assert.equal(runs, 0);
    await f.setVisible(true);
    assert.equal(runs, 1, "back to visible: one poll right away");
    assert.equal(f.pending.size, 1, "and the next one scheduled");
  });
  it("never overlaps a slow poll, and survives a failing one", async () => {
    const f = fakes();
    let running = 0;
    let most = 0;
    let release: () => void = () => {};
    const poller = createPoller({
      intervalMs: 1000,
      task: () => {
        running++;
        most = Math.max(most, running);
        return new Promise<void>((resolve, reject) => {
          release = () => {
            running--;
            most === 1 ? reject(new Error("network down")) : resolve();
          };
        });
      },
      doc: f.doc,
      timers: f.timers,
    });
    poller.poke();
    poller.poke();
    assert.equal(running, 1);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(most, 1, "the second poke waited for the first poll");
    release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(f.pending.size, 1, "after a failed poll the next one is scheduled");
  });
  it("stops for good", async () => {
    const f = fakes();
    let runs = 0;
    const poller = createPoller({
      intervalMs: 1000,
      task: async () => void runs++,
      doc: f.doc,
      timers: f.timers,
    });
    poller.stop();
    await f.fire();
    await f.setVisible(true);
    assert.equal(runs, 0);
    assert.equal(f.listeners.size, 0);
  });
});
