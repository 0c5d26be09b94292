/**
 * The scale benchmark's loader (bench/loader.ts) at a tiny size: its database must be one the API
 * answers from like an indexed one, so the benchmark measures real answers. Every request the
 * benchmark makes (bench/scale-api.ts scaleRequests) answers 200 with records that validate
 * against /openapi.json, and the derived tables agree with the loaded swaps.
 */
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../src/_test/db.js";
import { type ApiAnswer, createApiClient } from "../src/_test/http-client.js";
import { createApiServer } from "../src/api/server.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { createApiKey } from "../src/store/api-keys.js";
import { CHAIN, type LoadedDatabase, loadScaleDatabase, WETH } from "./loader.js";
import { scaleRequests } from "./scale-api.js";

const SWAPS = 20_000;

describe("scale loader (bench/loader.ts)", () => {
  let testDb: TestDb;
  let loaded: LoadedDatabase;
  let app: FastifyInstance;
  let api: Awaited<ReturnType<typeof createApiClient>>;

  before(async () => {
    testDb = await createTestDb({ max: 4 });
    loaded = await loadScaleDatabase(testDb.db, {
      tokens: 500,
      pools: 800,
      swaps: SWAPS,
      days: 3,
      minuteDays: 1,
    });
    const { key } = await createApiKey(testDb.db, "loader-test");
    app = createApiServer({
      config: loaded.config,
      db: testDb.db,
      logger: createSilentLogger(),
      answerCacheTtlMs: 0,
      now: () => new Date(loaded.end),
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    api = await createApiClient(app, { key });
  });
  after(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it("derives candles, series and statistics that agree with the loaded swaps", async () => {
    const one = async (sql: string) => (await testDb.db.query<{ n: string }>(sql, [CHAIN])).rows[0]?.n;
    assert.equal(await one("SELECT count(*)::text AS n FROM swaps WHERE chain_id = $1"), String(SWAPS));
    for (const table of ["candles_1h", "candles_1d"]) {
      assert.equal(
        await one(`SELECT sum(trades)::text AS n FROM ${table} WHERE chain_id = $1`),
        String(SWAPS),
        table,
      );
    }
    const minutes = await testDb.db.query<{ candles: string; swaps: string }>(
      `SELECT (SELECT sum(trades) FROM candles_1m WHERE chain_id = $1)::text AS candles,
         (SELECT count(*) FROM swaps s WHERE chain_id = $1
           AND s.block_time >= (SELECT since FROM retained_from WHERE relation = 'candles_1m'))::text AS swaps`,
      [CHAIN],
    );
    assert.equal(minutes.rows[0]?.candles, minutes.rows[0]?.swaps);
    assert.ok(Number(minutes.rows[0]?.swaps) > 0, "the minute candles hold trades");
    // Every token of a traded pool has a price; the volume of a day is that of its swaps.
    assert.equal(
      await one(
        `SELECT count(*)::text AS n FROM (SELECT token0 AS t FROM pools WHERE chain_id = $1 UNION SELECT token1 FROM pools WHERE chain_id = $1) x
         WHERE NOT EXISTS (SELECT 1 FROM token_prices p WHERE p.chain_id = $1 AND p.token = x.t)
           AND EXISTS (SELECT 1 FROM swaps s JOIN pools q ON q.chain_id = s.chain_id AND q.address = s.pool
                       WHERE s.chain_id = $1 AND (q.token0 = x.t OR q.token1 = x.t))`,
      ),
      "0",
    );
    // Exact sums: the days' volumes add up to the swaps' (numeric, no rounding on either side).
    const volumes = await testDb.db.query<{ candles: string; swaps: string }>(
      `SELECT (SELECT sum(volume_usd_exact) FROM candles_1d WHERE chain_id = $1)::text AS candles,
         (SELECT sum(volume_usd::numeric) FROM swaps WHERE chain_id = $1)::text AS swaps`,
      [CHAIN],
    );
    const { candles, swaps } = volumes.rows[0] as { candles: string; swaps: string };
    assert.equal(
      (
        await testDb.db.query<{ d: string }>("SELECT ($1::numeric - $2::numeric)::text AS d", [
          candles,
          swaps,
        ])
      ).rows[0]?.d.replace(/^-?0\.?0*$/, "0"),
      "0",
      `the days' USD volume ${candles} is the swaps' ${swaps}`,
    );
    assert.ok(Number(swaps) > 0, "swaps with a USD value");
  });

  it("answers every request of the benchmark with records that match /openapi.json", async () => {
    const requests = await scaleRequests(testDb.db, {
      end: loaded.end,
      from: loaded.from,
      minuteDays: 1,
      samples: 8,
    });
    for (const [name, paths] of Object.entries(requests)) {
      assert.equal(paths.length, 8, `${name}: 8 requests`);
      for (const path of paths) {
        const [route, query] = path.split("?") as [string, string];
        const answer: ApiAnswer = await api.get(route, query);
        assert.equal(answer.status, 200, `${path}: ${answer.text.slice(0, 300)}`);
        assert.ok(Array.isArray(answer.body) && answer.body.length > 0, `${name}: records in ${path}`);
      }
    }
  });

  it("pages a pair's trades through the cursor: every swap once, newest first", async () => {
    const { rows } = await testDb.db.query<{ pool: string; token0: string; n: number }>(
      `SELECT s.pool, p.token0, count(*)::int AS n FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
       WHERE s.chain_id = $1 AND (p.token0 = $2 OR p.token1 = $2) GROUP BY s.pool, p.token0 ORDER BY n DESC OFFSET 5 LIMIT 1`,
      [CHAIN, WETH],
    );
    const pair = rows[0] as { pool: string; token0: string; n: number };
    const seen = new Set<string>();
    let cursor: string | null = null;
    let previous = Number.POSITIVE_INFINITY;
    do {
      const answer: ApiAnswer = await api.get("/api/v1/trades", {
        asset_id: `${pair.token0}:${CHAIN}`,
        pair_id: `${pair.pool}:${CHAIN}`,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      assert.equal(answer.status, 200);
      for (const trade of answer.body as { block_number: number; log_index: number }[]) {
        const position = trade.block_number * 100_000 + trade.log_index;
        assert.ok(position < previous, "newest first");
        previous = position;
        seen.add(String(position));
      }
      cursor = answer.headers.get("x-next-cursor");
    } while (cursor);
    assert.equal(seen.size, pair.n);
  });
});
