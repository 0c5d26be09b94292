import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { suiteDb } from "../_test/suite-db.js";
import { createSilentLogger } from "../internal/logger.js";
import { createDb, type Db } from "../store/db.js";
import { createPostgresRateLimitStore } from "./rate-limit-pg.js";

type Result = { current: number; ttl: number };
type Store = { incr: (k: string, cb: (e: Error | null, r: Result) => void, w: number, m?: number) => void };

const incr = (store: Store, key: string, windowMs: number, max = 10) =>
  new Promise<Result>((resolve, reject) =>
    store.incr(key, (e, r) => (e ? reject(e) : resolve(r)), windowMs, max),
  );

describe("createPostgresRateLimitStore", () => {
  const testDb = suiteDb();

  /** A pool that counts the statements it runs (the real pool underneath). */
  const counted = (db: Db) => {
    const counter = { statements: 0 };
    const proxy = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === "query")
          return (...args: Parameters<Db["query"]>) => {
            counter.statements += 1;
            return (target.query as (...a: unknown[]) => unknown)(...args);
          };
        return Reflect.get(target, prop, receiver);
      },
    });
    return { db: proxy as Db, counter };
  };

  it("allows at most the limit per window across stores (processes), one statement per lease", async (t) => {
    const { db, counter } = counted(testDb.db);
    const stores = Array.from(
      { length: 3 },
      () => new (createPostgresRateLimitStore({ db, logger: createSilentLogger() }))({}),
    );
    const max = 200;
    // 900 requests in three waves, spread over the three stores, at most as fast as leases come.
    const counts: Result[] = [];
    for (let wave = 0; wave < 3; wave++)
      counts.push(
        ...(await Promise.all(
          Array.from({ length: 300 }, (_, i) => incr(stores[i % 3] as Store, "k", 60_000, max)),
        )),
      );
    const allowed = counts.filter((c) => c.current <= max).length;
    t.diagnostic(`${allowed} of ${max} allowed, in ${counter.statements} statements for 900 requests`);
    assert.ok(allowed <= max, `${allowed} allowed, the limit is ${max}`);
    assert.ok(allowed >= max * 0.8, `${allowed} allowed: most of the budget is used`);
    assert.equal(counts.filter((c) => c.current > max).length, 900 - allowed);
    for (const c of counts) assert.ok(c.ttl > 0 && c.ttl <= 60_000, `ttl ${c.ttl}`);
    assert.ok(counter.statements < 60, `${counter.statements} statements for 900 requests`);
    assert.equal((await incr(stores[0] as Store, "other", 60_000, max)).current, 1, "per key");
    assert.equal((await incr(stores[0] as Store, "k", 60_000, 99)).current, 1, "another limit counts apart");
  });

  it("never allows more than the limit, however the requests race", async () => {
    for (const max of [1, 2, 7, 40]) {
      const stores = Array.from(
        { length: 4 },
        () => new (createPostgresRateLimitStore({ db: testDb.db, logger: createSilentLogger() }))({}),
      );
      const counts = await Promise.all(
        Array.from({ length: max * 5 }, (_, i) =>
          incr(stores[(i * 7) % 4] as Store, `race${max}`, 60_000, max),
        ),
      );
      const allowed = counts.filter((c) => c.current <= max).length;
      assert.equal(allowed, max, `limit ${max}: ${allowed} allowed (every request waits, so none is lost)`);
    }
  });

  it("starts a new window once the last one is over", async () => {
    const store = new (createPostgresRateLimitStore({ db: testDb.db, logger: createSilentLogger() }))({});
    assert.equal((await incr(store, "short", 300, 2)).current, 1);
    assert.equal((await incr(store, "short", 300, 2)).current, 2);
    assert.equal((await incr(store, "short", 300, 2)).current, 3, "over the limit");
    await new Promise((resolve) => setTimeout(resolve, 350));
    const next = await incr(store, "short", 300, 2);
    assert.equal(next.current, 1);
    assert.ok(next.ttl > 150, `ttl ${next.ttl}`);
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
