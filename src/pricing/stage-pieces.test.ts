/**
 * The pricing stage's pure pieces, each alone: the figures' policy and turns, the step timer,
 * the minute slide's schedule and the token_prices rows that differ from the stored ones.
 */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defersFigures, newTurn, nextInTurn, sharesFigures } from "./figure-policy.js";
import { freshPrices, newPriceRows } from "./price-rows.js";
import { createSlideSchedule } from "./slide-schedule.js";
import { createStepTimer } from "./step-timer.js";
import type { TokenPrice } from "./usd-prices.js";

describe("figure policy", () => {
  const policy = { minBlocks: 64, maxAgeMs: 60_000 };
  it("defers a batch far below the head, soon after the last refresh", () => {
    const batch = { fromBlock: 101, toBlock: 110, headBlock: 175 };
    assert.equal(defersFigures(policy, batch, 0), true, "65 blocks below: more than 64 and 2 × 10");
    assert.equal(defersFigures(policy, { ...batch, headBlock: 174 }, 0), false, "64 blocks below: not more");
    assert.equal(defersFigures(policy, batch, 60_000), false, "the figures are 60 s old");
    assert.equal(defersFigures(policy, { ...batch, headBlock: undefined }, 0), false, "no head known");
    assert.equal(defersFigures(false, batch, 0), false, "never");
    const long = { fromBlock: 1, toBlock: 40, headBlock: 120 };
    assert.equal(defersFigures(policy, long, 0), false, "80 below, not more than twice its 40 blocks");
    assert.equal(defersFigures(policy, { ...long, headBlock: 121 }, 0), true);
  });

  it("shares the figures of a chain above `fromPools` with more tokens or pools than a share", () => {
    const perBatch = { tokens: 10, pools: 20, fromPools: 100 };
    assert.equal(sharesFigures(perBatch, 100, 50), false, "not above fromPools");
    assert.equal(sharesFigures(perBatch, 101, 5), true, "more pools than a share");
    assert.equal(sharesFigures({ ...perBatch, pools: 0 }, 101, 11), true, "more tokens than a share");
    assert.equal(sharesFigures({ ...perBatch, pools: 0 }, 101, 10), false);
    assert.equal(sharesFigures({ tokens: 0, pools: 0, fromPools: 0 }, 1e6, 1e6), false, "a share of 0");
  });

  it("goes through a turn a share at a time and starts over with the items of then", () => {
    const turn = newTurn();
    let items = ["a", "b", "c", "d", "e"];
    assert.deepEqual([...nextInTurn(turn, 2, () => items)], ["a", "b"]);
    items = ["x"];
    assert.deepEqual([...nextInTurn(turn, 2, () => items)], ["c", "d"], "the turn's own items");
    assert.deepEqual([...nextInTurn(turn, 2, () => items)], ["e"]);
    assert.deepEqual([...nextInTurn(turn, 2, () => items)], ["x"], "over: the items of now");
    items = ["p", "q", "r"];
    assert.deepEqual([...nextInTurn(turn, 0, () => items)], ["p", "q", "r"], "size 0: all of them");
  });
});

describe("step timer", () => {
  it("adds each step's durations, failures included, until reset", async () => {
    let t = 0;
    const timer = createStepTimer(() => t);
    await timer.step("price", () => {
      t += 1.234;
      return 1;
    });
    await timer.step("price", async () => {
      t += 2;
    });
    await assert.rejects(
      timer.step("load", () => {
        t += 0.5;
        throw new Error("failed");
      }),
      /failed/,
    );
    assert.deepEqual(timer.rounded(), { price: 3.23, load: 0.5 });
    timer.reset();
    assert.deepEqual(timer.rounded(), {});
  });
});

