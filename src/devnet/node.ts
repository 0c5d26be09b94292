import { type ChildProcess, fork, spawn } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";

/** The mnemonic of Hardhat's well-known test accounts (0xf39f…2266 is the first). */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";

/** A running devnet node (anvil or Hardhat) in a child process. */
export type DevnetNode = {
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

/** A running Hardhat node (kept for tests that rely on Hardhat-only behaviour). */
export type HardhatNode = DevnetNode;

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
export async function startHardhatNode(options: StartHardhatNodeOptions): Promise<DevnetNode> {
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

export type StartAnvilNodeOptions = StartHardhatNodeOptions & {
  /**
   * A file the chain is kept in: loaded at start when it exists (blocks, receipts, logs and the
   * latest state; `initialDate` is then ignored), written when the node ends (on SIGTERM: stop(),
   * kill(), or the watchdog when the caller dies).
   */
  statePath?: string;
  /**
   * Seconds between writes of `statePath` while the node runs; none by default. Each write
   * serialises the whole chain (a week of demo history: ~115 MB of JSON, traces included) while
   * the node waits; a state lost to a crash only costs a new chain, whose data the service drops
   * and indexes again.
   */
  stateIntervalS?: number;
  /**
   * Keep the state of the last PRUNED_STATES_KEPT blocks only (`--prune-history N`): calls and
   * balances are answered there, while blocks, transactions and logs all stay. A node that keeps
   * every block's state holds a copy per block (a week of demo history: ~300 MB against ~100 MB)
   * and spends a quarter more CPU mining; the service reads the devnet at its head (a balance
   * read names the head block it saw, which a new block may follow before the call arrives).
   */
  pruneHistory?: boolean;
};

const require = createRequire(import.meta.url);

/** Blocks whose state a pruned node keeps (about 0.6 MB each on the demo's market). */
const PRUNED_STATES_KEPT = 8;

/** The anvil binary of the npm package (Linux x64), else an `anvil` on the PATH. */
export function anvilBinary(): string {
  try {
    return require.resolve("@foundry-rs/anvil-linux-amd64/bin/anvil");
  } catch {
    return "anvil";
  }
}

/**
 * Starts anvil (Foundry's node: a native binary, a few tens of megabytes and ready in a fraction
 * of a second) listening on 127.0.0.1 only, with Hardhat's accounts, a base fee of 0 (the gas
 * price is then a pure priority, and the mempool orders a block's transactions by it), the
 * Cancun hardfork and every account impersonated (see the arguments). The node is in its own
 * process group, so a Ctrl-C in the terminal does not stop it before the indexer stops reading
 * it; a watchdog ends it when the caller dies, even by SIGKILL. A taken port rejects with a
 * one-line LaunchError naming the port.
 */
export async function startAnvilNode(options: StartAnvilNodeOptions): Promise<DevnetNode> {
  const { logger } = options;
  const startedAt = performance.now();
  // The port is tried first: a busy one fails at once, and is never mistaken for anvil answering.
  const port = await freePort(options.port);
  const balanceEth = options.accounts?.balanceEth ?? 1_000_000n;
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(options.chainId),
    "--mnemonic",
    options.accounts?.mnemonic ?? DEVNET_MNEMONIC,
    "--accounts",
    String(options.accounts?.count ?? 30),
    "--balance",
    balanceEth.toString(),
    "--gas-limit",
    // anvil drops a pending transaction that does not fit in a block's remaining gas instead of
    // keeping it for the next block (13 of the deployment's transactions were never mined at
    // 60,000,000): every batch the devnet sends must fit in one block.
    String(options.blockGasLimit ?? 1_000_000_000),
    "--block-base-fee-per-gas",
    "0",
    "--order",
    "fees",
    "--quiet",
    // Every account sends unsigned (eth_sendTransaction from any address): signing and then
    // recovering each transaction's sender would be a sixth of the node's work while it writes a
    // history. The accounts' keys are public (a test mnemonic) and the node listens on 127.0.0.1.
    "--auto-impersonate",
    // Cancun, what the newest contracts here need (transient storage, for Uniswap V4): Prague's
    // block-hash contract (EIP-2935) stores one more slot per block, and the node rehashes the
    // whole state at every block, so each block of a long history would cost more than the one before.
    "--hardfork",
    "cancun",
  ];
  const loading = options.statePath !== undefined && existsSync(options.statePath);
  if (options.initialDate !== undefined && !loading)
    args.push("--timestamp", String(Math.floor(options.initialDate.getTime() / 1000)));
  if (options.pruneHistory === true) args.push("--prune-history", String(PRUNED_STATES_KEPT));
  if (options.statePath !== undefined) {
    args.push("--state", options.statePath);
    if (options.stateIntervalS !== undefined) args.push("--state-interval", String(options.stateIntervalS));
  }

  const child = spawn(anvilBinary(), args, {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    // anvil's jemalloc keeps freed pages for 10 s by default, returned only when it allocates
    // again: writing the history frees tens of MB a second, which stayed in its RSS. A background
    // thread returns them within a second, off the thread that mines. An operator's own setting wins.
    env: { _RJEM_MALLOC_CONF: "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0", ...process.env },
  });
  // Ends the node when this process dies, from the moment it exists: the watchdog's stdin is a
  // pipe from this process, which closes then (even on SIGKILL).
  const watchdog = spawn(
    "sh",
    ["-c", '[ "$0" -gt 0 ] || exit 0; read _; kill -TERM "$0" 2>/dev/null', String(child.pid ?? 0)],
    {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    },
  );
  watchdog.on("error", () => {});
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
  const stopWatchdog = () => {
    if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill("SIGKILL");
  };
  const stderrTail: string[] = [];
  forwardLines(child.stderr, (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 20) stderrTail.shift();
    logger.warn({ anvil: line }, "anvil error output");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const spawnFailed = new Promise<never>((_, reject) =>
    child.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new LaunchError(
          error.code === "ENOENT"
            ? "anvil is not installed: `npm install` installs it on Linux x64; elsewhere install Foundry (https://getfoundry.sh) so that `anvil` is on the PATH"
            : `anvil did not start: ${error.message}`,
        ),
      ),
    ),
  );
  spawnFailed.catch(() => {});
  const rpcUrl = `http://127.0.0.1:${port}`;
  const stopTimeoutMs = options.stopTimeoutMs ?? (options.statePath === undefined ? 5000 : 30_000);
  try {
    await Promise.race([
      spawnFailed,
      waitForAnvil(rpcUrl, child, exited, options.startTimeoutMs ?? 30_000, stderrTail, options.port),
    ]);
  } catch (error) {
    stopWatchdog();
    await terminate(child, exited, stopTimeoutMs);
    throw error;
  }
  const pid = child.pid ?? 0;
  child.unref();
  (child.stderr as Socket | null)?.unref();

  let stopping: Promise<void> | undefined;
  child.once("exit", (code, signal) => {
    if (stopping === undefined) logger.error({ port, code, signal }, "anvil exited unexpectedly");
  });
  logger.info(
    {
      port,
      chain_id: options.chainId,
      child_pid: pid,
      state: options.statePath ?? null,
      loaded: loading,
      elapsed_ms: Math.round(performance.now() - startedAt),
    },
    "anvil node started",
  );
  return {
    rpcUrl,
    wsUrl: `ws://127.0.0.1:${port}`,
    chainId: options.chainId,
    port,
    pid,
    stop() {
      stopWatchdog();
      // anvil writes its state file as it ends on SIGTERM: give it the time to.
      stopping ??= terminate(child, exited, stopTimeoutMs).then(() => {
        const statePath = options.statePath;
        const stripped = statePath === undefined ? null : compactStateFile(statePath, logger);
        logger.info({ port, ...(stripped === null ? {} : { state_bytes: stripped }) }, "anvil node stopped");
      });
      return stopping;
    },
    kill() {
      stopWatchdog();
      stopping ??= exited;
      child.kill("SIGTERM");
    },
  };
}

