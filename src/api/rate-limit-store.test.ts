import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSharedRateLimitStore } from "./rate-limit-store.js";

describe("createSharedRateLimitStore", () => {
  it("counts per key within a window, shared by every instance", () => {
    let clock = 0;
    const Store = createSharedRateLimitStore({ now: () => clock });
    const a = new Store({});
    const b = new Store({});
    const seen: { current: number; ttl: number }[] = [];
    const record = (_e: Error | null, r: { current: number; ttl: number }) => seen.push(r);
    a.incr("k", record, 1000);
    b.incr("k", record, 1000);
    clock = 400;
    a.incr("other", record, 1000);
    a.incr("k", record, 1000);
    assert.deepEqual(seen, [
      { current: 1, ttl: 1000 },
      { current: 2, ttl: 1000 },
      { current: 1, ttl: 1000 },
      { current: 3, ttl: 600 },
    ]);
    clock = 1000;
    a.incr("k", record, 1000);
    assert.deepEqual(seen.at(-1), { current: 1, ttl: 1000 }, "a new window starts");
  });

  it("stays within maxKeys", () => {
    const Store = createSharedRateLimitStore({ maxKeys: 10 });
    const store = new Store({});
    for (let i = 0; i < 100; i++) store.incr(`k${i}`, () => {}, 60_000);
    let current = -1;
    store.read(
      "k0",
      (_e, r) => {
        current = r.current;
      },
      60_000,
    );
    assert.equal(current, 0, "the oldest keys were dropped");
  });
});
