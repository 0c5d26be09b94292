import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countedAsync, manualClock } from "../_test/api-fakes.js";
import { HttpError } from "../internal/errors.js";
import { type ApiKeyIdentity, createFailedKeyLimiter, createKeyCheck, requireApiKey } from "./auth.js";

function fakeKeys() {
  const active = new Map<string, ApiKeyIdentity>([["tm_good_key_0123456789", { id: 1, name: "bot" }]]);
  const clock = manualClock();
  const lookup = countedAsync((key: string) => active.get(key) ?? null);
  const check = createKeyCheck({ lookup: lookup.call, ttlMs: 1000, maxEntries: 3, now: clock.now });
  return { check, active, queries: lookup.calls, advance: clock.advance };
}

describe("createKeyCheck", () => {
  it("finds active keys and refuses unknown ones", async () => {
    const keys = fakeKeys();
    assert.deepEqual(await keys.check.find("tm_good_key_0123456789"), { id: 1, name: "bot" });
    assert.equal(await keys.check.find("tm_unknown"), null);
  });

  it("answers from memory within the TTL and shares concurrent look-ups", async () => {
    const keys = fakeKeys();
    await Promise.all(Array.from({ length: 20 }, () => keys.check.find("tm_good_key_0123456789")));
    assert.equal(keys.queries(), 1, "20 concurrent requests with one key make one query");
    keys.advance(500);
    await keys.check.find("tm_good_key_0123456789");
    assert.equal(keys.queries(), 1, "a second look-up within the TTL is answered from memory");
  });

  it("stops accepting a revoked key once the TTL has passed", async () => {
    const keys = fakeKeys();
    assert.ok(await keys.check.find("tm_good_key_0123456789"));
    keys.active.delete("tm_good_key_0123456789");
    keys.advance(999);
    assert.ok(await keys.check.find("tm_good_key_0123456789"), "still remembered just before the TTL");
    keys.advance(2);
    assert.equal(await keys.check.find("tm_good_key_0123456789"), null, "revoked once the TTL has passed");
  });

  it("keeps at most maxEntries answers", async () => {
    const keys = fakeKeys();
    for (const key of ["a", "b", "c", "d", "e"]) await keys.check.find(key);
    const before = keys.queries();
    await keys.check.find("a");
    assert.equal(keys.queries(), before + 1, "the oldest answer was dropped");
  });
});

describe("requireApiKey with the failed-key limiter", () => {
  const run = (hook: ReturnType<typeof requireApiKey>, key: string) =>
    hook({ headers: { "x-api-key": key }, ip: "10.0.0.1" } as never, {} as never).then(
      () => 200,
      (error: unknown) => (error instanceof HttpError ? error.statusCode : 500),
    );

  it("never limits a busy client with a valid key, whatever its concurrency", async () => {
    const { check, advance } = fakeKeys();
    const hook = requireApiKey(check, createFailedKeyLimiter({ max: 2, windowMs: 60_000 }));
    for (let round = 0; round < 3; round++) {
      advance(5000); // the key's memory expired: the next requests share one look-up
      const statuses = await Promise.all(
        Array.from({ length: 50 }, () => run(hook, "tm_good_key_0123456789")),
      );
      assert.deepEqual(new Set(statuses), new Set([200]), `round ${round}`);
    }
  });

  it("a concurrent flood of distinct wrong keys starts at most `max` look-ups, then 429", async () => {
    const { check, queries } = fakeKeys();
    const hook = requireApiKey(check, createFailedKeyLimiter({ max: 5, windowMs: 60_000 }));
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => run(hook, `tm_wrong_key_${i}_0123456789`)),
    );
    assert.equal(queries(), 5);
    assert.equal(statuses.filter((s) => s === 403).length, 5);
    assert.equal(statuses.filter((s) => s === 429).length, 95);
  });
});
