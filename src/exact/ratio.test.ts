import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import { seededRandom } from "../_test/random.js";
import { ratioInverse, ratioMul, ratioOfNumber, ratioSum, ratioToNumber, ratioValue } from "./ratio.js";

/** A random positive bigint of 1 to `maxBits` bits, often with long runs of equal bits (near ties). */
function randomBigint(random: () => number, maxBits: number): bigint {
  const bits = 1 + Math.floor(random() * maxBits);
  let value = 0n;
  const runs = random() < 0.3;
  for (let i = 0; i < bits; i += 16) {
    const chunk = runs ? (random() < 0.5 ? 0 : 0xffff) : Math.floor(random() * 0x10000);
    value = (value << 16n) | BigInt(chunk);
  }
  value >>= BigInt((16 - (bits % 16)) % 16);
  return value === 0n ? 1n : value;
}

/** The double's exact neighbours decide: |x − n/d| is at most half an ulp, ties to an even significand. */
function assertNearest(num: bigint, den: bigint, x: number) {
  const exact = { num, den };
  const diff = (y: number) => {
    const r = ratioOfNumber(y);
    const n = exact.num * r.den - r.num * exact.den;
    const d = exact.den * r.den;
    return { n: n < 0n ? -n : n, d: d < 0n ? -d : d };
  };
  const mine = diff(x);
  for (const y of [nextDown(x), nextUp(x)]) {
    if (!Number.isFinite(y)) continue;
    const other = diff(y);
    const cmp = mine.n * other.d - other.n * mine.d;
    assert.ok(cmp <= 0n, `${num}/${den}: ${x} is further than ${y}`);
  }
}

function nextUp(x: number): number {
  if (x === 0) return 5e-324;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigInt64(0, view.getBigInt64(0) + (x > 0 ? 1n : -1n));
  return view.getFloat64(0);
}
const nextDown = (x: number) => -nextUp(-x);

