import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCapturingLogger } from "../_test/indexer-wait.js";
import { InconsistentAnswerError } from "../internal/errors.js";
import { createRpcClient } from "../rpc/client.js";
import { createRpcMetrics } from "../rpc/metrics.js";
import { createInconsistencyBackoff } from "./inconsistency.js";
import { createProgress } from "./progress.js";

describe("inconsistent answers' backoff", () => {
  it("backs off doubling, fails over every failoverAfter in a row, and starts again after a consistent answer", async () => {
    const { logger, lines } = createCapturingLogger();
    const rpc = createRpcClient({
      chain: { id: 31337, rpc: ["http://one.example:8545/KEY", "http://two.example:8545/KEY"] },
      logger,
    });
    const metrics = createRpcMetrics();
    const progress = createProgress({
      chainId: 31337,
      name: "Devnet",
      startBlock: 0,
      logger,
      logIntervalMs: 60_000,
      bars: null,
    });
    const backoff = createInconsistencyBackoff({
      rpc,
      chainId: 31337,
      logger,
      metrics,
      progress,
      delayMs: [1, 8],
      failoverAfter: 3,
    });
    const error = new InconsistentAnswerError(
      "unlinked_header",
      [10, 11],
      "block 11 does not link to block 10",
    );
    for (let i = 0; i < 4; i++) await backoff.onInconsistent(error);
    assert.equal(backoff.streak(), 4);
    const warnings = lines.filter((l) => l.level === 40);
    assert.deepEqual(
      warnings.map((l) => [l.attempt, l.rpc_host, l.next_rpc_host]),
      [
        [1, "one.example:8545", undefined],
        [2, "one.example:8545", undefined],
        [3, "one.example:8545", "two.example:8545"],
        [4, "two.example:8545", undefined],
      ],
      "the third in a row moves to the next URL; hosts only, never the URL",
    );
    for (const l of warnings) assert.ok((l.retry_in_ms as number) <= 8, "within the delay bound");
    assert.equal(progress.status().inconsistent?.count, 4, "shown to readiness");
    assert.match(
      await metrics.registry.metrics(),
      /tokenmarket_rpc_inconsistent_answers_total\{chain_id="31337",kind="unlinked_header"\} 4/,
    );
    backoff.consistent();
    assert.equal(backoff.streak(), 0);
    assert.equal(progress.status().inconsistent, null, "readiness no longer shows it");
    assert.equal(lines.at(-1)?.msg, "the node's answers are consistent again");
    backoff.consistent();
    assert.equal(
      lines.filter((l) => l.msg === "the node's answers are consistent again").length,
      1,
      "said once",
    );
    await rpc.close();
  });
});
