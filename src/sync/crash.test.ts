import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSameDump, dumpCounts, dumpIndexedData } from "../_test/indexer-dump.js";
import { createSilentLogger } from "../internal/logger.js";
import { noDerivedData } from "./derived.js";
import { createIndexer } from "./indexer.js";
import type { IndexerOptions } from "./options.js";

const childScript = path.resolve(import.meta.dirname, "../_test/indexer-child.ts");
/** Small ranges: many batches, so that the kills land at many different points of the backfill. */
const chainOverrides = { maxBlockRange: 3, reorgWindow: 16 };
const options: Partial<IndexerOptions> = { initialBlockRange: 1, progressBar: false };

type ChildRun = { exitCode: number | null; signal: NodeJS.Signals | null; batches: number };

type Kill = { afterBatches: number; delayMs: number };

/**
 * Runs the indexer in a child process; with `kill`, SIGKILLs it `delayMs` after its
 * `afterBatches`-th committed batch: every run makes some progress, and the kill lands anywhere
 * in the next batch (fetching, preparing or committing).
 */
function runChild(input: unknown, kill: Kill | null): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", childScript], {
      env: { ...process.env, TOKENMARKET_INDEXER_CHILD: JSON.stringify(input) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let batches = 0;
    let timer: NodeJS.Timeout | undefined;
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (!line.includes('"batch committed"')) return;
      batches++;
      if (kill && batches === kill.afterBatches)
        timer = setTimeout(() => child.kill("SIGKILL"), kill.delayMs);
    });
    child.once("error", reject);
    child.once("exit", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, batches });
    });
  });
}

describe("crash safety", () => {
  let devnet: IndexerDevnet;
  let clean: TestDb;
  let crashed: TestDb;

  before(async () => {
    [devnet, clean, crashed] = await Promise.all([
      startIndexerDevnet({ historyDays: 1, seed: 21 }),
      createTestDb(),
      createTestDb(),
    ]);
  });
  after(async () => {
    await Promise.all([devnet?.stop(), clean?.drop(), crashed?.drop()]);
  });

  it("a backfill SIGKILLed at random moments and restarted each time ends identical to an uninterrupted run", async (t) => {
    const chain = devnet.chain(chainOverrides);
    const indexer = createIndexer({
      config: { chains: [chain] },
      db: clean.db,
      logger: createSilentLogger(),
      derived: noDerivedData,
      options: { ...options, follow: false },
    });
    await indexer.start();
    await indexer.done();
    const expected = await dumpIndexedData(clean.db, [devnet.chainId]);

    const input = { databaseUrl: crashed.url, chains: [chain], options };
    const kills: (Kill & { batches: number })[] = [];
    for (let run = 0; ; run++) {
      // Runs restart at one-block ranges: 1 to 4 batches are a few blocks, far from the end.
      const kill =
        run < 6
          ? { afterBatches: 1 + Math.floor(Math.random() * 4), delayMs: Math.floor(Math.random() * 30) }
          : null;
      const result = await runChild(input, kill);
      if (result.signal === "SIGKILL" && kill) {
        kills.push({ ...kill, batches: result.batches });
        continue;
      }
      assert.equal(result.exitCode, 0, `the last run ends cleanly (after kills ${JSON.stringify(kills)})`);
      break;
    }
    assert.ok(kills.length >= 5, `killed at least five times (${JSON.stringify(kills)})`);
    const actual = await dumpIndexedData(crashed.db, [devnet.chainId]);
    t.diagnostic(
      `${kills.length} SIGKILLs (after which batch, ms into the next, batches committed): ${JSON.stringify(kills)}; rows ${JSON.stringify(dumpCounts(actual))}`,
    );
    assertSameDump(actual, expected, `after ${kills.length} SIGKILLs ${JSON.stringify(kills)}`);
    // The whole history was at stake (its own count: how busy the simulated hours were varies
    // with the hour and weekday they fall on).
    const swaps = dumpCounts(actual).swaps ?? 0;
    assert.ok(
      devnet.history.swaps > 0 && swaps >= devnet.history.swaps,
      `${swaps} swaps stored, the history's ${devnet.history.swaps} among them`,
    );
  });
});
