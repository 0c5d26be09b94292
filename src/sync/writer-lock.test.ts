import * as assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { createCapturingLogger, waitFor } from "../_test/indexer-wait.js";
import { startTcpProxy } from "../_test/tcp-proxy.js";
import { WriterLockLostError } from "../internal/errors.js";
import { createDb, type Db, withTransaction } from "../store/db.js";
import { createWriterLock, defaultWriterLockOptions, type WriterLock } from "./writer-lock.js";

const CHAIN = 4242;

describe("writer lock", { timeout: 120_000 }, () => {
  let t: TestDb;
  const locks: WriterLock[] = [];
  const lockOf = (db: Db, logger = createCapturingLogger().logger) => {
    const lock = createWriterLock({ db, chainId: CHAIN, logger });
    locks.push(lock);
    return lock;
  };
  /**
   * The distinct times a standby's lock session started a query (its polls), read from the
   * server: the standby is the test database's writer-lock session other than `holderPid`.
   */
  const standbyQueries = new Set<string>();
  const standbyPolled = async (holderPid: number) => {
    const { rows } = await t.db.query<{ started: string }>(
      `SELECT query_start::text AS started FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE '%-writer-lock' AND pid <> $1
          AND query_start IS NOT NULL`,
      [holderPid],
    );
    for (const row of rows) standbyQueries.add(row.started);
    return standbyQueries.size;
  };
  const epoch = async () =>
    (await t.db.query("SELECT writer_epoch FROM sync_state WHERE chain_id = $1", [CHAIN])).rows[0]
      ?.writer_epoch as number;

  before(async () => {
    t = await createTestDb();
    await t.db.query(
      "INSERT INTO chains (chain_id, name, genesis_hash, devnet) VALUES ($1, 'test', '0x01', true)",
      [CHAIN],
    );
    await t.db.query("INSERT INTO sync_state (chain_id, indexed_block) VALUES ($1, 0)", [CHAIN]);
  });
  // A failed test must not leave its lock held: the next one would stand by for ever.
  afterEach(async () => {
    await Promise.all(locks.splice(0).map((l) => l.release()));
  });
  after(async () => {
    await t?.drop();
  });

  it("a second process is a quiet standby and takes the lock as soon as the first lets it go", async () => {
    const a = lockOf(t.db);
    const heldA = await a.acquire(new AbortController().signal);
    assert.ok(heldA);
    const writerA = await a.claim(t.db);
    const { logger, lines } = createCapturingLogger();
    const b = lockOf(t.db, logger);
    let standby = 0;
    const acquiring = b.acquire(new AbortController().signal, () => standby++);
    // Several polls go by (the session's connect query, then three tries of the lock), as the
    // server saw them.
    standbyQueries.clear();
    await waitFor(async () => (await standbyPolled(heldA.lockPid)) >= 4, "the standby polls", {
      timeoutMs: 30_000,
    });
    assert.equal(b.standby(), true);
    assert.equal(standby, 1);
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [[30, `standby for chain ${CHAIN}: another indexer holds it`]],
      "one info line, nothing else",
    );
    const releasedAt = Date.now();
    await a.release();
    assert.ok(writerA.lost.aborted, "the released writer knows it");
    const heldB = await acquiring;
    const takeoverMs = Date.now() - releasedAt;
    assert.ok(heldB && heldB.lockPid !== heldA.lockPid);
    // At its next poll; the bound is 5× the poll interval (a loaded machine), where a takeover
    // that waited for something else (the server's idle timeout) would not be by a poll.
    assert.ok(takeoverMs <= 5 * defaultWriterLockOptions.pollMs, `taken over in ${takeoverMs} ms`);
    const writerB = await b.claim(t.db);
    assert.ok(writerB.epoch > writerA.epoch);
    assert.equal(await epoch(), writerB.epoch);
    await assert.rejects(
      withTransaction(t.db, (c) => writerA.fence(c)),
      WriterLockLostError,
    );
    await withTransaction(t.db, (c) => writerB.fence(c));
    await b.release();
  });

  it("a superseded epoch cannot write even while its process still holds the lock", async () => {
    const a = lockOf(t.db);
    assert.ok(await a.acquire(new AbortController().signal));
    const first = await a.claim(t.db);
    const second = await a.claim(t.db);
    assert.equal(first.lost.aborted, false);
    // The fence's own check in the database, not the process's memory, refuses the old epoch.
    await assert.rejects(
      withTransaction(t.db, (c) => first.fence(c)),
      (error: unknown) => error instanceof WriterLockLostError && /epoch/.test(error.message),
    );
    await withTransaction(t.db, (c) => second.fence(c));
    await a.release();
  });

  it("a writer whose lock session is ended stops at once, and its fence refuses every write", async () => {
    const a = lockOf(t.db);
    const held = await a.acquire(new AbortController().signal);
    assert.ok(held);
    const writer = await a.claim(t.db);
    const killedAt = Date.now();
    await t.db.query("SELECT pg_terminate_backend($1)", [held.lockPid]);
    // The ended session fails the lock connection, or at the latest the next heartbeat does:
    // within 5× the heartbeat interval, a wide margin for a loaded machine.
    const noticeBound = 5 * defaultWriterLockOptions.heartbeatMs;
    await waitFor(() => writer.lost.aborted, "the writer notices", {
      timeoutMs: 2 * noticeBound,
      intervalMs: 10,
    });
    const noticedMs = Date.now() - killedAt;
    assert.ok(noticedMs < noticeBound, `noticed after ${noticedMs} ms`);
    await assert.rejects(
      withTransaction(t.db, (c) => writer.fence(c)),
      WriterLockLostError,
    );
    await a.release();
  });

  it("a network cut: the holder stops writing within its heartbeat timeout, the server ends the dead session and the standby takes over", async (ctx) => {
    const target = new URL(t.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const viaProxy = new URL(t.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    const proxied = createDb({ url: viaProxy.toString(), max: 2 });
    try {
      const a = lockOf(proxied);
      const heldA = await a.acquire(new AbortController().signal);
      assert.ok(heldA);
      const writerA = await a.claim(proxied);
      const b = lockOf(t.db);
      const acquiring = b.acquire(new AbortController().signal);
      standbyQueries.clear();
      await waitFor(async () => (await standbyPolled(heldA.lockPid)) >= 2, "the standby polls", {
        timeoutMs: 30_000,
      });
      assert.equal(b.standby(), true);

      const cutAt = Date.now();
      proxy.cut();
      const { heartbeatMs, heartbeatTimeoutMs, serverIdleTimeoutMs, pollMs } = defaultWriterLockOptions;
      // Timeouts that must fire: asserted within 5× their expected values (a loaded machine).
      const lostBound = 5 * (heartbeatMs + heartbeatTimeoutMs);
      const takeoverBound = 5 * (serverIdleTimeoutMs + pollMs);
      await waitFor(() => writerA.lost.aborted, "the cut-off writer notices", {
        timeoutMs: lostBound,
        intervalMs: 10,
      });
      const lostMs = Date.now() - cutAt;
      const heldB = await acquiring;
      const takeoverMs = Date.now() - cutAt;
      assert.ok(heldB);
      ctx.diagnostic(
        `network cut: writer stopped after ${lostMs} ms, standby took the lock after ${takeoverMs} ms`,
      );
      assert.ok(lostMs <= lostBound, `stopped writing after ${lostMs} ms`);
      assert.ok(takeoverMs <= takeoverBound, `taken over after ${takeoverMs} ms`);
      // The dead session is gone from the server, and with it the lock.
      const { rows } = await t.db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [heldA.lockPid]);
      assert.equal(rows.length, 0);
      const writerB = await b.claim(t.db);
      assert.ok(writerB.epoch > writerA.epoch);
      await b.release();
    } finally {
      await proxy.close();
      await proxied.end().catch(() => {});
    }
  });

  /** Keeps this thread busy, as a long synchronous computation of the indexer does. */
  const busy = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // Spin: no timer, no I/O callback runs on this thread meanwhile.
    }
  };

  it("a synchronous stretch of the indexer's thread longer than the server's idle timeout keeps the lock", async () => {
    const a = lockOf(t.db);
    const held = await a.acquire(new AbortController().signal);
    assert.ok(held);
    const writer = await a.claim(t.db);
    busy(defaultWriterLockOptions.serverIdleTimeoutMs + defaultWriterLockOptions.heartbeatTimeoutMs);
    // Whatever the lock thread would have reported is delivered now.
    await new Promise((resolve) => setTimeout(resolve, 2 * defaultWriterLockOptions.heartbeatMs));
    assert.equal(writer.lost.aborted, false);
    await withTransaction(t.db, (c) => writer.fence(c));
    const { rows } = await t.db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [held.lockPid]);
    assert.equal(rows.length, 1, "the lock's session is still open");
    await a.release();
  });

  it("a hung indexer's thread (silent for stallMs) loses the lock and a standby takes it", async () => {
    const stallMs = 1500;
    const a = createWriterLock({
      db: t.db,
      chainId: CHAIN,
      logger: createCapturingLogger().logger,
      options: { stallMs },
    });
    locks.push(a);
    const heldA = await a.acquire(new AbortController().signal);
    assert.ok(heldA);
    const writerA = await a.claim(t.db);
    busy(stallMs + 3 * defaultWriterLockOptions.heartbeatMs);
    await waitFor(() => writerA.lost.aborted, "the stalled writer is told", {
      timeoutMs: 5000,
      intervalMs: 10,
    });
    await assert.rejects(
      withTransaction(t.db, (c) => writerA.fence(c)),
      WriterLockLostError,
    );
    const b = lockOf(t.db);
    const heldB = await b.acquire(new AbortController().signal);
    assert.ok(heldB && heldB.lockPid !== heldA.lockPid);
    await b.release();
    await a.release();
  });
});
