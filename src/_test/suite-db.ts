import { after, before } from "node:test";
import { createTestDb, type TestDb } from "./db.js";

/**
 * A fresh test database (as createTestDb makes it) for the tests of the enclosing describe: made
 * before them and dropped after them. Its fields can be read once the suite's tests run.
 */
export function suiteDb(options: Parameters<typeof createTestDb>[0] = {}): TestDb {
  let made: TestDb | undefined;
  before(async () => {
    made = await createTestDb(options);
  });
  after(() => made?.drop());
  const current = () => {
    if (made === undefined) throw new Error("the suite's database is made in its before() hook");
    return made;
  };
  return {
    get db() {
      return current().db;
    },
    get url() {
      return current().url;
    },
    get name() {
      return current().name;
    },
    drop: () => current().drop(),
  };
}
