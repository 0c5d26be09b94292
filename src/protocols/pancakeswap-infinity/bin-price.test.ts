import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ratioValue } from "../../exact/ratio.js";
import { binPriceRatio, binPriceValue } from "./index.js";

describe("a Bin swap's price", () => {
  it("is the correctly rounded double of the exact bin price, bit for bit, far from the center bin too", () => {
    const center = 2 ** 23;
    const cases: [number, number, number, number][] = [];
    // Bin steps 1 to 100, distances from the center up to ±40,000 bins (a token of 0 decimals
    // against one of 18 is ±41,000 bins at step 10), both decimal orders; and past a double's range.
    for (const step of [1, 10, 25, 100])
      for (const distance of [-40_000, -9_999, -1_234, -65, -64, -1, 0, 1, 64, 65, 777, 12_345, 40_000])
        for (const [d0, d1] of [
          [18, 18],
          [6, 18],
          [18, 0],
        ] as const)
          cases.push([center + distance, step, d0, d1]);
    cases.push([center + 300_000, 100, 18, 0], [center - 300_000, 100, 0, 18]);
    for (const [id, step, d0, d1] of cases) {
      const exact = ratioValue(binPriceRatio(id, step, d0, d1));
      assert.ok(
        Object.is(binPriceValue(id, step, d0, d1), exact),
        `bin ${id - center} step ${step} ${d0}/${d1}`,
      );
    }
  });
});