/**
 * `port` if it is free on 127.0.0.1 now, or a free port for 0 (anvil cannot report the port it
 * picked when quiet); a taken port rejects with a LaunchError naming it.
 */
function freePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new LaunchError(
              `devnet port ${port} on 127.0.0.1 is already in use: set devnet.port (or TOKENMARKET__devnet__port) to a free port`,
            )
          : error,
      ),
    );
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Waits until the node answers eth_chainId; rejects when it exits first or the time is up. */
async function waitForAnvil(
  rpcUrl: string,
  child: ChildProcess,
  exited: Promise<void>,
  timeoutMs: number,
  stderrTail: string[],
  askedPort: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let done = false;
  const exit = exited.then(() => {
    if (done) return;
    const reason =
      stderrTail.find((line) => line.trim() !== "") ?? `exit code ${child.exitCode ?? child.signalCode}`;
    if (/address already in use/i.test(reason))
      throw new LaunchError(
        `devnet port ${askedPort} on 127.0.0.1 is already in use: set devnet.port (or TOKENMARKET__devnet__port) to a free port`,
      );
    throw new LaunchError(`anvil exited during start: ${firstLine(reason)}`);
  });
  const poll = (async () => {
    while (!done) {
      try {
        const response = await fetch(rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
          signal: AbortSignal.timeout(2000),
        });
        if (response.ok) return;
      } catch {
        // Not listening yet.
      }
      if (performance.now() > deadline) throw new LaunchError(`anvil did not start within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  try {
    await Promise.race([poll, exit]);
  } finally {
    done = true;
  }
}

const TRACES_KEY = Buffer.from('"traces":[');
const BLOCKS_KEY = Buffer.from('"blocks":[');
const GENESIS_PARENT = Buffer.from(`"parentHash":"0x${"0".repeat(64)}"`);
const TIMESTAMP_KEY = Buffer.from('"timestamp":"');
const [COMMA, OPEN_BRACE, OPEN_BRACKET, CLOSE_BRACE, CLOSE_BRACKET, QUOTE, BACKSLASH] = [
  0x2c, 0x7b, 0x5b, 0x7d, 0x5d, 0x22, 0x5c,
];

/**
 * Rewrites the state file anvil wrote as it ended, so that the next start loads it quickly and
 * as the same chain:
 * - the call traces it keeps of every transaction are emptied (`"traces":[…]` becomes
 *   `"traces":[]`); the service never reads them, and they are four fifths of a week's demo chain
 *   (110 of 140 MB): loading them took anvil 6.6 s and 335 MB against 2.2 s and 134 MB without;
 * - one genesis block is kept: anvil makes a genesis of its own before it loads a state and writes
 *   both at its next exit, and which of the two a later load serves as block 0 is left to chance
 *   (a new genesis makes the kept chain another chain). The chain's own genesis is the oldest.
 * Everything else (blocks, transactions, receipts, logs, the state) is kept byte for byte. The
 * file is replaced atomically; a file that cannot be read, parsed or written is left as it is.
 * Returns its new size in bytes, or null when it was left.
 */
export function compactStateFile(path: string, logger?: Logger): number | null {
  let input: Buffer;
  try {
    input = readFileSync(path);
  } catch {
    return null;
  }
  const output = keepOldestGenesis(emptyArrays(input, TRACES_KEY));
  if (output === null) return null;
  if (output.equals(input)) return input.length;
  try {
    writeFileSync(`${path}.tmp`, output);
    renameSync(`${path}.tmp`, path);
  } catch (error) {
    logger?.warn({ err: error, state: path }, "could not rewrite the devnet's state file");
    return null;
  }
  return output.length;
}

/** Where each top-level occurrence of the key `"name":[` starts (a key follows `{` or `,`). */
function* keyPositions(buffer: Buffer, key: Buffer): Generator<number> {
  for (let at = buffer.indexOf(key); at >= 0; at = buffer.indexOf(key, at + key.length)) {
    // Inside a JSON string a quote is always escaped: never after `{` or `,` there.
    const before = buffer[at - 1];
    if (before === COMMA || before === OPEN_BRACE) yield at;
  }
}

/** The buffer with every array under `key` emptied; null when one is cut short. */
function emptyArrays(input: Buffer | null, key: Buffer): Buffer | null {
  if (input === null) return null;
  const parts: Buffer[] = [];
  let copied = 0;
  for (const at of keyPositions(input, key)) {
    if (at < copied) continue;
    const open = at + key.length - 1;
    const close = closing(input, open);
    if (close < 0) return null;
    parts.push(input.subarray(copied, open + 1));
    copied = close;
  }
  parts.push(input.subarray(copied));
  return Buffer.concat(parts);
}

/** The buffer with only the oldest of the blocks whose parent is zero; null when cut short. */
function keepOldestGenesis(input: Buffer | null): Buffer | null {
  if (input === null) return null;
  const at = keyPositions(input, BLOCKS_KEY).next().value;
  if (at === undefined) return input;
  const geneses: { start: number; end: number; timestamp: bigint }[] = [];
  const arrayEnd = closing(input, at + BLOCKS_KEY.length - 1);
  if (arrayEnd < 0) return null;
  for (let i = at + BLOCKS_KEY.length; i < arrayEnd; ) {
    if (input[i] !== OPEN_BRACE) {
      i++;
      continue;
    }
    const end = closing(input, i);
    if (end < 0) return null;
    const element = input.subarray(i, end + 1);
    if (element.includes(GENESIS_PARENT)) {
      const t = element.indexOf(TIMESTAMP_KEY) + TIMESTAMP_KEY.length;
      const timestamp = BigInt(element.subarray(t, element.indexOf(QUOTE, t)).toString("latin1"));
      geneses.push({ start: i, end: end + 1, timestamp });
    }
    i = end + 1;
  }
  if (geneses.length < 2) return input;
  const oldest = geneses.reduce((a, b) => (b.timestamp < a.timestamp ? b : a));
  const parts: Buffer[] = [];
  let copied = 0;
  for (const genesis of geneses) {
    if (genesis === oldest) continue;
    // The element and the comma that joins it to its neighbour.
    const [from, to] =
      input[genesis.end] === COMMA ? [genesis.start, genesis.end + 1] : [genesis.start - 1, genesis.end];
    parts.push(input.subarray(copied, from));
    copied = to;
  }
  parts.push(input.subarray(copied));
  return Buffer.concat(parts);
}

/** Index of the bracket or brace closing the one at `open`, skipping strings; -1 when cut. */
function closing(buffer: Buffer, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < buffer.length; i++) {
    const c = buffer[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) depth++;
    else if ((c === CLOSE_BRACKET || c === CLOSE_BRACE) && --depth === 0) return i;
  }
  return -1;
}
