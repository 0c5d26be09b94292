import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createTestDb, type TestDb } from "../_test/db.js";
import { withTransaction } from "./db.js";
import { withReadSnapshot } from "./replication.js";

describe("checked-out connections that break between two statements", () => {
  let t: TestDb;
  before(async () => {
    t = await createTestDb();
  });
  after(() => t.drop());

  // The server ends the backend while the transaction's client is checked out and idle (between
  // statements, as when a batch computes): the client emits 'error' with no statement to fail.
  // Unheard, that event would end the test process; heard, the transaction fails and the pool
  // goes on with a new connection.
  const terminateOwnBackend = async (client: { query(sql: string): Promise<{ rows: unknown[] }> }) => {
    const { rows } = await client.query("SELECT pg_backend_pid() AS pid");
    const pid = (rows[0] as { pid: number }).pid;
    await t.db.query("SELECT pg_terminate_backend($1)", [pid]);
    // Long enough for the server's notice and the socket's end to reach the client.
    for (let i = 0; i < 50; i++) {
      const { rows: alive } = await t.db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
      if (alive.length === 0) break;
      await sleep(20);
    }
    await sleep(100);
  };

  it("withTransaction rejects with the connection's error; the process and the pool carry on", async () => {
    await assert.rejects(
      withTransaction(t.db, async (client) => {
        await terminateOwnBackend(client);
        await client.query("SELECT 1");
      }),
    );
    const { rows } = await t.db.query<{ one: number }>("SELECT 1 AS one");
    assert.equal(rows[0]?.one, 1);
    assert.equal(t.db.totalCount <= 5, true);
  });

  it("withReadSnapshot too", async () => {
    await assert.rejects(
      withReadSnapshot(t.db, async (client) => {
        await terminateOwnBackend(client);
        await client.query("SELECT 1");
      }),
    );
    const { rows } = await t.db.query<{ one: number }>("SELECT 1 AS one");
    assert.equal(rows[0]?.one, 1);
  });
});
