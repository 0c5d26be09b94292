import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffDelayMs } from "./backoff.js";

describe("backoffDelayMs", () => {
  it("doubles from the first delay up to the cap, jittered between half and all of it", () => {
    const bounds: [number, number] = [250, 4000];
    const ceilings = [250, 500, 1000, 2000, 4000, 4000, 4000];
    ceilings.forEach((ceiling, i) => {
      assert.equal(
        backoffDelayMs(i + 1, bounds, () => 0),
        ceiling / 2,
      );
      assert.equal(
        backoffDelayMs(i + 1, bounds, () => 0.999_999),
        ceiling,
      );
    });
    for (let attempt = 1; attempt < 60; attempt++) {
      const d = backoffDelayMs(attempt, bounds);
      assert.ok(d >= 125 && d <= 4000, `attempt ${attempt}: ${d} ms`);
    }
  });
});
