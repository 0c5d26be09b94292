import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toIso } from "./times.js";

/** What toIso answered before its fast path: the reference it must keep. */
const reference = (date: Date) => date.toISOString().replace(".000Z", "Z");

describe("toIso", () => {
  it("writes whole seconds without milliseconds and keeps them otherwise", () => {
    assert.equal(toIso(new Date("2026-11-21T10:00:00Z")), "2026-11-21T10:00:00Z");
    assert.equal(toIso(new Date("2026-11-21T10:00:00.250Z")), "2026-11-21T10:00:00.250Z");
  });

  it("answers as toISOString does for every kind of time, in any order of calls", () => {
    const times = [
      0,
      -1000,
      -1,
      999,
      86_399_000,
      86_400_000,
      951_782_400_000, // 2000-02-29
      1_795_255_200_000,
      1_795_255_259_000,
      253_402_300_799_000, // 9999-12-31T23:59:59Z
      253_402_300_800_000, // +010000-01-01
      8_640_000_000_000_000,
    ];
    // Deterministic spread: whole seconds, whole minutes and odd milliseconds over 1970–2100,
    // consecutive (the same day again) and jumping (another day).
    let state = 12345;
    const next = () => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state;
    };
    for (let i = 0; i < 5000; i++) {
      const t = (next() % 4_102_444_800) * 1000;
      times.push(t, t + 60_000, t + (next() % 1000), t + 86_400_000 - 1000);
    }
    for (const t of times) assert.equal(toIso(new Date(t)), reference(new Date(t)), `time ${t}`);
  });

  it("throws on an invalid date, as toISOString does", () => {
    assert.throws(() => toIso(new Date(Number.NaN)), RangeError);
  });
});
