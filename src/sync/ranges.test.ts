import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRangeSizer } from "./ranges.js";

describe("adaptive block ranges", () => {
  it("grows while ranges work, up to the maximum", () => {
    const sizer = createRangeSizer({ initial: 10, max: 50, targetLogs: 1000 });
    const sizes = [];
    for (let i = 0; i < 4; i++) {
      sizes.push(sizer.size());
      sizer.succeeded(sizer.size(), 5, false);
    }
    assert.deepEqual(sizes, [10, 20, 40, 50], "doubles, capped by maxBlockRange");
  });

  it("halves on a refused range and grows back afterwards", () => {
    const sizer = createRangeSizer({ initial: 64, max: 64, targetLogs: 1000 });
    assert.equal(sizer.tooLarge(64), true);
    assert.equal(sizer.size(), 32, "halved");
    sizer.tooLarge(32);
    assert.equal(sizer.size(), 16, "halved again");
    sizer.succeeded(16, 10, false);
    assert.equal(sizer.size(), 32, "grows again once it works");
  });

  it("cannot shrink below one block", () => {
    const sizer = createRangeSizer({ initial: 1, max: 10, targetLogs: 1000 });
    assert.equal(sizer.tooLarge(1), false, "a one-block range that is refused is the caller's problem");
    assert.equal(sizer.size(), 1);
  });

  it("does not grow on a range cut short by the head, and shrinks on too many logs", () => {
    const sizer = createRangeSizer({ initial: 100, max: 1000, targetLogs: 1000 });
    sizer.succeeded(3, 1, true);
    assert.equal(sizer.size(), 100, "a clipped range says nothing about larger ones");
    sizer.succeeded(100, 4000, false);
    assert.equal(sizer.size(), 25, "four times the target: a quarter of the range");
  });
});
