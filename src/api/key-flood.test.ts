import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { fixture, fixtureConfig, loadMarketFixture } from "../_test/market-fixture.js";
import { suiteDb } from "../_test/suite-db.js";
import { createSilentLogger } from "../internal/logger.js";
import {
  createApiKey,
  findActiveApiKey,
  hashApiKey,
  keyPrefixOf,
  listApiKeys,
  revokeApiKey,
  seedApiKeysFromEnv,
} from "../store/api-keys.js";
import type { Db } from "../store/db.js";
import { createApiServer } from "./server.js";

const FLOOD = 10_000;
const MAX_FAILED = 20;

/**
 * Counts the key look-ups that reach Postgres through `db`: every connection it hands out (for
 * its own query or a checkout) has its statements counted from then on.
 */
function countingLookups(db: Db): { lookups: () => number } {
  let lookups = 0;
  const counting = new WeakSet<object>();
  db.on("acquire", (client) => {
    if (counting.has(client)) return;
    counting.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string }).text;
      if (text?.includes("FROM api_keys WHERE key_hash")) lookups += 1;
      return query(...args);
    };
  });
  return { lookups: () => lookups };
}

describe("wrong API keys", () => {
  let testDb: TestDb;
  let app: FastifyInstance;
  let base: string;
  let counter: ReturnType<typeof countingLookups>;

  before(async () => {
    testDb = await createTestDb();
    await loadMarketFixture(testDb.db);
    counter = countingLookups(testDb.db);
    app = createApiServer({
      // A 10-minute window, so that the whole flood falls in one window even on a slow machine.
      config: fixtureConfig({ api: { failedKeyLimit: { max: MAX_FAILED, windowMs: 600_000 } } }),
      db: testDb.db,
      logger: createSilentLogger(),
    });
    base = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it(`a flood of ${FLOOD} wrong keys from one address costs at most ${MAX_FAILED} look-ups, then 429`, async () => {
    const statuses = new Map<number, number>();
    let retryAfter: string | null = null;
    let next = 0;
    const worker = async () => {
      while (next < FLOOD) {
        const i = next++;
        const response = await fetch(`${base}/api/v1/assets?asset_ids=${fixture.usdc}:1`, {
          headers: { "x-api-key": `tm_wrong_${i}_${"x".repeat(30)}` },
          // A guard against a hung request only, loose enough that a slow answer on a loaded
          // machine is not taken for one.
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await response.json()) as { statusCode: number; message: string };
        assert.equal(body.statusCode, response.status);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 429) retryAfter = response.headers.get("retry-after");
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    assert.ok(counter.lookups() <= MAX_FAILED, `${counter.lookups()} look-ups`);
    assert.equal(statuses.get(403), counter.lookups(), JSON.stringify([...statuses]));
    assert.equal(statuses.get(429), FLOOD - counter.lookups(), JSON.stringify([...statuses]));
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 600, `Retry-After ${retryAfter}`);
  });
});

describe("stored key prefixes", () => {
  const testDb = suiteDb();

  it("keep at most a quarter of the key in clear; keys are at least 32 characters", async () => {
    const { key } = await createApiKey(testDb.db, "generated");
    assert.equal(key.length, 35);
    assert.equal(keyPrefixOf(key), key.slice(0, 7));
    assert.equal(keyPrefixOf("a".repeat(32)).length, 7);
    for (const row of await listApiKeys(testDb.db)) assert.ok(row.prefix.length <= 35 / 4, row.prefix);
    await assert.rejects(seedApiKeysFromEnv(testDb.db, `short:${"k".repeat(31)}`), /shorter than 32/);
    assert.equal(await seedApiKeysFromEnv(testDb.db, `long:${"k".repeat(32)}`), 1);
    const seeded = (await listApiKeys(testDb.db)).find((k) => k.name === "long");
    assert.equal(seeded?.prefix, "kkkkkkk");
  });

  it("the migration shortens old prefixes and every existing key keeps working", async () => {
    // A key stored the old way: 9 characters in clear, 9 of 16 for a minimum-length seeded key.
    const old = "tm_sixteen_chars";
    const twin = "tm_s2xteen_chars";
    for (const [name, key] of [
      ["old", old],
      ["twin", twin],
    ] as const) {
      await testDb.db.query("INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3)", [
        name,
        hashApiKey(key),
        key.slice(0, 9),
      ]);
    }
    const sql = readFileSync(
      path.join(import.meta.dirname, "../store/migrations/005_api_key_prefix.sql"),
      "utf8",
    );
    await testDb.db.query(sql);
    const row = (await listApiKeys(testDb.db)).find((k) => k.name === "old");
    assert.equal(row?.prefix, "tm_s");
    assert.deepEqual(await findActiveApiKey(testDb.db, old), { id: row?.id, name: "old" });
    // A prefix shared by several keys revokes none of them; the id does.
    assert.equal(await revokeApiKey(testDb.db, "tm_s"), 0);
    assert.ok(await findActiveApiKey(testDb.db, twin));
    assert.equal(await revokeApiKey(testDb.db, String(row?.id)), 1);
  });
});