describe("ratioToNumber", () => {
  it("is exact for small ratios", () => {
    assert.equal(ratioToNumber(1n, 4n), 0.25);
    assert.equal(ratioToNumber(-3n, 2n), -1.5);
    assert.equal(ratioToNumber(0n, 7n), 0);
  });

  it("keeps precision where Number(a) / Number(b) would not", () => {
    // Checked against Python's float(Fraction(a, b)), which rounds correctly.
    const a = 1843661792113971427282631473n;
    const b = 1000003n;
    assert.equal(ratioToNumber(a, b), 1.843656261145188e21, "correctly rounded");
    assert.notEqual(Number(a) / Number(b), 1.843656261145188e21, "rounding a before dividing is one ulp off");
  });

  it("handles extreme magnitudes", () => {
    assert.equal(ratioToNumber(1n << 1000n, 1n), 2 ** 1000);
    assert.equal(ratioToNumber(1n, 1n << 1000n), 2 ** -1000);
  });

  it("carries the sticky bit: just above a halfway point rounds up", () => {
    // (2^53 + 1) / 1 is a tie (rounds to even 2^53); a tiny bit more must round up. A quotient
    // truncated to 64 bits without the remainder's sticky bit sees the tie and rounds down.
    const big = 1n << 200n;
    const tie = (2n ** 53n + 1n) * big;
    assert.equal(ratioToNumber(tie, big), 2 ** 53, "an exact tie goes to even");
    assert.equal(ratioToNumber(tie + 1n, big), 2 ** 53 + 2, "just above the tie goes up");
    assert.equal(ratioToNumber(tie - 1n, big), 2 ** 53, "just below the tie goes down");
    assert.equal(
      ratioToNumber((2n ** 53n + 3n) * big, big),
      2 ** 53 + 4,
      "a tie with an odd last bit goes up",
    );
  });

  it("rounds subnormals, the smallest double and overflow correctly", () => {
    const two1074 = 1n << 1074n;
    assert.equal(ratioToNumber(1n, two1074), 5e-324);
    assert.equal(ratioToNumber(1n, two1074 * 2n), 0, "half the smallest subnormal is a tie: to even, 0");
    assert.equal(ratioToNumber(1n + (1n << 100n), two1074 << 101n), 5e-324, "just above that half: up");
    assert.equal(ratioToNumber(3n, two1074 * 2n), 1e-323, "1.5 × 2^-1074 ties to even 2 × 2^-1074");
    assert.equal(ratioToNumber(-1n, two1074), -5e-324);
    assert.ok(
      Object.is(ratioToNumber(-1n, two1074 * 4n), -0),
      "a negative value below half the smallest is −0",
    );
    assert.equal(
      ratioToNumber((1n << 53n) - 1n, 1n << 1074n),
      2 ** -1021 - 2 ** -1074,
      "53-bit subnormal range",
    );
    const max = (2n ** 53n - 1n) << 971n;
    assert.equal(ratioToNumber(max, 1n), Number.MAX_VALUE);
    assert.equal(ratioToNumber(max + (1n << 969n), 1n), Number.MAX_VALUE, "below the halfway to 2^1024");
    assert.equal(ratioToNumber(max + (1n << 970n), 1n), Infinity, "the tie with 2^1024 rounds up: overflow");
    assert.equal(ratioToNumber(-(1n << 5000n), 3n), -Infinity);
    assert.equal(ratioToNumber(1n, 1n << 5000n), 0);
  });

  it("equals the reference next to powers of two, where a value's double rounds up a binade", () => {
    // 2^k − 1 has k bits but its nearest double is 2^k above 53 bits (the bit count is read from
    // the double's exponent); both terms below 2^53 take the plain division. Both paths, checked.
    for (let k = 1; k <= 1100; k += k < 64 ? 1 : 7) {
      const p = 1n << BigInt(k);
      for (const num of [p - 1n, p, p + 1n]) {
        for (const den of [1n, 3n, (1n << 53n) - 1n, 1n << 53n, p - 1n, p + 1n, 10n ** 18n]) {
          assert.equal(ratioToNumber(num, den), referenceRatioToNumber(num, den), `${num} / ${den}`);
          assert.equal(ratioToNumber(den, num), referenceRatioToNumber(den, num), `${den} / ${num}`);
        }
      }
    }
  });

  it("equals the long-division reference on random bigints of many sizes", () => {
    const random = seededRandom(20240105);
    for (let i = 0; i < 4000; i++) {
      const sizes = [8, 64, 200, 600, 1200][i % 5] as number;
      let num = randomBigint(random, sizes);
      let den = randomBigint(random, [8, 64, 200, 600, 1200][Math.floor(random() * 5)] as number);
      if (random() < 0.2) num = -num;
      if (random() < 0.1) den = -den;
      const x = ratioToNumber(num, den);
      const ref = referenceRatioToNumber(num, den);
      assert.ok(Object.is(x, ref), `${num}/${den}: ${x} vs reference ${ref}`);
      if (Number.isFinite(x) && x !== 0) assertNearest(num, den, x);
    }
  });

  it("equals the reference on exact ties and their neighbours at every magnitude", () => {
    const random = seededRandom(7);
    for (let i = 0; i < 1500; i++) {
      // m is a 54-bit odd integer: m · 2^s is exactly halfway between two doubles.
      const m = (1n << 53n) | (BigInt(Math.floor(random() * 2 ** 52)) << 1n) | 1n;
      const s = Math.floor(random() * 2200) - 1180;
      const scale = 1n << BigInt(Math.abs(s));
      const [num, den] = s >= 0 ? [m * scale, 1n] : [m, scale];
      for (const [n, d] of [
        [num, den],
        [num * 1000n + 1n, den * 1000n],
        [num * 1000n - 1n, den * 1000n],
      ] as const) {
        const x = ratioToNumber(n, d);
        assert.ok(Object.is(x, referenceRatioToNumber(n, d)), `${n}/${d} (2^${s}): ${x}`);
      }
    }
  });

  it("equals the reference on the ratios of real post-swap prices", () => {
    const random = seededRandom(3);
    for (let i = 0; i < 2000; i++) {
      const sqrt = randomBigint(random, 160);
      const n = sqrt * sqrt * 10n ** 6n;
      const d = (1n << 192n) * 10n ** 18n;
      assert.ok(Object.is(ratioToNumber(n, d), referenceRatioToNumber(n, d)));
      assert.ok(Object.is(ratioToNumber(d, n), referenceRatioToNumber(d, n)), "the reciprocal too");
    }
  });
});

describe("exact ratios", () => {
  it("multiply, invert, sum and convert doubles exactly", () => {
    const tenth = ratioOfNumber(0.1);
    assert.equal(tenth.num * (1n << 55n), 3602879701896397n * tenth.den, "0.1 is 3602879701896397 / 2^55");
    const six = ratioOfNumber(-6);
    assert.equal(six.num, -6n * six.den);
    assert.equal(ratioValue(ratioOfNumber(5e-324)), 5e-324);
    assert.equal(ratioValue(ratioOfNumber(Number.MAX_VALUE)), Number.MAX_VALUE);
    const third = { num: 1n, den: 3n };
    assert.equal(ratioValue(ratioMul(third, { num: 3n, den: 1n })), 1);
    assert.equal(ratioValue(ratioInverse(third)), 3);
    assert.equal(ratioValue(ratioSum([third, third, third])), 1, "no rounding between the terms");
  });
});
