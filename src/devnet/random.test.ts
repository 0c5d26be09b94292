import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRandom } from "./random.js";

describe("createRandom", () => {
  it("gives the same sequence for the same seed, another for another seed", () => {
    const a = createRandom(42);
    const b = createRandom(42);
    const c = createRandom(43);
    const seqA = Array.from({ length: 50 }, () => a.next());
    assert.deepEqual(
      Array.from({ length: 50 }, () => b.next()),
      seqA,
      "same seed, same draws",
    );
    assert.notDeepEqual(
      Array.from({ length: 50 }, () => c.next()),
      seqA,
      "another seed, other draws",
    );
  });

  it("forks streams that depend on the label only, not on draws made before", () => {
    const a = createRandom(7);
    const b = createRandom(7);
    b.next();
    b.normal();
    assert.equal(
      a.fork("market").next(),
      b.fork("market").next(),
      "a fork does not depend on the parent's position",
    );
    assert.notEqual(a.fork("market").next(), a.fork("schedule").next(), "labels separate the streams");
  });

  it("draws within their ranges with the expected means", () => {
    const random = createRandom(1);
    const n = 20_000;
    let sum = 0;
    let sumSquares = 0;
    let poissonSum = 0;
    let exponentialSum = 0;
    for (let i = 0; i < n; i++) {
      const u = random.next();
      assert.ok(u >= 0 && u < 1, "uniform in [0, 1)");
      const z = random.normal();
      sum += z;
      sumSquares += z * z;
      poissonSum += random.poisson(2.5);
      exponentialSum += random.exponential(300);
      const k = random.int(6);
      assert.ok(Number.isInteger(k) && k >= 0 && k < 6, "int in [0, n)");
    }
    assert.ok(Math.abs(sum / n) < 0.03, "normal mean ≈ 0");
    assert.ok(Math.abs(sumSquares / n - 1) < 0.05, "normal variance ≈ 1");
    assert.ok(Math.abs(poissonSum / n - 2.5) < 0.05, "poisson mean ≈ 2.5");
    assert.ok(Math.abs(exponentialSum / n / 300 - 1) < 0.03, "exponential mean ≈ 300");
  });

  it("picks by weight", () => {
    const random = createRandom(3);
    const counts = [0, 0, 0];
    for (let i = 0; i < 10_000; i++) {
      const k = random.weighted([1, 0, 3]);
      counts[k] = (counts[k] ?? 0) + 1;
    }
    assert.equal(counts[1], 0, "a zero weight is never picked");
    assert.ok(
      (counts[2] ?? 0) > 2.5 * (counts[0] ?? 0),
      "weight 3 is picked about three times as often as weight 1",
    );
  });
});
