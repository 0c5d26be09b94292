import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countedAsync, manualClock } from "../_test/api-fakes.js";
import { HttpError, notFound } from "../internal/errors.js";
import { createResponseCache } from "./response-cache.js";

function setup(options: { maxEntries?: number; maxBytes?: number; ttlMs?: number } = {}) {
  const blocks = new Map<number, number>([[1, 100]]);
  const clock = manualClock();
  const computation = countedAsync((value: string) => ({ body: value }));
  const cache = createResponseCache({
    blockOf: (chain) => blocks.get(chain) ?? -1,
    ttlMs: 10_000,
    now: clock.now,
    ...options,
  });
  const compute = (value: string) => () => computation.call(value);
  return { cache, compute, blocks, computations: computation.calls, advance: clock.advance };
}

describe("createResponseCache", () => {
  it("computes once for concurrent requests and answers later ones from memory", async () => {
    const t = setup();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.cache.get("k", [1], t.compute("a"))),
    );
    assert.deepEqual(new Set(answers.map((a) => a.body)), new Set(["a"]));
    assert.equal(t.computations(), 1);
    assert.equal((await t.cache.get("k", [1], t.compute("b"))).body, "a");
    assert.equal(t.computations(), 1);
  });

  it("drops an answer when a chain it involves ingests a new block", async () => {
    const t = setup();
    await t.cache.get("k", [1], t.compute("a"));
    t.blocks.set(2, 5);
    assert.equal(
      (await t.cache.get("k", [1], t.compute("b"))).body,
      "a",
      "another chain's block does not matter",
    );
    t.blocks.set(1, 101);
    assert.equal((await t.cache.get("k", [1], t.compute("b"))).body, "b");
  });

  it("drops an answer after its time to live", async () => {
    const t = setup();
    await t.cache.get("k", [1], t.compute("a"));
    t.advance(10_001);
    assert.equal((await t.cache.get("k", [1], t.compute("b"))).body, "b");
  });

  it("remembers 4xx errors but not other failures", async () => {
    const t = setup();
    let calls = 0;
    const missing = async () => {
      calls += 1;
      throw notFound("nothing");
    };
    await assert.rejects(t.cache.get("nf", [1], missing), HttpError);
    await assert.rejects(t.cache.get("nf", [1], missing), HttpError);
    assert.equal(calls, 1);
    const broken = async () => {
      calls += 1;
      throw new Error("db down");
    };
    await assert.rejects(t.cache.get("x", [1], broken));
    await assert.rejects(t.cache.get("x", [1], broken));
    assert.equal(calls, 3, "a failure is computed again");
  });

  it("keeps within its entry and byte bounds, least recently used out first", async () => {
    const t = setup({ maxEntries: 2 });
    await t.cache.get("a", [1], t.compute("1"));
    await t.cache.get("b", [1], t.compute("2"));
    await t.cache.get("a", [1], t.compute("x")); // a is now the most recent
    await t.cache.get("c", [1], t.compute("3"));
    assert.equal(t.cache.size(), 2);
    assert.equal((await t.cache.get("a", [1], t.compute("y"))).body, "1", "a was kept");
    assert.equal((await t.cache.get("b", [1], t.compute("z"))).body, "z", "b was dropped");
    const small = setup({ maxBytes: 1200 });
    await small.cache.get("a", [1], small.compute("x".repeat(8)));
    await small.cache.get("b", [1], small.compute("y".repeat(8)));
    await small.cache.get("c", [1], small.compute("z".repeat(300)));
    assert.ok(small.cache.size() <= 2);
  });

  it("keeps nothing with a TTL of 0 (the cache off), yet shares a computation among concurrent requests", async () => {
    const t = setup({ ttlMs: 0 });
    const [a, b] = await Promise.all([
      t.cache.get("k", [1], t.compute("a")),
      t.cache.get("k", [1], t.compute("b")),
    ]);
    assert.equal(a.body, "a");
    assert.equal(b.body, "a");
    assert.equal(t.computations(), 1);
    assert.equal(t.cache.size(), 0, "no answer is kept");
    assert.equal((await t.cache.get("k", [1], t.compute("c"))).body, "c", "the next request computes again");
    const notFoundAgain = async () => {
      throw notFound("gone");
    };
    await assert.rejects(t.cache.get("nf", [1], notFoundAgain), HttpError);
    assert.equal(t.cache.size(), 0, "no error is kept either");
  });
});
