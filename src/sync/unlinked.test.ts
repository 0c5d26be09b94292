import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type FlakyRpc, startFlakyRpc } from "../_test/flaky-rpc.js";
import { assertEqualsFreshIndex, type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { startIndexer } from "../_test/indexer-run.js";
import { type CapturedLog, createCapturingLogger } from "../_test/indexer-wait.js";
import { createApiServer } from "../api/server.js";
import { parseConfig } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { createRpcMetrics } from "../rpc/metrics.js";
import type { Db } from "../store/db.js";
import type { Indexer } from "./indexer.js";

/** How long the node serves unlinked headers in the first test. */
const UNLINKED_MS = 12_000;
/** The backoff of the test (the default is [250, 4000]): doubling from 200 ms, capped at 2 s. */
const DELAYS: [number, number] = [200, 2000];
const FAILOVER_AFTER = 4;
const REORG_WINDOW = 4;

type Ready = {
  status: number;
  body: { status: string; reasons: string[]; chains: Record<string, unknown>[] };
};

/** The most tries a backoff of DELAYS allows in `ms`: each wait is at least half its ceiling. */
function maxTries(ms: number): number {
  let tries = 1;
  let waited = 0;
  for (;;) {
    waited += Math.min(DELAYS[1], DELAYS[0] * 2 ** (tries - 1)) / 2;
    if (waited > ms) return tries;
    tries++;
  }
}

const inconsistentLines = (lines: CapturedLog[]) =>
  lines.filter((l) => l.level === 40 && typeof l.kind === "string" && /inconsistent/.test(l.msg));

describe("a node that answers unlinked headers (hardhat_mine's blocks, two backends behind one URL)", () => {
  let devnet: IndexerDevnet;
  let proxy: FlakyRpc;
  const dbs: TestDb[] = [];
  const indexers: Indexer[] = [];
  let app: FastifyInstance | undefined;
  const assertFresh = (db: Db, label: string) =>
    assertEqualsFreshIndex(db, devnet, label, devnet.chain({ reorgWindow: REORG_WINDOW }));

  before(async () => {
    devnet = await startIndexerDevnet({ historyDays: 0.1, seed: 23 });
    proxy = await startFlakyRpc({ target: devnet.rpcUrl, faults: {} });
  });
  after(async () => {
    await app?.close();
    await Promise.all(indexers.map((i) => i.stop()));
    await Promise.all([devnet?.stop(), proxy?.stop(), ...dbs.map((d) => d.drop())]);
  });

  it("backs off (bounded calls per minute), warns naming the block, /readyz 503 with the reason; healed: nothing lost or doubled", async (t) => {
    const testDb = await createTestDb();
    dbs.push(testDb);
    const { logger, lines } = createCapturingLogger("info");
    const rpcMetrics = createRpcMetrics();
    const chain = devnet.chain({ rpc: [proxy.url], reorgWindow: REORG_WINDOW, pollIntervalMs: 100 });
    const indexer = await startIndexer(testDb.db, chain, {
      logger,
      rpcMetrics,
      options: {
        inconsistentDelayMs: DELAYS,
        inconsistentFailoverAfter: FAILOVER_AFTER,
        restartDelayMs: [200, 2000],
      },
    });
    indexers.push(indexer);
    app = createApiServer({
      config: parseConfig({ devnet: { enabled: false }, chains: [chain] }),
      db: testDb.db,
      logger: createSilentLogger(),
      indexer,
      rpcMetrics,
      syncPollMs: 100,
    });
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const readyz = async (): Promise<Ready> => {
      const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) });
      return { status: response.status, body: (await response.json()) as Ready["body"] };
    };
    const until = async (condition: (r: Ready) => boolean, what: string, timeoutMs: number) => {
      const started = performance.now();
      let last: Ready | undefined;
      while (performance.now() - started < timeoutMs) {
        last = await readyz();
        if (condition(last)) return last;
        await delay(200);
      }
      throw new Error(`${what} not within ${timeoutMs} ms: ${JSON.stringify(last?.body)}`);
    };
    await until((r) => r.status === 200, "ready after the backfill", 120_000);

    // From the next block on, the node's headers do not link to their parents.
    const linkedHead = await devnet.head();
    proxy.setUnlinked({ from: linkedHead + 1 });
    const callsBefore = proxy.stats.calls;
    const warnsBefore = inconsistentLines(lines).length;
    const startedAt = performance.now();
    await devnet.mineSwaps({ blocks: 3, swapsPerBlock: 1, seed: 24 });
    const down = await until(
      (r) => r.status === 503 && /inconsistently/.test(r.body.reasons.join("; ")),
      "503 naming the inconsistent answers",
      UNLINKED_MS,
    );
    const reason = down.body.reasons.join("; ");
    assert.match(
      reason,
      new RegExp(`node of chain ${devnet.chainId} has answered inconsistently \\d+ times`),
    );
    assert.match(reason, new RegExp(`block ${linkedHead + 1}'s parent hash`));
    await delay(Math.max(0, UNLINKED_MS - (performance.now() - startedAt)));
    assert.equal((await readyz()).status, 503, "still not ready while the node contradicts itself");
    const elapsedMs = performance.now() - startedAt;
    const calls = proxy.stats.calls - callsBefore;
    const warns = inconsistentLines(lines).slice(warnsBefore);
    const callsPerMinute = (calls * 60_000) / elapsedMs;

    // Backoff: tries bounded by the doubling, capped waits; calls bounded per minute.
    assert.ok(warns.length >= 3, `retried (${warns.length} warnings)`);
    assert.ok(
      warns.length <= maxTries(elapsedMs),
      `${warns.length} tries in ${Math.round(elapsedMs)} ms: more than the backoff allows (${maxTries(elapsedMs)})`,
    );
    // A try is a handful of JSON-RPC calls (head, logs, headers, transactions, the stored window).
    assert.ok(callsPerMinute < 1500, `${Math.round(callsPerMinute)} JSON-RPC calls per minute`);
    const delays = warns.map((w) => w.retry_in_ms as number);
    assert.ok(
      delays.every((d) => d <= DELAYS[1]),
      `waits capped at ${DELAYS[1]} ms: ${delays}`,
    );
    const [warn] = warns;
    assert.ok(warn);
    assert.equal(warn.kind, "unlinked_header");
    assert.deepEqual(warn.blocks, [linkedHead, linkedHead + 1]);
    assert.equal(warn.rpc_host, new URL(proxy.url).host);
    assert.ok(
      !JSON.stringify(warns).includes(proxy.url),
      "the warning names the RPC host, never the whole URL",
    );
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const counted = metrics.match(
      /tokenmarket_rpc_inconsistent_answers_total\{chain_id="31337",kind="unlinked_header"\} (\d+)/,
    );
    assert.ok(counted && Number(counted[1]) >= warns.length, `counted in /metrics: ${counted?.[0]}`);

    // The node heals: indexing continues, ready again at the new head.
    proxy.setUnlinked(null);
    const healedAt = performance.now();
    await devnet.mineSwaps({ blocks: 2, swapsPerBlock: 1, seed: 25 });
    const head = await devnet.head();
    await until(
      (r) => r.status === 200 && r.body.chains[0]?.indexed_block === head,
      "ready again at the new head",
      DELAYS[1] + 15_000,
    );
    assert.ok(lines.some((l) => /consistent again/.test(l.msg)));
    await assertFresh(testDb.db, "after the unlinked headers");
    t.diagnostic(
      `unlinked headers for ${Math.round(elapsedMs)} ms: ${warns.length} tries (waits ${delays.join(", ")} ms), ${calls} JSON-RPC calls = ${Math.round(callsPerMinute)}/min; ready ${Math.round(performance.now() - healedAt)} ms after healing`,
    );
    await app.close();
    app = undefined;
    await indexer.stop();
  });

  it("with two RPC URLs, moves to the second after the bound when the first keeps answering unlinked headers, and catches up", async (t) => {
    const bad = await startFlakyRpc({ target: devnet.rpcUrl, faults: {}, unlinked: { from: 0 } });
    const good = await startFlakyRpc({ target: devnet.rpcUrl, faults: {} });
    try {
      const testDb = await createTestDb();
      dbs.push(testDb);
      const { logger, lines } = createCapturingLogger("info");
      const startedAt = performance.now();
      const indexer = await startIndexer(
        testDb.db,
        devnet.chain({ rpc: [bad.url, good.url], reorgWindow: REORG_WINDOW }),
        {
          logger,
          options: { follow: false, inconsistentDelayMs: DELAYS, inconsistentFailoverAfter: FAILOVER_AFTER },
        },
      );
      indexers.push(indexer);
      await Promise.race([
        indexer.done(),
        delay(90_000).then(() => {
          throw new Error("not caught up within 90 s");
        }),
      ]);
      const [status] = indexer.status();
      assert.equal(status?.phase, "stopped", `caught up and ended cleanly (${status?.error ?? "no error"})`);
      const moved = lines.find((l) => /trying the next RPC URL/.test(l.msg));
      assert.ok(moved, "a warning says the indexer moves to the next URL");
      assert.equal(moved.rpc_host, new URL(bad.url).host);
      assert.equal(moved.next_rpc_host, new URL(good.url).host);
      assert.equal(moved.attempt, FAILOVER_AFTER, "after the bound, not before");
      assert.ok(bad.stats.unlinked > 0 && good.stats.calls > 0);
      await assertFresh(testDb.db, "after moving to the second URL");
      t.diagnostic(
        `moved to the second URL after ${FAILOVER_AFTER} inconsistent answers; caught up in ${Math.round(performance.now() - startedAt)} ms (first URL: ${bad.stats.calls} calls, second: ${good.stats.calls})`,
      );
    } finally {
      await Promise.all([bad.stop(), good.stop()]);
    }
  });
});
