import { randomBytes } from "node:crypto";
import pg from "pg";
import { createDb, type Db } from "../store/db.js";
import { createDatabase, dropDatabase } from "./sql.js";

export type TestDb = {
  db: Db;
  /** URL of this database (for code under test that opens its own pool). */
  url: string;
  name: string;
  /** Closes the pool and drops the database; later calls do nothing. */
  drop(): Promise<void>;
};

let created = 0;

/**
 * A fresh database for one test file, copied from the migrated template that `npm test`
 * (src/_test/run.ts) prepared: the full schema, no rows, its own name. `empty`: a database
 * without any schema instead (to migrate by hand, for example to an older version).
 */
export async function createTestDb(options: { max?: number; empty?: boolean } = {}): Promise<TestDb> {
  const adminUrl = process.env.TEST_PG_URL;
  const template = process.env.TEST_TEMPLATE_DB;
  if (!adminUrl || !template) {
    throw new Error("TEST_PG_URL and TEST_TEMPLATE_DB are not set: run the tests with `npm test`");
  }
  created += 1;
  // ≤ 63 bytes; unique across the test processes of a run and across runs on a shared server.
  const name = `${template.replace(/_template$/, "")}_${process.pid}_${created}_${randomBytes(2).toString("hex")}`;
  await withAdmin(adminUrl, (admin) => createDatabase(admin, name, options.empty ? undefined : template));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = createDb({ url: url.toString(), max: options.max ?? 5, applicationName: "tokenmarket-test" });
  let dropped: Promise<void> | undefined;
  return {
    db,
    url: url.toString(),
    name,
    drop: () => {
      dropped ??= (async () => {
        await db.end().catch(() => {});
        await withAdmin(adminUrl, (admin) => dropDatabase(admin, name));
      })();
      return dropped;
    },
  };
}

/** Runs `fn` with a one-off client (for CREATE/DROP DATABASE, which cannot run in a pool's transaction). */
export async function withAdmin<T>(url: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url, application_name: "tokenmarket-test" });
  admin.on("error", () => {});
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end().catch(() => {});
  }
}

/** The rows of one statement, run on a one-off client. */
export const queryOnce = <T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> =>
  withAdmin(url, async (client) => (await client.query<T>(sql)).rows);
