import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { createSilentLogger } from "../internal/logger.js";
import { createDb } from "../store/db.js";
import { createPostgresRateLimitStore } from "./rate-limit-pg.js";

type Result = { current: number; ttl: number };

const incr = (
  store: { incr: (k: string, cb: (e: Error | null, r: Result) => void, w: number, m?: number) => void },
  key: string,
  windowMs: number,
  max = 10,
) =>
  new Promise<Result>((resolve, reject) =>
    store.incr(key, (e, r) => (e ? reject(e) : resolve(r)), windowMs, max),
  );

describe("createPostgresRateLimitStore", () => {
  let testDb: TestDb;
  before(async () => {
    testDb = await createTestDb();
  });
  after(async () => {
    await testDb?.drop();
  });

  it("counts one window per key across stores (processes) sharing the database", async () => {
    const a = new (createPostgresRateLimitStore({ db: testDb.db, logger: createSilentLogger() }))({});
    const b = new (createPostgresRateLimitStore({ db: testDb.db, logger: createSilentLogger() }))({});
    const counts = await Promise.all(Array.from({ length: 20 }, (_, i) => incr(i % 2 ? a : b, "k", 60_000)));
    assert.deepEqual(
      counts.map((c) => c.current).sort((x, y) => x - y),
      Array.from({ length: 20 }, (_, i) => i + 1),
      "every request got its own count",
    );
    for (const c of counts) assert.ok(c.ttl > 0 && c.ttl <= 60_000);
    assert.equal((await incr(a, "other", 60_000)).current, 1, "per key");
    assert.equal((await incr(a, "k", 60_000, 99)).current, 1, "another limit counts apart");
  });

  it("starts a new window once the last one is over", async () => {
    const store = new (createPostgresRateLimitStore({ db: testDb.db, logger: createSilentLogger() }))({});
    assert.equal((await incr(store, "short", 200)).current, 1);
    assert.equal((await incr(store, "short", 200)).current, 2);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const next = await incr(store, "short", 200);
    assert.equal(next.current, 1);
    assert.ok(next.ttl > 100);
  });

  it("counts per process when the database does not answer, instead of failing the request", async () => {
    const down = createDb({ url: "postgres://nobody@127.0.0.1:9/none", timeouts: { connectTimeoutMs: 200 } });
    try {
      const store = new (createPostgresRateLimitStore({
        db: down,
        logger: createSilentLogger(),
        timeoutMs: 300,
      }))({});
      const counts = [];
      for (let i = 0; i < 3; i++) counts.push((await incr(store, "k", 60_000)).current);
      assert.deepEqual(counts, [1, 2, 3]);
    } finally {
      await down.end();
    }
  });
});
