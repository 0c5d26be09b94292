import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { suiteDb } from "../_test/suite-db.js";
import { ratioToNumber } from "../exact/ratio.js";
import { exactText, parseExact } from "../internal/exact-decimal.js";
import { migrate } from "./migrate.js";

/** num / den of two decimal texts, the correctly rounded double (an independent computation). */
function quotient(num: string, den: string): number {
  const n = parseExact(num);
  const d = parseExact(den);
  return ratioToNumber(n.digits * 10n ** BigInt(d.scale), d.digits * 10n ** BigInt(n.scale));
}

/** A decimal text of `digits` random digits with `scale` of them after the point. */
function randomDecimal(random: () => number, digits: number, scale: number): string {
  let text = String(1 + Math.floor(random() * 9));
  for (let i = 1; i < digits; i++) text += String(Math.floor(random() * 10));
  return exactText({ digits: BigInt(text), scale });
}

/** A small deterministic generator (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Pairs whose quotient is a halfway point between two doubles, or as near one as a last digit allows. */
function halfwayPairs(): [string, string][] {
  const pairs: [string, string][] = [];
  const tail = `1${"0".repeat(1199)}`;
  for (const m of [2n ** 53n + 1n, 2n ** 53n + 3n, 3n * 2n ** 60n + 2n ** 7n]) {
    pairs.push([m.toString(), "1"], [m.toString(), "-1"]);
    // Just above and just below the halfway point, by 10^-1200 of it.
    pairs.push([`${m * 10n ** 1200n + 1n}`, tail], [`${m * 10n ** 1200n - 1n}`, tail]);
    // The same halfway points scaled down by 2^40: the quotient's decimals are long.
    pairs.push([m.toString(), String(2n ** 40n)], [`${m * 3n}`, String(3n * 2n ** 40n)]);
  }
  // Subnormal and smallest results: 2^-1074 × 1.5 (a halfway point) and 2^-1075 (rounds to 0).
  pairs.push(["3", `${2n ** 1075n}`], ["1", `${2n ** 1075n}`], ["1", `${2n ** 1076n}`]);
  return pairs;
}

describe("exact_quotient (migration 053): num / den of numerics, the correctly rounded double", () => {
  const t = suiteDb();

  it("equals the exact rational rounded once, halfway points and their neighbours included", async () => {
    const random = seeded(53);
    const pairs: [string, string][] = halfwayPairs();
    for (let i = 0; i < 400; i++) {
      pairs.push([
        randomDecimal(random, 1 + Math.floor(random() * 120), Math.floor(random() * 110)),
        randomDecimal(random, 1 + Math.floor(random() * 80), Math.floor(random() * 90)),
      ]);
    }
    const { rows } = await t.db.query<{ q: number }>(
      `SELECT exact_quotient(n, d) AS q FROM unnest($1::numeric[], $2::numeric[]) WITH ORDINALITY AS p(n, d, i)
       ORDER BY i`,
      [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    );
    const wrong = pairs.flatMap(([n, d], i) => {
      const want = quotient(n, d);
      const got = rows[i]?.q;
      return Object.is(got, want) ? [] : [`${n} / ${d}: ${got} vs ${want}`];
    });
    assert.deepEqual(wrong, []);
    assert.equal(rows.length, pairs.length);
  });
});

describe("migration 053 on a database with USD series buckets", () => {
  let t: TestDb;
  before(async () => {
    t = await createTestDb({ empty: true });
  });
  after(() => t.drop());

  it("fills each bucket's average from its exact sums (its close when Σ v is 0)", async () => {
    await migrate(t.db, { until: "052_one_market_table.sql" });
    await t.db.query("INSERT INTO chains (chain_id, name, genesis_hash) VALUES (1, 'c', '0x00')");
    const buckets = [
      { pv: "4000000.000000000000000000000123", v: "2000.5", close: 1999 },
      { pv: "1", v: "3", close: 0.25 },
      { pv: "0", v: "0", close: 1234.5 },
    ];
    await t.db.query(
      `INSERT INTO token_usd_candles (chain_id, token, resolution, bucket, open, high, low, close, volume,
         volume_exact, sum_pv, sum_v, sum_pv_exact, sum_v_exact, first_key, last_key)
       SELECT 1, '0xaa', 3600, to_timestamp(3600 * i), b.close, b.close, b.close, b.close, 1, 1, 0, 0, b.pv, b.v, i, i
       FROM unnest($1::numeric[], $2::numeric[], $3::float8[]) WITH ORDINALITY AS b(pv, v, close, i)`,
      [buckets.map((b) => b.pv), buckets.map((b) => b.v), buckets.map((b) => b.close)],
    );
    assert.deepEqual(await migrate(t.db, { until: "053_series_average.sql" }), ["053_series_average.sql"]);
    const { rows } = await t.db.query<{ average: number }>(
      "SELECT average FROM token_usd_candles ORDER BY bucket",
    );
    assert.deepEqual(
      rows.map((r) => r.average),
      [quotient(buckets[0]?.pv ?? "", buckets[0]?.v ?? ""), quotient("1", "3"), 1234.5],
    );
  });
});
