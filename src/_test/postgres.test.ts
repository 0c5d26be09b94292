import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import { readdirSync } from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { createTestDb, type TestDb, withAdmin } from "./db.js";

const adminUrl = process.env.TEST_PG_URL ?? "";
const template = process.env.TEST_TEMPLATE_DB ?? "";
const migrationFiles = readdirSync(path.join(import.meta.dirname, "../store/migrations"))
  .filter((file) => file.endsWith(".sql"))
  .sort();

describe("test databases", () => {
  const opened: TestDb[] = [];
  const open = async () => {
    const testDb = await createTestDb();
    opened.push(testDb);
    return testDb;
  };
  after(() => Promise.all(opened.map((testDb) => testDb.drop())));

  test("the template is migrated and marked as a template", async () => {
    const rows = await withAdmin(adminUrl, async (admin) => {
      const result = await admin.query<{ datistemplate: boolean; datallowconn: boolean }>(
        "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1",
        [template],
      );
      return result.rows;
    });
    deepEqual(
      rows,
      [{ datistemplate: true, datallowconn: false }],
      "the template exists, is a template, takes no connections",
    );
  });

  test("a test database has the whole schema", async () => {
    const { db } = await open();
    const { rows } = await db.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
    deepEqual(
      rows.map((row) => row.name),
      migrationFiles,
      "every migration is applied",
    );
    const swaps = await db.query<{ swaps: string | null }>(
      "SELECT to_regclass('public.swaps')::text AS swaps",
    );
    equal(swaps.rows[0]?.swaps, "swaps", "the swaps table exists");
  });

  test("two test databases are isolated", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    notEqual(a.name, b.name);
    notEqual(a.url, b.url);
    await a.db.query("INSERT INTO settings (key, value) VALUES ('seen', '1')");
    const inA = await a.db.query("SELECT 1 FROM settings WHERE key = 'seen'");
    const inB = await b.db.query("SELECT 1 FROM settings WHERE key = 'seen'");
    equal(inA.rowCount, 1, "the row is in the database it was written to");
    equal(inB.rowCount, 0, "the row is not in the other database");
  });

  test("drop() removes the database and may be called twice", async () => {
    const testDb = await createTestDb();
    const exists = () =>
      withAdmin(adminUrl, async (admin) => {
        const result = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [testDb.name]);
        return result.rowCount === 1;
      });
    ok(await exists(), "created");
    await testDb.drop();
    await testDb.drop();
    equal(await exists(), false, "dropped");
  });
});
