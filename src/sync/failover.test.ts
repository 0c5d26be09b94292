import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSameDump, dumpCounts, dumpIndexedData } from "../_test/indexer-dump.js";
import { indexOnce } from "../_test/indexer-run.js";
import { waitFor } from "../_test/indexer-wait.js";
import { seededRandom } from "../_test/random.js";
import { snapshotAggregates } from "../_test/sql.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { WRITER_LOCK_NAMESPACE } from "../store/writer-lock.js";
import type { IndexerOptions } from "./options.js";

const childScript = path.resolve(import.meta.dirname, "../_test/pricing-indexer-child.ts");
/** Small ranges: many batches, so that the kills land anywhere in fetching, preparing or committing. */
const chainOverrides = { maxBlockRange: 4, reorgWindow: 16 };
const options: Partial<IndexerOptions> = { initialBlockRange: 1, progressBar: false };
const pricingOptions = { liquidityFloorUsd: 10_000, maxDeviation: 0.1 };
const KILLS = 5;
const TAKEOVER_LIMIT_MS = 10_000;

type Line = { at: number; level: number; msg: string } & Record<string, unknown>;

type Child = {
  name: string;
  proc: ChildProcess;
  lines: Line[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The time of the first line from `index` on whose msg starts with `msg`. */
  find(msg: string, from?: number): Line | undefined;
};

function startChild(name: string, input: unknown): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", childScript], {
    env: { ...process.env, TOKENMARKET_PRICING_CHILD: JSON.stringify(input) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: Line[] = [];
  createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on("line", (text) => {
    try {
      lines.push({ ...(JSON.parse(text) as Line), at: Date.now() });
    } catch {
      lines.push({ at: Date.now(), level: 50, msg: `not JSON: ${text}` });
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    name,
    proc,
    lines,
    exited,
    find: (msg, from = 0) => lines.slice(from).find((l) => l.msg.startsWith(msg)),
  };
}

describe("one writer per chain", () => {
  let devnet: IndexerDevnet;
  let shared: TestDb;
  let fresh: TestDb;
  const children: Child[] = [];

  before(async () => {
    [devnet, shared, fresh] = await Promise.all([
      startIndexerDevnet({ historyDays: 1, seed: 33 }),
      createTestDb(),
      createTestDb(),
    ]);
    // An observer of every checkpoint move, inside the moving transaction: which writer epoch
    // moved it, and whether that writer's lock backend held the chain's lock at that moment. The
    // sequence is drawn under the sync_state row lock, so its order is the commit order.
    await shared.db.query(`
      CREATE TABLE checkpoint_moves (
        id bigserial PRIMARY KEY, previous bigint, indexed_block bigint, writer_epoch bigint,
        writer_lock_pid integer, lock_held boolean);
      CREATE FUNCTION record_checkpoint_move() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.indexed_block IS DISTINCT FROM OLD.indexed_block THEN
          INSERT INTO checkpoint_moves (previous, indexed_block, writer_epoch, writer_lock_pid, lock_held)
          VALUES (OLD.indexed_block, NEW.indexed_block, NEW.writer_epoch, NEW.writer_lock_pid,
            EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory'
              AND l.classid = ${WRITER_LOCK_NAMESPACE} AND l.objid = NEW.chain_id AND l.objsubid = 2
              AND l.pid = NEW.writer_lock_pid AND l.granted));
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER record_checkpoint_move AFTER UPDATE ON sync_state
        FOR EACH ROW EXECUTE FUNCTION record_checkpoint_move();`);
  });
  after(async () => {
    for (const child of children) child.proc.kill("SIGKILL");
    await Promise.all([devnet?.stop(), shared?.drop(), fresh?.drop()]);
  });

  it(`the standby takes over within ${TAKEOVER_LIMIT_MS / 1000} s of each of ${KILLS} SIGKILLs of the active indexer, never two write, and the chain ends equal to a fresh index`, async (t) => {
    const chain = devnet.chain(chainOverrides);
    const random = seededRandom(5);
    const nowMs = ((await devnet.devnet.latestBlock()).timestamp + 6 * 3600) * 1000;
    const input = {
      databaseUrl: shared.url,
      chains: [chain],
      pricing: pricingOptions,
      nowMs,
      follow: true,
      options,
    };
    let started = 0;
    const launch = () => {
      const child = startChild(`indexer-${++started}`, input);
      children.push(child);
      return child;
    };

    let active = launch();
    await waitFor(() => active.find("writer lock taken") !== undefined, "the first indexer takes the lock");
    let standby = launch();
    await waitFor(() => standby.find("standby for chain") !== undefined, "the second indexer stands by");

    // The simulator trades on: one block of swaps after another until the kills are over.
    let mining = true;
    let minedBlocks = 0;
    const miner = (async () => {
      for (let seed = 1; mining; seed++) {
        await devnet.mineSwaps({ blocks: 1, swapsPerBlock: 2, seed });
        minedBlocks++;
        // About five blocks a second: a lively chain that the final comparison can still index quickly.
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();

    const takeovers: {
      killedAfterBatches: number;
      delayMs: number;
      lockMs: number;
      firstCommitMs: number;
    }[] = [];
    try {
      for (let kill = 0; kill < KILLS; kill++) {
        // Kill after 1 to 4 of its batches and a random few ms into the next.
        const taken = active.lines.findIndex((l) => l.msg.startsWith("writer lock taken"));
        const afterBatches = 1 + Math.floor(random() * 4);
        await waitFor(
          () => active.lines.slice(taken).filter((l) => l.msg === "batch committed").length >= afterBatches,
          `${active.name} commits ${afterBatches} batches`,
          { timeoutMs: 60_000, intervalMs: 5 },
        );
        const delayMs = Math.floor(random() * 200);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const from = standby.lines.length;
        const killedAt = Date.now();
        active.proc.kill("SIGKILL");
        assert.equal((await active.exited).signal, "SIGKILL");
        await waitFor(
          () => standby.find("batch committed", from) !== undefined,
          `${standby.name} takes over and commits`,
          { timeoutMs: TAKEOVER_LIMIT_MS, intervalMs: 5 },
        );
        takeovers.push({
          killedAfterBatches: afterBatches,
          delayMs,
          lockMs: (standby.find("writer lock taken", from) as Line).at - killedAt,
          firstCommitMs: (standby.find("batch committed", from) as Line).at - killedAt,
        });
        // The killed one comes back, as the new standby.
        active = standby;
        standby = launch();
        await waitFor(() => standby.find("standby for chain") !== undefined, `${standby.name} stands by`);
      }
    } finally {
      mining = false;
      await miner;
    }

    const head = await devnet.head();
    await waitFor(
      async () =>
        (await shared.db.query("SELECT indexed_block FROM sync_state WHERE chain_id = $1", [devnet.chainId]))
          .rows[0]?.indexed_block === head,
      "the active indexer reaches the head",
    );
    for (const child of [active, standby]) child.proc.kill("SIGTERM");
    for (const child of [active, standby])
      assert.equal((await child.exited).code, 0, `${child.name} stops cleanly`);

    t.diagnostic(
      `takeovers after SIGKILL (ms to the lock, ms to the first commit): ${JSON.stringify(takeovers)}; ${minedBlocks} blocks mined meanwhile`,
    );
    for (const [i, takeover] of takeovers.entries()) {
      assert.ok(
        takeover.firstCommitMs < TAKEOVER_LIMIT_MS,
        `takeover ${i + 1} in ${takeover.firstCommitMs} ms`,
      );
    }

    // Quiet standbys: one info line each time, never an error line from anyone.
    for (const child of children) {
      const errors = child.lines.filter((l) => l.level >= 50);
      assert.deepEqual(errors, [], `${child.name} logged no error lines`);
      assert.ok(
        child.lines.filter((l) => l.msg.startsWith("standby for chain")).length <= 1,
        `${child.name} announced its standby once`,
      );
    }

    // Never two writers: every checkpoint move was made by the lock's holder, contiguous from the
    // previous move, and the epochs only ever increase (no commit of a superseded writer).
    const { rows: moves } = await shared.db.query<{
      previous: number;
      indexed_block: number;
      writer_epoch: number | null;
      writer_lock_pid: number | null;
      lock_held: boolean;
    }>(
      "SELECT previous, indexed_block, writer_epoch, writer_lock_pid, lock_held FROM checkpoint_moves ORDER BY id",
    );
    assert.ok(moves.length > KILLS, `a commit of each writer at least (${moves.length})`);
    for (const [i, move] of moves.entries()) {
      assert.ok(
        move.lock_held,
        `move ${i} (${JSON.stringify(move)}) was made while its writer held the lock`,
      );
      const prev = moves[i - 1];
      if (!prev) continue;
      assert.equal(move.previous, prev.indexed_block, `move ${i} continues move ${i - 1}`);
      assert.ok((move.writer_epoch ?? 0) >= (prev.writer_epoch ?? 0), `move ${i}: epochs never go back`);
    }
    const epochs = new Set(moves.map((m) => m.writer_epoch));
    assert.ok(epochs.size >= KILLS + 1, `${epochs.size} writers committed, one after the other`);
    assert.equal(
      new Set(moves.map((m) => m.writer_lock_pid)).size,
      epochs.size,
      "one lock backend per epoch",
    );

    // The same chain indexed once, without interruption.
    const pricing = createPricing({
      config: { pricing: pricingOptions, chains: [chain] },
      logger: createSilentLogger(),
      now: () => new Date(nowMs),
    });
    await indexOnce(fresh.db, chain, { derived: pricing, options });
    const actual = await dumpIndexedData(shared.db, [devnet.chainId]);
    assertSameDump(actual, await dumpIndexedData(fresh.db, [devnet.chainId]), `after ${KILLS} failovers`);
    assert.deepEqual(
      await snapshotAggregates(shared.db, devnet.chainId),
      await snapshotAggregates(fresh.db, devnet.chainId),
      "derived data equal to a fresh index",
    );
    t.diagnostic(`rows ${JSON.stringify(dumpCounts(actual))}`);
    // The whole history was at stake (its own count: how busy the simulated hours were varies
    // with the hour and weekday they fall on).
    const swaps = dumpCounts(actual).swaps ?? 0;
    assert.ok(
      devnet.history.swaps > 0 && swaps >= devnet.history.swaps,
      `${swaps} swaps stored, the history's ${devnet.history.swaps} among them`,
    );
  });
});
