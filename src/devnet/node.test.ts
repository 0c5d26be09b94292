import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { createSilentLogger } from "../internal/logger.js";
import { compactStateFile, type DevnetNode, startAnvilNode, startHardhatNode } from "./node.js";
import { createDevnetRpc } from "./rpc.js";

const logger = createSilentLogger();

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/** The nodes the tests started and the processes they spawned, stopped or killed at the end. */
const started: DevnetNode[] = [];
const stray: number[] = [];
after(async () => {
  await Promise.all(started.map((node) => node.stop()));
  for (const pid of stray) if (isRunning(pid)) process.kill(pid, "SIGKILL");
});

/** Asserts the node's chain id and genesis date; answers its unlocked accounts. */
async function accountsOf(node: DevnetNode, chainId: number, initialDate: Date): Promise<string[]> {
  const rpc = createDevnetRpc(node.rpcUrl);
  assert.equal(Number(await rpc.request("eth_chainId")), chainId);
  const genesis = await rpc.request<{ timestamp: string }>("eth_getBlockByNumber", ["0x0", false]);
  assert.equal(Number(genesis.timestamp), initialDate.getTime() / 1000, "genesis dated initialDate");
  return rpc.request<string[]>("eth_accounts");
}

/** A second node asked for a taken port fails with a one-line LaunchError naming the port. */
async function refusesTakenPort(start: typeof startHardhatNode): Promise<void> {
  const node = await start({ port: 0, chainId: 31337, logger });
  started.push(node);
  await assert.rejects(start({ port: node.port, chainId: 31337, logger }), (error: Error) => {
    assert.equal(error.name, "LaunchError");
    assert.ok(error.message.includes(String(node.port)), error.message);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

/**
 * Starts a node (`start`: the function's name in node.ts) from a child process, SIGKILLs that
 * process once the node runs, and answers the node's pid (both pids go to `stray`). `what`: the
 * node, in the messages.
 */
async function nodeOfKilledParent(
  start: "startHardhatNode" | "startAnvilNode",
  what: string,
): Promise<number> {
  const nodeModule = pathToFileURL(join(import.meta.dirname, "node.ts")).href;
  const loggerModule = pathToFileURL(join(import.meta.dirname, "../internal/logger.ts")).href;
  const script = `
    import { ${start} } from ${JSON.stringify(nodeModule)};
    import { createSilentLogger } from ${JSON.stringify(loggerModule)};
    const node = await ${start}({ port: 0, chainId: 31337, logger: createSilentLogger() });
    process.stdout.write(JSON.stringify({ pid: node.pid }) + "\\n");
    setInterval(() => {}, 1000);
  `;
  const parent = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (parent.pid !== undefined) stray.push(parent.pid);
  const line = await new Promise<string>((resolve, reject) => {
    let output = "";
    parent.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("\n")) resolve(output.split("\n")[0] ?? "");
    });
    parent.once("exit", (code) => reject(new Error(`the parent exited (${code}) before starting ${what}`)));
  });
  const { pid } = JSON.parse(line) as { pid: number };
  stray.push(pid);
  assert.ok(isRunning(pid), `${what} runs`);
  parent.kill("SIGKILL");
  return pid;
}

describe("startHardhatNode", () => {
  it("runs a node on 127.0.0.1 with the chain id and genesis date asked, and stops it", async () => {
    const initialDate = new Date(Date.UTC(2025, 0, 1));
    const node = await startHardhatNode({ port: 0, chainId: 1337, initialDate, logger });
    started.push(node);
    assert.match(node.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(node.wsUrl, node.rpcUrl.replace("http", "ws"));
    const accounts = await accountsOf(node, 1337, initialDate);
    assert.equal(accounts.length, 30, "thirty unlocked accounts by default");
    assert.equal(
      accounts[0],
      "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      "Hardhat's well-known first account",
    );

    await node.stop();
    assert.equal(isRunning(node.pid), false, "the child process is gone after stop()");
    await node.stop(); // idempotent
  });

  it("refuses a taken port with a one-line error naming it", () => refusesTakenPort(startHardhatNode));

  it("exits by itself when the process that started it is killed with SIGKILL", async () => {
    const pid = await nodeOfKilledParent("startHardhatNode", "the node");
    assert.ok(await waitUntil(() => !isRunning(pid), 5000), "the orphaned node exited within 5 s");
  });
});

describe("startAnvilNode", () => {
  it("runs anvil on 127.0.0.1 with Hardhat's accounts, the chain id and genesis date asked", async () => {
    const initialDate = new Date(Date.UTC(2025, 0, 1));
    const node = await startAnvilNode({ port: 0, chainId: 1337, initialDate, logger });
    started.push(node);
    const accounts = await accountsOf(node, 1337, initialDate);
    assert.equal(accounts.length, 30);
    assert.equal(accounts[0], "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    await node.stop();
    assert.equal(isRunning(node.pid), false, "the process is gone after stop()");
  });

  it("refuses a taken port with a one-line error naming it", () => refusesTakenPort(startAnvilNode));

  it("exits when the process that started it is killed with SIGKILL", async () => {
    const pid = await nodeOfKilledParent("startAnvilNode", "anvil");
    assert.ok(await waitUntil(() => !isRunning(pid), 10_000), "the orphaned anvil exited");
  });
});

describe("compactStateFile", () => {
  const zero = `0x${"0".repeat(64)}`;
  const block = (number: string, parentHash: string, timestamp: string) => ({
    header: { parentHash, number, timestamp },
    transactions: [],
  });

  it("empties every transaction's traces, keeps the oldest genesis, and everything else byte for byte", () => {
    const dir = mkdtempSync(join(tmpdir(), "tokenmarket-state-"));
    try {
      const path = join(dir, "chain.json");
      // Strings inside the traces hold brackets, braces, escaped quotes and a "traces" text of their own.
      const trace = {
        trace: { data: '0x]]}"traces":[', decoded: { label: 'a \\"[b]{' } },
        children: [[1], []],
      };
      const state = {
        block: { number: "0x2" },
        blocks: [
          block("0x0", zero, "0x30"),
          block("0x1", `0x${"ab".repeat(32)}`, "0x11"),
          block("0x0", zero, "0x10"),
          block("0x2", `0x${"cd".repeat(32)}`, "0x12"),
          block("0x0", zero, "0x20"),
        ],
        transactions: [
          {
            info: { transaction_hash: "0x01", traces: [trace, trace], out: '"traces":["x"]' },
            receipt: { logs: [] },
          },
          { info: { traces: [] }, block_number: 2 },
        ],
      };
      writeFileSync(path, JSON.stringify(state));
      const size = compactStateFile(path);
      const text = readFileSync(path, "utf8");
      assert.equal(size, Buffer.byteLength(text));
      const expected = structuredClone(state);
      for (const tx of expected.transactions) tx.info.traces = [];
      expected.blocks = [state.blocks[1], state.blocks[2], state.blocks[3]].map((b) =>
        structuredClone(b),
      ) as typeof expected.blocks;
      assert.equal(text, JSON.stringify(expected));
      assert.equal(compactStateFile(path), size, "a compact file stays as it is");
      assert.equal(compactStateFile(join(dir, "missing.json")), null);
      writeFileSync(path, JSON.stringify(state).slice(0, 200));
      assert.equal(compactStateFile(path), null, "a file cut short is left as it is");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
