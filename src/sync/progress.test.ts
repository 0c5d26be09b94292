import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSilentLogger } from "../internal/logger.js";
import { createProgress } from "./progress.js";

describe("chain progress: the reason of a failure", () => {
  const progressOf = () =>
    createProgress({
      chainId: 1,
      name: "test",
      startBlock: 0,
      logger: createSilentLogger(),
      logIntervalMs: 60_000,
      bars: null,
    });

  it("is kept while the chain restarts, and cleared once it indexes again", () => {
    const progress = progressOf();
    progress.phase("backfill");
    progress.phase("backfill", "connect ECONNREFUSED 127.0.0.1:8545");
    for (const phase of ["starting", "scanning-factories"] as const) {
      progress.phase(phase);
      assert.equal(progress.status().error, "connect ECONNREFUSED 127.0.0.1:8545", `during ${phase}`);
    }
    progress.phase("following");
    assert.equal(progress.status().error, null);
  });

  it("is replaced by a newer one and cleared by an explicit null or a stop", () => {
    const progress = progressOf();
    progress.phase("starting", "first");
    progress.phase("starting", "second");
    assert.equal(progress.status().error, "second");
    progress.phase("starting", null);
    assert.equal(progress.status().error, null);
    progress.phase("starting", "third");
    progress.phase("stopped");
    assert.equal(progress.status().error, null);
  });
});
