import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { suiteDb } from "../_test/suite-db.js";
import { columnsOf, unnest } from "./unnest.js";

type Row = {
  text: string | null;
  int: number | null;
  bigint: number | null;
  float: number | null;
  numeric: bigint | null;
  time: Date | null;
};

const COLUMNS = columnsOf<Row>({
  t: ["text", (r) => r.text],
  i: ["int", (r) => r.int],
  b: ["bigint", (r) => r.bigint],
  f: ["float8", (r) => r.float],
  n: ["numeric", (r) => r.numeric],
  ts: ["timestamptz", (r) => r.time],
});

/** Texts an array literal must quote or escape, and the doubles at the edges of float8. */
const TEXTS = [
  "",
  "NULL",
  "null",
  'a"b',
  "back\\slash",
  '\\"',
  "{braces},comma",
  " lead and trail ",
  "tab\tnew\nline",
  "ünïcødé 🦄",
  "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
];
const FLOATS = [
  0,
  -0,
  0.1 + 0.2,
  1e-7,
  5e-324,
  Number.MAX_VALUE,
  -1.5e21,
  123456789.12345679,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.NaN,
];
const ROWS: Row[] = Array.from({ length: Math.max(TEXTS.length, FLOATS.length) + 1 }, (_, i) => ({
  text: TEXTS[i] ?? null,
  int: i === 3 ? null : ([0, -1, 2_147_483_647, -2_147_483_648][i % 4] ?? null),
  bigint:
    i % 5 === 4 ? null : ([0, Number.MAX_SAFE_INTEGER, -(2 ** 53 - 1), 1_795_799_339_389][i % 4] ?? null),
  float: FLOATS[i] ?? null,
  numeric: i % 6 === 5 ? null : ([0n, 10n ** 77n - 1n, -(2n ** 255n), 1n][i % 4] ?? null),
  time: i % 7 === 6 ? null : new Date(Date.UTC(2026, 10, 27, 17, i, i, i)),
}));

describe("unnest: one array literal per column, read back by Postgres as the values sent", () => {
  const t = suiteDb();

  it("round-trips texts, integers, doubles, numerics, times and nulls", async () => {
    const u = unnest("r", COLUMNS, ROWS, 1);
    // Every value comes back as text (doubles with Postgres' shortest exact digits), so what is
    // compared is what Postgres stored, not node-pg's parsing of it.
    const { rows } = await t.db.query<{
      t: string | null;
      i: number | null;
      b: string | null;
      f: string | null;
      n: string | null;
      ts: string | null;
    }>(
      `SELECT r.t, r.i, r.b::text AS b, r.f::text AS f, r.n::text AS n,
         to_char(r.ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ts
       FROM ${u.sql}`,
      u.params,
    );
    assert.equal(rows.length, ROWS.length);
    rows.forEach((row, i) => {
      const want = ROWS[i] as Row;
      assert.equal(row.t, want.text, `text ${i}`);
      assert.equal(row.i, want.int, `int ${i}`);
      assert.equal(row.b, want.bigint === null ? null : String(want.bigint), `bigint ${i}`);
      assert.equal(row.n, want.numeric === null ? null : want.numeric.toString(), `numeric ${i}`);
      assert.equal(row.ts, want.time === null ? null : want.time.toISOString(), `time ${i}`);
      if (want.float === null) assert.equal(row.f, null, `float ${i}`);
      else if (Number.isNaN(want.float)) assert.equal(row.f, "NaN", `float ${i}`);
      // Postgres' digits name the same double (signed zero aside: node-pg's text loses it too).
      else assert.equal(Number(row.f), want.float === 0 ? 0 : want.float, `float ${i}: ${row.f}`);
    });
  });

  it("sends an empty set of rows as empty arrays", async () => {
    const u = unnest("r", COLUMNS, [], 1);
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM ${u.sql}`, u.params);
    assert.equal(rows[0]?.n, 0);
  });
});
