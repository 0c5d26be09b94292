import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type ScriptedCall, type ScriptedNode, startScriptedNode } from "../_test/rpc-nodes.js";
import type { Hex } from "../decode/types.js";
import { BaseError, RangeTooLargeError, RetryableRpcError } from "../internal/errors.js";
import { createSilentLogger } from "../internal/logger.js";
import { createRpcClient } from "./client.js";
import { createRpcMetrics } from "./metrics.js";

// viem refuses HTTP answers over 10 MB. The node below answers eth_getLogs with 12 MB over more
// than 10 blocks, each eth_call with 400 kB (a batch of 40 is 16 MB), and BIG's eth_call with 11 MB.
const MB = 1_000_000;
const BIG = "0x00000000000000000000000000000000000000b1" as Hex;
const callAnswer = (bytes: number): Hex => `0x${"ab".repeat(bytes / 2)}`;
const logOf = (block: number, index: number) => ({
  address: "0x00000000000000000000000000000000000000aa",
  topics: [`0x${"11".repeat(32)}`],
  data: `0x${"00".repeat(1000)}`,
  blockNumber: `0x${block.toString(16)}`,
  blockHash: `0x${block.toString(16).padStart(64, "0")}`,
  transactionHash: `0x${index.toString(16).padStart(64, "0")}`,
  transactionIndex: "0x0",
  logIndex: `0x${index.toString(16)}`,
  removed: false,
});

const receiptOf = (block: number, index: number) => ({
  transactionHash: `0x${(block * 1000 + index).toString(16).padStart(64, "0")}`,
  transactionIndex: `0x${index.toString(16)}`,
  blockHash: `0x${block.toString(16).padStart(64, "0")}`,
  blockNumber: `0x${block.toString(16)}`,
  from: `0x${"0a".repeat(20)}`,
  to: `0x${"0b".repeat(20)}`,
  logs: [],
  logsBloom: `0x${"00".repeat(100_000)}`,
});

function answer(call: ScriptedCall): unknown {
  if (call.method === "eth_getLogs") {
    const [{ fromBlock, toBlock }] = call.params as [{ fromBlock: Hex; toBlock: Hex }];
    const blocks = Number(toBlock) - Number(fromBlock) + 1;
    const count = blocks > 10 ? 6000 : 10; // 6000 logs of ~2 kB: 12 MB
    return Array.from({ length: count }, (_, i) => logOf(Number(fromBlock), i));
  }
  if (call.method === "eth_call") {
    const [{ to }] = call.params as [{ to: Hex }];
    return callAnswer(to === BIG ? 11 * MB : 400_000);
  }
  if (call.method === "eth_chainId") return "0x1";
  if (call.method === "eth_getBlockReceipts") {
    // Block 13's receipts are 11 MB on their own; the others about 200 kB each.
    const block = Number((call.params as [Hex])[0]);
    const [first, ...rest] = Array.from({ length: block === 13 ? 55 : 1 }, (_, i) => receiptOf(block, i));
    return [
      {
        ...first,
        logs: [{ ...logOf(block, 0), blockTimestamp: `0x${(1_700_000_000 + block).toString(16)}` }],
      },
      ...rest,
    ];
  }
  throw { code: -32601, message: "method not found" };
}

