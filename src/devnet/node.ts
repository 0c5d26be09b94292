import { type ChildProcess, fork } from "node:child_process";
import type { Socket } from "node:net";
import { join } from "node:path";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";

/** The mnemonic of Hardhat's well-known test accounts (0xf39f…2266 is the first). */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";

/** A running Hardhat node in a child process. */
export type HardhatNode = {
  rpcUrl: string;
  wsUrl: string;
  chainId: number;
  /** The port it listens on (resolved when 0 was asked). */
  port: number;
  /** Process id of the node's child process. */
  pid: number;
  /** Stops the node and waits for its process to end (SIGTERM, then SIGKILL). Idempotent. */
  stop(): Promise<void>;
  /** Sends SIGTERM without waiting, for a process about to exit at once. */
  kill(): void;
};

export type StartHardhatNodeOptions = {
  /** 0 picks a free port. */
  port: number;
  chainId: number;
  /** Date of the genesis block; later blocks default to it plus the time elapsed since start. */
  initialDate?: Date;
  accounts?: {
    /** Number of funded, unlocked accounts derived from the mnemonic (default 30). */
    count?: number;
    /** Balance of each, in ether (default 1,000,000). */
    balanceEth?: bigint;
    mnemonic?: string;
  };
  /** Default 60,000,000 like Hardhat; deployments and history blocks stay far below. */
  blockGasLimit?: number;
  logger: Logger;
  /** How long to wait for the node to listen (default 30 s). */
  startTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL (default 5 s). */
  stopTimeoutMs?: number;
};

type ChildMessage = { type: "ready"; port: number } | { type: "error"; code: string; message: string };

const wrapperPath = join(import.meta.dirname, "hardhat-node.cjs");

/**
 * Starts Hardhat 2's node (EDR) in a child process, so that the node works on another core than
 * the caller, listening on 127.0.0.1 only. The child exits by itself when its parent dies.
 * A taken port rejects with a one-line LaunchError naming the port.
 */
export async function startHardhatNode(options: StartHardhatNodeOptions): Promise<HardhatNode> {
  const { logger } = options;
  const startedAt = performance.now();
  const nodeOptions = {
    port: options.port,
    chainId: options.chainId,
    initialDate: options.initialDate?.toISOString(),
    mnemonic: options.accounts?.mnemonic ?? DEVNET_MNEMONIC,
    accountCount: options.accounts?.count ?? 30,
    accountBalanceWei: ((options.accounts?.balanceEth ?? 1_000_000n) * 10n ** 18n).toString(),
    blockGasLimit: options.blockGasLimit ?? 60_000_000,
  };
  const child = fork(wrapperPath, [], {
    // The wrapper is plain CommonJS: no TypeScript loader (tsx) to inherit from our own flags.
    // --expose-gc: the wrapper collects the garbage after each turn (see hardhat-node.cjs).
    execArgv: ["--expose-gc"],
    env: {
      // EDR (mimalloc) allocates and frees megabytes of execution trace per transaction. By
      // default freed pages go back to the OS and fault in again at the next transaction: a
      // week of history cost the node 14 s of CPU instead of 9 s. Keeping them costs ~0.5 GB.
      MIMALLOC_PURGE_DELAY: "-1",
      ...process.env,
      TOKENMARKET_DEVNET_NODE: JSON.stringify(nodeOptions),
    },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const stderrTail: string[] = [];
  forwardLines(child.stdout, (line) => logger.debug({ hardhat: line }, "hardhat node output"));
  forwardLines(child.stderr, (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 20) stderrTail.shift();
    logger.warn({ hardhat: line }, "hardhat node error output");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  let port: number;
  try {
    port = await waitForReady(child, options, stderrTail);
  } catch (error) {
    await terminate(child, exited, options.stopTimeoutMs ?? 5000);
    throw error;
  }

  // The node must not keep the caller's event loop alive on its own: a test that ends (or a
  // process that exits) without stop() closes the IPC channel, and the child then exits.
  child.unref();
  child.channel?.unref();
  (child.stdout as Socket | null)?.unref();
  (child.stderr as Socket | null)?.unref();

  let stopping: Promise<void> | undefined;
  child.once("exit", (code, signal) => {
    if (stopping === undefined) logger.error({ port, code, signal }, "hardhat node exited unexpectedly");
  });

  const elapsedMs = Math.round(performance.now() - startedAt);
  logger.info(
    { port, chain_id: options.chainId, child_pid: child.pid, elapsed_ms: elapsedMs },
    "hardhat node started",
  );
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    chainId: options.chainId,
    port,
    pid: child.pid ?? 0,
    stop() {
      stopping ??= terminate(child, exited, options.stopTimeoutMs ?? 5000).then(() =>
        logger.info({ port }, "hardhat node stopped"),
      );
      return stopping;
    },
    kill() {
      stopping ??= exited;
      child.kill("SIGTERM");
    },
  };
}

function waitForReady(child: ChildProcess, options: StartHardhatNodeOptions, stderrTail: string[]) {
  return new Promise<number>((resolve, reject) => {
    const timeoutMs = options.startTimeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      cleanup();
      reject(new LaunchError(`hardhat node did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: ChildMessage) => {
      cleanup();
      if (message.type === "ready") resolve(message.port);
      else if (message.code === "EADDRINUSE")
        reject(
          new LaunchError(
            `devnet port ${options.port} on 127.0.0.1 is already in use: set devnet.port (or TOKENMARKET__devnet__port) to a free port`,
          ),
        );
      else reject(new LaunchError(`hardhat node failed to start: ${firstLine(message.message)}`));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      const reason = stderrTail.find((line) => line.trim() !== "") ?? `exit code ${code ?? signal}`;
      reject(new LaunchError(`hardhat node exited during start: ${firstLine(reason)}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

async function terminate(child: ChildProcess, exited: Promise<void>, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs);
  });
  const killed = await Promise.race([exited.then(() => false), timedOut]);
  clearTimeout(timer);
  if (killed) {
    child.kill("SIGKILL");
    await exited;
  }
}

function forwardLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (stream === null) return;
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines) if (line.trim() !== "") onLine(line);
  });
}

function firstLine(text: string): string {
  return text.split("\n")[0]?.trim() ?? text;
}
