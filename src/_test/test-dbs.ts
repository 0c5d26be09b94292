import { createTestDb, type TestDb } from "./db.js";

/** The test databases one test file (or group) makes as it goes, all dropped by drop() (in its after hook). */
export type TestDbs = { create(): Promise<TestDb>; drop(): Promise<void> };

export function createTestDbs(): TestDbs {
  const dbs: TestDb[] = [];
  return {
    create: async () => {
      const testDb = await createTestDb();
      dbs.push(testDb);
      return testDb;
    },
    drop: async () => {
      await Promise.all(dbs.map((d) => d.drop()));
    },
  };
}