describe("RPC client: answers over the response-size cap", { timeout: 120_000 }, () => {
  let node: ScriptedNode;
  const logger = createSilentLogger();
  before(async () => {
    node = await startScriptedNode(answer);
  });
  after(async () => {
    await node?.stop();
  });

  const clientOf = () => {
    const metrics = createRpcMetrics();
    const rpc = createRpcClient({
      chain: { id: 1, rpc: [node.url], ws: undefined },
      logger,
      metrics,
      options: { baseDelayMs: 10, maxDelayMs: 50 },
    });
    return { rpc, metrics };
  };
  const tokenCalls = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      to: `0x${(i + 1).toString(16).padStart(40, "0")}` as Hex,
      data: "0x313ce567" as Hex, // decimals()
    }));

  it("never batches eth_getLogs with other calls: a too-large log answer fails only eth_getLogs, as a range error", async () => {
    const { rpc } = clientOf();
    const before = node.requests().length;
    // What the indexer does: the next range's logs while it reads the current range's tokens.
    const [logs, calls] = await Promise.allSettled([
      rpc.getLogs({ fromBlock: 100, toBlock: 199, topic0: [`0x${"11".repeat(32)}`] }),
      rpc.calls(tokenCalls(4), 99),
    ]);
    assert.equal(logs.status, "rejected");
    assert.ok(
      (logs as PromiseRejectedResult).reason instanceof RangeTooLargeError,
      "the caller halves the range",
    );
    assert.equal(calls.status, "fulfilled", "the eth_calls are not failed by the logs' size");
    assert.deepEqual((calls as PromiseFulfilledResult<unknown[]>).value, Array(4).fill(callAnswer(400_000)));
    const requests = node.requests().slice(before);
    for (const r of requests) {
      if (r.calls.some((c) => c.method === "eth_getLogs")) {
        assert.equal(r.calls.length, 1, "eth_getLogs alone in its HTTP request");
        assert.equal(r.batch, false);
      }
    }
    assert.equal(
      requests.filter((r) => r.calls.some((c) => c.method === "eth_getLogs")).length,
      1,
      "not retried",
    );

    const small = await rpc.getLogs({ fromBlock: 100, toBlock: 109, topic0: [`0x${"11".repeat(32)}`] });
    assert.equal(small.length, 10, "a smaller range is answered");
  });

  it("retries the calls of a too-large batch each on its own, a few at a time, and counts them", async () => {
    const { rpc, metrics } = clientOf();
    const before = node.requests().length;
    const results = await rpc.calls(tokenCalls(40), 99);
    assert.deepEqual(results, Array(40).fill(callAnswer(400_000)));
    const requests = node.requests().slice(before);
    assert.equal(requests[0]?.calls.length, 40, "first one batch of 40 (16 MB: over the cap)");
    const alone = requests.slice(1);
    assert.equal(alone.length, 40, "then each call alone");
    assert.ok(alone.every((r) => !r.batch && r.calls.length === 1));
    assert.ok(node.maxInFlight() <= 8, `at most 8 alone at once (${node.maxInFlight()})`);
    assert.equal(rpc.stats().retries, 1, "one retry wave");
    assert.equal(rpc.stats().failovers, 0);
    const text = await metrics.registry.metrics();
    assert.match(text, /tokenmarket_rpc_errors_total\{[^}]*kind="response_too_large"[^}]*\} 40/);
  });

  it("reads block receipts in batches of blockBatchSize; receipts over the cap alone are a null, read another way", async () => {
    const { rpc } = clientOf();
    const before = node.requests().length;
    const numbers = Array.from({ length: 13 }, (_, i) => i + 1);
    const wanted = new Set(numbers.map((n) => `0x${(n * 1000).toString(16).padStart(64, "0")}`));
    const answers = await rpc.getBlockReceipts(numbers, (hash) => wanted.has(hash));
    assert.equal(answers[12], null, "block 13: 11 MB even alone");
    for (const n of numbers.slice(0, 12)) {
      const answer = answers[n - 1];
      assert.equal(answer?.number, n);
      assert.equal(answer?.hash, `0x${n.toString(16).padStart(64, "0")}`);
      assert.equal(answer?.timestamp, 1_700_000_000 + n, "the time from the logs' blockTimestamp");
      assert.deepEqual(
        answer?.transactions.map((t) => [t.hash, t.from, t.to, t.blockNumber]),
        [
          [
            `0x${(n * 1000).toString(16).padStart(64, "0")}`,
            `0x${"0a".repeat(20)}`,
            `0x${"0b".repeat(20)}`,
            n,
          ],
        ],
      );
    }
    const batches = node
      .requests()
      .slice(before)
      .filter((r) => r.batch);
    assert.ok(batches.length >= 2, "more than one batch");
    assert.ok(
      batches.every((r) => r.calls.length <= 5),
      `at most blockBatchSize (5) a batch: ${batches.map((r) => r.calls.length)}`,
    );
  });

  it("gives up at once, not retryable, on a call whose answer alone is over the cap", async () => {
    const { rpc } = clientOf();
    const before = node.requests().length;
    const failure = await rpc.calls([{ to: BIG, data: "0x06fdde03" }, ...tokenCalls(2)], 99).then(
      () => assert.fail("answered"),
      (error: unknown) => error,
    );
    assert.ok(failure instanceof BaseError && !(failure instanceof RetryableRpcError), String(failure));
    assert.match((failure as Error).message, /sent alone/);
    const requests = node.requests().slice(before);
    assert.equal(requests.length, 4, "the batch, then the three calls alone; no further retries");
  });
});
