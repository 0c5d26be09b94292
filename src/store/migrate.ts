import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { checkOut, type Db } from "./db.js";

const migrationsDir = path.join(import.meta.dirname, "migrations");
/** Any fixed number: the advisory lock that serialises concurrent migrators. */
const MIGRATION_LOCK = 727_001;

/**
 * Applies the SQL files of `migrations/` that the database has not seen, in name order, each in
 * its own transaction with its record in `schema_migrations`. Safe to run from several
 * processes at once (advisory lock). `until`: only the files whose name sorts at or before it
 * (a database left at an older version, for the tests of an upgrade). Returns the names applied.
 */
export async function migrate(db: Db, options: { until?: string } = {}): Promise<string[]> {
  const checkedOut = await checkOut(db);
  const { client } = checkedOut;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set(
      (await client.query<{ name: string }>("SELECT name FROM schema_migrations")).rows.map((r) => r.name),
    );
    const files = readdirSync(migrationsDir)
      .filter((f) => f.endsWith(".sql") && (options.until === undefined || f <= options.until))
      .sort();
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = readFileSync(path.join(migrationsDir, file), "utf8");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query("INSERT INTO schema_migrations (name) VALUES ($1)", [file]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(file);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    checkedOut.release();
  }
}