describe("slide schedule", () => {
  const deferred = <T>() => {
    let resolve: (value: T) => void = () => {};
    let reject: (error: Error) => void = () => {};
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };

  it("runs one slide of a chain at a time and passes the instant the last finished one slid to", async () => {
    const clock = new Date(1_000_000);
    const schedule = createSlideSchedule<string>(() => clock);
    const db = {};
    const calls: { time: number; since: number | undefined }[] = [];
    const first = deferred<string>();
    const a = schedule.run(db, 1, undefined, (time, since) => {
      calls.push({ time: time.getTime(), since });
      return first.promise;
    });
    // The runtime's next minute finds it running: it is left to finish, its result returned.
    const b = schedule.run(db, 1, undefined, async () => "never");
    // Another chain, or another database, slides meanwhile.
    assert.equal(await schedule.run(db, 2, undefined, async () => "chain 2"), "chain 2");
    assert.equal(await schedule.run({}, 1, undefined, async () => "other db"), "other db");
    // A slide at a given time waits for the running one.
    const c = schedule.run(db, 1, new Date(2_000_000), async (time, since) => {
      calls.push({ time: time.getTime(), since });
      return "c";
    });
    first.resolve("a");
    assert.deepEqual(await Promise.all([a, b, c]), ["a", "a", "c"]);
    assert.deepEqual(calls, [
      { time: 1_000_000, since: undefined },
      { time: 2_000_000, since: 1_000_000 },
    ]);
  });

  it("leaves `since` where it was when a slide fails", async () => {
    const schedule = createSlideSchedule<string>(() => new Date(5_000));
    const db = {};
    await schedule.run(db, 1, new Date(1_000), async () => "ok");
    await assert.rejects(
      schedule.run(db, 1, new Date(3_000), async () => {
        throw new Error("chunk failed");
      }),
      /chunk failed/,
    );
    let since: number | undefined;
    await schedule.run(db, 1, undefined, async (_time, s) => {
      since = s;
      return "next";
    });
    assert.equal(since, 1_000, "the failed slide moved nothing");
  });
});

describe("token price rows", () => {
  const price = (token: string, usdPrice: number | null, asOfBlock: number | null = 7): TokenPrice => ({
    token,
    usdPrice,
    method: usdPrice === null ? "none" : "pools",
    layer: usdPrice === null ? null : 1,
    confidence: usdPrice === null ? 0 : 0.5,
    route: [token],
    median: usdPrice,
    pools: [],
    dropped: [],
    belowFloor: 0,
    asOfBlock,
    asOfTime: asOfBlock === null ? null : asOfBlock * 1000,
  });
  const options = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };

  it("sends only rows that differ from the stored ones, and notes which USD prices moved", () => {
    const stored = new Map<string, TokenPrice>();
    const first = new Map([
      ["0xb", price("0xb", 2)],
      ["0xa", price("0xa", 1)],
      ["0xc", price("0xc", 3, null)],
    ]);
    const fresh = freshPrices(stored, first);
    assert.deepEqual(
      fresh.map((p) => p.token),
      ["0xa", "0xb"],
      "sorted by token; no row without an event",
    );
    const { rows, usdMoved } = newPriceRows(stored, fresh, options);
    assert.deepEqual(
      rows.map((r) => [r.token, r.usdPrice, typeof r.provenanceJson]),
      [
        ["0xa", 1, "string"],
        ["0xb", 2, "string"],
      ],
    );
    assert.deepEqual([...usdMoved].sort(), ["0xa", "0xb"], "unknown before: moved");

    const sameA = price("0xa", 1);
    const next = new Map([
      ["0xa", sameA],
      ["0xb", price("0xb", 2, 8)],
    ]);
    const again = freshPrices(stored, next);
    assert.deepEqual(
      again.map((p) => p.token),
      ["0xb"],
      "the same row from a new object is not sent",
    );
    assert.equal(stored.get("0xa"), sameA, "and becomes the stored one");
    assert.deepEqual([...newPriceRows(stored, again, options).usdMoved], [], "only the block moved");
    assert.deepEqual(freshPrices(stored, next), [], "nothing differs any more");
  });
});
