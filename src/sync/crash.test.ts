import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type Kill, runIndexerChild as runChild } from "../_test/indexer-crash.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { assertSameDump, dumpCounts, dumpIndexedData } from "../_test/indexer-dump.js";
import { indexOnce } from "../_test/indexer-run.js";
import type { IndexerOptions } from "./options.js";

/** Small ranges: many batches, so that the kills land at many different points of the backfill. */
const chainOverrides = { maxBlockRange: 3, reorgWindow: 16 };
const options: Partial<IndexerOptions> = { initialBlockRange: 1, progressBar: false };

describe("crash safety", () => {
  let devnet: IndexerDevnet;
  let clean: TestDb;
  let crashed: TestDb;

  before(async () => {
    [devnet, clean, crashed] = await Promise.all([
      // Every family's pools (the V4 PoolManager's and the Algebra factory's too): their creation
      // (Initialize, Pool) is in the first blocks, where the kills land.
      startIndexerDevnet({ historyDays: 1, seed: 21, allFamilies: true }),
      createTestDb(),
      createTestDb(),
    ]);
  });
  after(async () => {
    await Promise.all([devnet?.stop(), clean?.drop(), crashed?.drop()]);
  });

  it("a backfill SIGKILLed at random moments and restarted each time ends identical to an uninterrupted run", async (t) => {
    const chain = devnet.chain(chainOverrides);
    await indexOnce(clean.db, chain, { options });
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
    const { rows } = await crashed.db.query<{ key: string }>(
      `SELECT DISTINCT p.protocol || ':' || e.kind AS key FROM pool_events e
         JOIN pools p ON p.chain_id = e.chain_id AND p.address = e.pool
        WHERE e.chain_id = $1 AND p.protocol IN ('v4', 'algebra') ORDER BY 1`,
      [devnet.chainId],
    );
    const kinds = rows.map((r) => r.key);
    for (const key of ["algebra:initialize", "algebra:mint", "v4:initialize", "v4:mint"])
      assert.ok(kinds.includes(key), `${key} among the V4 and Algebra pool events (${kinds.join(", ")})`);
  });
});
