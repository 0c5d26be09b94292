import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeFunctionResult, encodeFunctionData, erc20Abi } from "viem";
import { startTestDevnet, type TestDevnet } from "../_test/devnet.js";
import { installMulticall3, type SilentNode, startSilentNode } from "../_test/rpc-nodes.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import { createRpcClient, MULTICALL3 } from "./client.js";
import { RpcTimeoutError } from "./errors.js";
import { createRpcMetrics, type RpcMetrics } from "./metrics.js";

/** The value of one sample of /metrics text, 0 when absent. */
async function sample(metrics: RpcMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  for (const line of (await metrics.registry.metrics()).split("\n")) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] as string).split(",").sort();
    if (wanted.every((w) => have.includes(w)) && have.length === wanted.length) return Number(match[3]);
  }
  return 0;
}

describe("RPC client: calls, multicall, balances, deadlines, metrics", { timeout: 120_000 }, () => {
  let devnet: TestDevnet;
  let silent: SilentNode;
  const logger = createSilentLogger();

  before(async () => {
    [devnet, silent] = await Promise.all([startTestDevnet(), startSilentNode()]);
    await installMulticall3(devnet.rpc);
  });
  after(async () => {
    await silent?.stop();
    await devnet?.stop();
  });

  const chainOf = (rpc: string[]) => ({ id: devnet.chainId, rpc, ws: undefined });
  const balanceCall = (token: Hex, owner: Hex) => ({
    to: token,
    data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [owner] }),
  });

  it("reads balanceOf through eth_call batches and through Multicall3 alike, and native balances", async () => {
    const metrics = createRpcMetrics();
    const rpc = createRpcClient({ chain: chainOf([devnet.rpcUrl]), logger, metrics });
    const usdc = devnet.token("USDC") as Hex;
    const wallets = devnet.wallets.slice(0, 4) as Hex[];
    const head = await rpc.getBlockNumber();
    // A factory has no balanceOf: that call fails on its own, the others still answer.
    const calls = [
      ...wallets.map((w) => balanceCall(usdc, w)),
      balanceCall(devnet.deployment.v2.factory, usdc),
    ];

    const before = await sample(metrics, "tokenmarket_rpc_calls_total", {
      chain_id: "31337",
      method: "eth_call",
    });
    const batched = await rpc.calls(calls, head);
    const afterBatch = await sample(metrics, "tokenmarket_rpc_calls_total", {
      chain_id: "31337",
      method: "eth_call",
    });
    const viaMulticall = await rpc.multicall(calls, head);
    const afterMulticall = await sample(metrics, "tokenmarket_rpc_calls_total", {
      chain_id: "31337",
      method: "eth_call",
    });

    const expected = await Promise.all(wallets.map((w) => devnet.balanceOf("USDC", w)));
    const decode = (data: Hex | null | undefined) =>
      data ? decodeFunctionResult({ abi: erc20Abi, functionName: "balanceOf", data }) : null;
    assert.ok(expected.every((b) => b > 0n));
    assert.deepEqual(batched.map(decode), [...expected, null]);
    assert.deepEqual(viaMulticall.map(decode), [...expected, null]);
    assert.equal(afterBatch - before, calls.length, "one eth_call per call in the batch");
    assert.equal(afterMulticall - afterBatch, 1, "Multicall3: one eth_call for all of them");
    assert.equal(
      await sample(metrics, "tokenmarket_rpc_errors_total", {
        chain_id: "31337",
        method: "eth_call",
        kind: "reverted",
      }),
      1,
    );

    assert.notEqual(await rpc.getCode(MULTICALL3, "latest"), "0x");
    const native = await devnet.rpc.request<string>("eth_getBalance", [wallets[0], "latest"]);
    assert.equal(await rpc.getBalance(wallets[0] as Hex, "latest"), BigInt(native));
    assert.ok(BigInt(native) > 0n);
  });

  it("ends a call at its deadline when the node never answers, and counts the timeout", async () => {
    const metrics = createRpcMetrics();
    // Per HTTP request the client would wait 15 s and retry 8 times: the call's deadline wins.
    const rpc = createRpcClient({ chain: chainOf([silent.url]), logger, metrics });
    const started = performance.now();
    await assert.rejects(rpc.getBlockNumber({ timeoutMs: 1000 }), RpcTimeoutError);
    const elapsed = performance.now() - started;
    // Not before the deadline; the upper bound is 5× it (a loaded machine), where without the
    // deadline it would be minutes.
    assert.ok(elapsed >= 950 && elapsed < 5 * 1000, `answered after ${elapsed} ms`);
    assert.ok(silent.connections() > 0, "the silent node was asked");
    const labels = { chain_id: "31337", method: "eth_blockNumber" };
    assert.equal(await sample(metrics, "tokenmarket_rpc_errors_total", { ...labels, kind: "timeout" }), 1);
    assert.equal(await sample(metrics, "tokenmarket_rpc_calls_total", labels), 1);
  });

  it("fails over from a silent node to the next URL within the call's deadline", async () => {
    const metrics = createRpcMetrics();
    const rpc = createRpcClient({
      chain: chainOf([silent.url, devnet.rpcUrl]),
      logger,
      metrics,
      options: { timeoutMs: 800, baseDelayMs: 10, maxDelayMs: 50 },
    });
    const started = performance.now();
    const head = await rpc.getBlockNumber({ timeoutMs: 6000 });
    const elapsed = performance.now() - started;
    assert.equal(head, (await devnet.latestBlock()).number);
    assert.ok(elapsed >= 750 && elapsed < 6000, `answered after ${elapsed} ms`);
    assert.equal(await sample(metrics, "tokenmarket_rpc_failovers_total", { chain_id: "31337" }), 1);
    assert.equal(
      await sample(metrics, "tokenmarket_rpc_retries_total", {
        chain_id: "31337",
        host: new URL(silent.url).host,
      }),
      1,
      "the retry is counted with the host that failed",
    );
    assert.equal(
      await sample(metrics, "tokenmarket_rpc_errors_total", {
        chain_id: "31337",
        method: "eth_blockNumber",
        kind: "timeout",
      }),
      1,
    );
  });
});
