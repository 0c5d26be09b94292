/**
 * The chain indexer's small pieces alone: the head's wait and its backwards check, the restart
 * policy, the writer slot. The loop they make up runs in indexer.test, reorg.test, failover.test.
 */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import pino from "pino";
import {
  DeepReorgError,
  GenesisMismatchError,
  InconsistentAnswerError,
  RetryableRpcError,
  WriterLockLostError,
} from "../internal/errors.js";
import { MethodNotSupportedError } from "../rpc/errors.js";
import { createHeadWait, headBehind } from "./head-wait.js";
import type { ChainStatus } from "./progress.js";
import { createRestarts, failureAction } from "./restart-policy.js";
import { createWriterSlot, type Writer } from "./writer-lock.js";

describe("the chain indexer's pieces", () => {
  it("head wait: ends at wake(), at the abort, or at its timeout; wake() without a wait is a no-op", async () => {
    const abort = new AbortController();
    const heads = createHeadWait(abort.signal);
    heads.wake();
    const order: string[] = [];
    const woken = heads.wait(3_600_000).then(() => order.push("woken"));
    heads.wake();
    await woken;
    await heads.wait(1).then(() => order.push("timed out"));
    const aborted = heads.wait(3_600_000).then(() => order.push("aborted"));
    abort.abort();
    await aborted;
    // Once aborted, a wait ends at once.
    await heads.wait(3_600_000).then(() => order.push("already aborted"));
    assert.deepEqual(order, ["woken", "timed out", "aborted", "already aborted"]);
  });

  it("head pause: a new head does not end it; its timeout or the abort does", async () => {
    const abort = new AbortController();
    const heads = createHeadWait(abort.signal);
    await heads.pause(1);
    let ended = false;
    const paused = heads.pause(3_600_000).then(() => {
      ended = true;
    });
    heads.wake();
    // A woken wait would have ended by the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ended, false, "a new head does not end the pause");
    abort.abort();
    await paused;
    assert.equal(ended, true, "the abort ends it");
  });

  it("a head behind the highest is inconsistent until the streak reaches the bound, then followed", () => {
    assert.equal(headBehind(10, 10, 0, 3), "ahead");
    assert.equal(headBehind(11, 10, 5, 3), "ahead");
    assert.equal(headBehind(9, 10, 0, 3), "inconsistent");
    assert.equal(headBehind(9, 10, 2, 3), "inconsistent");
    assert.equal(headBehind(9, 10, 3, 3), "follow");
    assert.equal(headBehind(5, -1, 0, 3), "ahead", "the first head of a run");
  });

  it("failure actions: standby, inconsistent, fatal, or a restart that probes again on a lost transaction source", () => {
    const auto = { source: "blockReceipts" as const, configured: "auto" as const };
    assert.deepEqual(failureAction(new WriterLockLostError("lost"), auto), { kind: "standby" });
    const inconsistent = new InconsistentAnswerError("head_backwards", [1, 2], "back");
    assert.deepEqual(failureAction(inconsistent, auto), { kind: "inconsistent", error: inconsistent });
    assert.deepEqual(failureAction(new DeepReorgError("deep"), auto), { kind: "fatal", message: "deep" });
    assert.deepEqual(failureAction(new GenesisMismatchError("other chain"), auto), {
      kind: "fatal",
      message: "other chain",
    });
    assert.deepEqual(failureAction(new RetryableRpcError("busy"), auto), {
      kind: "restart",
      message: "busy",
      reprobe: false,
    });
    assert.deepEqual(failureAction("a string", auto), {
      kind: "restart",
      message: "a string",
      reprobe: false,
    });
    const unserved = new MethodNotSupportedError("no", "eth_getBlockReceipts");
    assert.equal((failureAction(unserved, auto) as { reprobe: boolean }).reprobe, true);
    const restart = (
      source: typeof auto.source | null,
      configured: "auto" | "blockReceipts",
      method: string,
    ) =>
      (
        failureAction(new MethodNotSupportedError("no", method), { source, configured }) as {
          reprobe: boolean;
        }
      ).reprobe;
    assert.equal(
      restart("blockReceipts", "blockReceipts", "eth_getBlockReceipts"),
      false,
      "a configured source stays",
    );
    assert.equal(restart(null, "auto", "eth_getBlockReceipts"), false, "not probed yet");
    assert.equal(restart("blockReceipts", "auto", "eth_getTransactionByHash"), false, "another method");
  });

  it("restarts: back off with the failures in a row (reset by work that succeeded); stop on a fatal error", async () => {
    const phases: (string | undefined)[] = [];
    let forgotten = 0;
    let stoodBy = 0;
    const waited: InconsistentAnswerError[] = [];
    const lines: { msg: string; failures?: number }[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const restarts = createRestarts({
      logger,
      progress: {
        phase: (phase, error) => {
          phases.push(`${phase}${error ? `: ${error}` : ""}`);
        },
        status: () => ({ phase: "backfill" }) as ChainStatus,
      },
      node: { source: () => "blockReceipts", forget: () => forgotten++ },
      rpcHost: () => "node",
      configured: "auto",
      // No wait: the backoff's figures are backoff.ts's own (internal/backoff.test).
      restartDelayMs: [0, 0],
      signal: new AbortController().signal,
      standby: async () => {
        stoodBy++;
      },
      onInconsistent: async (error) => {
        waited.push(error);
      },
    });
    assert.equal(await restarts.after(new RetryableRpcError("busy")), true);
    assert.equal(await restarts.after(new MethodNotSupportedError("gone", "eth_getBlockReceipts")), true);
    assert.equal(forgotten, 1);
    assert.equal(await restarts.after(new WriterLockLostError("lost")), true);
    assert.equal(stoodBy, 1);
    const inconsistent = new InconsistentAnswerError("head_backwards", [1, 2], "back");
    assert.equal(await restarts.after(inconsistent), true);
    assert.deepEqual(waited, [inconsistent]);
    restarts.reset();
    assert.equal(await restarts.after(new RetryableRpcError("busy again")), true);
    assert.equal(await restarts.after(new DeepReorgError("too deep")), false);
    assert.deepEqual(phases, [
      "backfill: busy",
      "backfill: gone",
      "backfill: busy again",
      "failed: too deep",
    ]);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.failures]),
      [
        ["chain indexing failed; restarting from the checkpoint", 1],
        ["the node does not serve the transaction source's method; probing again at the restart", undefined],
        ["chain indexing failed; restarting from the checkpoint", 2],
        ["no longer the chain's writer; standing by", undefined],
        ["chain indexing failed; restarting from the checkpoint", 1],
        ["indexing of this chain stops", undefined],
      ],
    );
  });

  it("writer slot: the fence and the checks refuse without a writer or with a lost one", async () => {
    const slot = createWriterSlot(7);
    assert.equal(slot.lost(), true);
    assert.throws(() => slot.throwIfLost(), new WriterLockLostError("chain 7: writer lock lost"));
    await assert.rejects(slot.fence({} as never), new WriterLockLostError("chain 7: no writer lock"));
    const lost = new AbortController();
    let fenced = 0;
    const writer: Writer = {
      chainId: 7,
      epoch: 1,
      lockPid: 1,
      lost: lost.signal,
      fence: async () => {
        fenced++;
      },
    };
    slot.current = writer;
    assert.equal(slot.lost(), false);
    slot.throwIfLost();
    await slot.fence({} as never);
    assert.equal(fenced, 1);
    lost.abort();
    assert.equal(slot.lost(), true);
    assert.throws(() => slot.throwIfLost(), WriterLockLostError);
  });
});
