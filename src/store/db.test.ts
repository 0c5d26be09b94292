import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { QueryConfig } from "pg";
import { createTestDb, type TestDb } from "../_test/db.js";
import {
  checkOut,
  createDb,
  type Db,
  type DbClient,
  type DbTimeouts,
  withConnection,
  withTransaction,
} from "./db.js";
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
  const terminateOwnBackend = async (client: DbClient) => {
    const { rows } = await client.query("SELECT pg_backend_pid() AS pid");
    const pid = (rows[0] as { pid: number }).pid;
    // The client's own 'end': the server's notice and the socket's end have reached it.
    const ended = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`backend ${pid} ended, the client never heard`)),
        10_000,
      );
      client.once("end", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    await t.db.query("SELECT pg_terminate_backend($1)", [pid]);
    await ended;
  };

  for (const [name, run] of [
    [
      "withTransaction rejects with the connection's error; the process and the pool carry on",
      withTransaction,
    ],
    ["withReadSnapshot too", withReadSnapshot],
  ] as const) {
    it(name, async () => {
      await assert.rejects(
        run(t.db, async (client) => {
          await terminateOwnBackend(client);
          await client.query("SELECT 1");
        }),
      );
      const { rows } = await t.db.query<{ one: number }>("SELECT 1 AS one");
      assert.equal(rows[0]?.one, 1);
      assert.equal(t.db.totalCount <= 5, true);
    });
  }
});

/**
 * A test database and a pool of its own made with `max` and `timeouts`, for the enclosing
 * describe block: `own.db` once its `before` has run.
 */
function ownPool(max: number, timeouts: Partial<DbTimeouts>): { db: Db } {
  let t: TestDb | undefined;
  const own = {} as { db: Db };
  before(async () => {
    t = await createTestDb();
    own.db = createDb({ url: t.url, max, timeouts });
  });
  after(async () => {
    await own.db?.end();
    await t?.drop();
  });
  return own;
}

describe("the client-side bound of a query (queryTimeoutMs)", () => {
  // No server-side statement timeout: only the client's bound can end these waits.
  const own = ownPool(2, { statementTimeoutMs: 0, queryTimeoutMs: 300 });

  it("fails a query of the pool past the bound, and the pool goes on", async () => {
    const started = performance.now();
    await assert.rejects(own.db.query("SELECT pg_sleep(3)"), /Query read timeout/);
    const waited = performance.now() - started;
    assert.ok(waited >= 250 && waited < 2500, `failed after ${waited} ms`);
    const { rows } = await own.db.query<{ one: number }>("SELECT $1::int AS one", [1]);
    assert.deepEqual(rows, [{ one: 1 }]);
  });

  it("fails a checked-out client's query, and the one queued behind it without sending it", async () => {
    const client = await own.db.connect();
    try {
      const slow = client.query("SELECT pg_sleep(3)");
      const queued = client.query("SELECT 2 AS two");
      await assert.rejects(slow, /Query read timeout/);
      // Queued behind a statement the server is still running: never sent, so bounded too.
      await assert.rejects(queued, /Query read timeout/);
    } finally {
      client.release(new Error("dropped after a timeout"));
    }
  });

  it("fails a statement with the server's error and a stack through its caller", async () => {
    async function readsAMissingTable() {
      const client = await own.db.connect();
      try {
        await client.query("SELECT * FROM no_such_table");
      } finally {
        client.release();
      }
    }
    await assert.rejects(readsAMissingTable(), (error: Error & { code?: string }) => {
      assert.equal(error.code, "42P01");
      assert.match(error.message, /no_such_table/);
      assert.match(String(error.stack), /readsAMissingTable/);
      return true;
    });
  });

  it("lets a query's own query_timeout come first, and callbacks work as in node-pg", async () => {
    const { rows } = await own.db.query<{ slept: string }>({
      text: "SELECT pg_sleep(0.6)::text AS slept",
      query_timeout: 5000,
    } as QueryConfig);
    assert.deepEqual(rows, [{ slept: "" }]);
    const client = await own.db.connect();
    try {
      const viaCallback = await new Promise<unknown[]>((resolve, reject) =>
        client.query("SELECT 3 AS three", (error: Error | undefined, result: { rows: unknown[] }) =>
          error ? reject(error) : resolve(result.rows),
        ),
      );
      assert.deepEqual(viaCallback, [{ three: 3 }]);
    } finally {
      client.release();
    }
  });
});

describe("a deadline (checkOut, withConnection)", () => {
  // One connection and no other bound: only the deadline can end these waits.
  const own = ownPool(1, { statementTimeoutMs: 0, queryTimeoutMs: 0 });

  it("ends the wait for a connection, and the connection handed out later goes back to the pool", async () => {
    const held = await checkOut(own.db);
    const started = performance.now();
    await assert.rejects(checkOut(own.db, Date.now() + 300), /timeout exceeded when trying to connect/);
    // Expected 300 ms; without the deadline the wait would never end.
    assert.ok(performance.now() - started < 1500);
    held.release();
    const { rows } = await own.db.query<{ one: number }>("SELECT 1 AS one");
    assert.deepEqual(rows, [{ one: 1 }]);
  });

  it("bounds the wait for a connection and the queries after it together", async () => {
    const held = await checkOut(own.db);
    setTimeout(() => held.release(), 300);
    const started = performance.now();
    await assert.rejects(
      withConnection(own.db, Date.now() + 600, (client) => client.query("SELECT pg_sleep(30)")),
      /Query read timeout/,
    );
    // Expected 600 ms in all; without the deadline on the client the statement would run 30 s.
    assert.ok(performance.now() - started < 3000);
  });

  it("is cleared when the connection is released", async () => {
    const bounded = await checkOut(own.db, Date.now() + 200);
    bounded.release();
    // The pool's own query takes the same connection without a checkOut.
    const { rows } = await own.db.query<{ slept: string }>("SELECT pg_sleep(0.5)::text AS slept");
    assert.deepEqual(rows, [{ slept: "" }]);
  });
});
