import * as assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Hex } from "viem";
import { createSilentLogger } from "../internal/logger.js";
import { type Devnet, startDevnet } from "./index.js";
import { createDevnetRpc } from "./rpc.js";

const logger = createSilentLogger();

describe("startDevnet", () => {
  let devnet: Devnet | undefined;
  after(() => devnet?.stop());

  it("starts node, market, history and live trading in one call, and stops them", async () => {
    const startedAt = Date.now();
    devnet = await startDevnet({
      port: 0,
      chainId: 31337,
      seed: 42,
      historyDays: 0.25,
      liveBlockIntervalMs: 200,
      logger,
    });
    const returnedAt = Date.now();
    const rpc = createDevnetRpc(devnet.rpcUrl);
    assert.equal(Number(await rpc.request<Hex>("eth_chainId")), 31337);
    assert.ok(devnet.history && devnet.history.swaps > 0, "history written");
    const genesis = await rpc.request<{ timestamp: Hex }>("eth_getBlockByNumber", ["0x0", false]);
    // Dated 6 hours (0.25 days) before the moment of the call, which lies between these two.
    const sixHoursMs = 0.25 * 86_400_000;
    const dated = Number(genesis.timestamp);
    assert.ok(
      dated >= Math.floor((startedAt - sixHoursMs) / 1000) && dated <= (returnedAt - sixHoursMs) / 1000,
      `genesis at ${dated}: the history's start, 6 h before the call`,
    );
    // Live blocks keep coming: the head moves on by itself.
    const head = Number(await rpc.request<Hex>("eth_blockNumber"));
    const deadline = Date.now() + 30_000;
    while (Number(await rpc.request<Hex>("eth_blockNumber")) <= head) {
      assert.ok(Date.now() < deadline, `no block after ${head}: live trading stopped`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await devnet.stop();
    await assert.rejects(rpc.request("eth_chainId"), "the node is gone");
  });

  it("keeps its chain in stateDir: the next start continues it, with the same blocks", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "tokenmarket-devnet-state-"));
    try {
      const options = {
        port: 0,
        chainId: 31337,
        seed: 7,
        historyDays: 0.05,
        liveBlockIntervalMs: 0,
        stateDir,
        // As the service runs it: no state of past blocks, the state file kept without traces.
        pruneHistory: true,
        logger,
      };
      const first = await startDevnet(options);
      assert.equal(first.resumed, false, "a new chain at the first start");
      const rpc1 = createDevnetRpc(first.rpcUrl);
      const genesis1 = await rpc1.request<{ timestamp: Hex }>("eth_getBlockByNumber", ["0x0", false]);
      const head1 = Number(await rpc1.request<Hex>("eth_blockNumber"));
      const block1 = await rpc1.request<{ hash: Hex }>("eth_getBlockByNumber", [
        `0x${head1.toString(16)}`,
        false,
      ]);
      const logs1 = await rpc1.request<{ transactionHash: Hex }[]>("eth_getLogs", [
        { fromBlock: "0x0", toBlock: `0x${head1.toString(16)}` },
      ]);
      const receipt1 = await rpc1.request<{ transactionHash: Hex }>("eth_getTransactionReceipt", [
        logs1.at(-1)?.transactionHash,
      ]);
      await first.stop();
      assert.ok(
        !readFileSync(join(stateDir, "chain.json"), "utf8").includes('"traces":[{'),
        "the state file keeps no call traces",
      );

      const second = await startDevnet(options);
      try {
        assert.equal(second.resumed, true, "the kept chain is continued");
        assert.deepEqual(second.deployment, first.deployment, "the same market");
        const rpc2 = createDevnetRpc(second.rpcUrl);
        const again = await rpc2.request<{ hash: Hex }>("eth_getBlockByNumber", [
          `0x${head1.toString(16)}`,
          false,
        ]);
        assert.equal(again.hash, block1.hash, "the previous head is still there, same hash");
        // A pruned node answers at recent blocks too: a read may name a head a new block followed.
        const head2 = Number(await rpc2.request<Hex>("eth_blockNumber"));
        await rpc2.request("evm_mine");
        await rpc2.request("eth_getBalance", [
          second.deployment.accounts.deployer,
          `0x${head2.toString(16)}`,
        ]);
        const logs2 = await rpc2.request<unknown[]>("eth_getLogs", [
          { fromBlock: "0x0", toBlock: `0x${head1.toString(16)}` },
        ]);
        assert.deepEqual(logs2, logs1, "every log of the kept blocks is served again");
        const receipt2 = await rpc2.request("eth_getTransactionReceipt", [receipt1.transactionHash]);
        assert.deepEqual(receipt2, receipt1, "and every receipt");
      } finally {
        await second.stop();
      }
      // anvil writes the genesis it made before loading beside the chain's own: only one may stay,
      // or a later load may serve either as block 0 (another chain).
      const kept = JSON.parse(readFileSync(join(stateDir, "chain.json"), "utf8")) as {
        blocks: { header: { number: string; timestamp: string } }[];
      };
      const geneses = kept.blocks.filter((b) => Number(b.header.number) === 0);
      assert.deepEqual(
        geneses.map((b) => Number(b.header.timestamp)),
        [Number(genesis1.timestamp)],
        "one genesis, the chain's own, in the state file",
      );
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it("fails with one line naming a taken port, leaving nothing running", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      await assert.rejects(
        startDevnet({ port, chainId: 31337, seed: 42, historyDays: 1, liveBlockIntervalMs: 0, logger }),
        new RegExp(`port ${port}`),
      );
    } finally {
      blocker.close();
    }
  });
});
