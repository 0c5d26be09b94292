/**
 * A new chain's history written by a process of its own, while the service indexes it.
 *
 * Why: the history is a chain of round trips (plan a block, the node mines it, plan the next), so
 * it goes as fast as the node mines only if each answer is taken in at once. In the service's
 * process the indexer's and the pricing's work on the same thread would hold the answers back
 * (its event loop lags tens of milliseconds at times while it indexes). The child is the
 * `tokenmarket` command itself (bin/tokenmarket.js, internal command `devnet-history`), started
 * while the market is deployed, and it exits once the history is written; live trading then runs
 * in the service, which reads the chain's state (nonces, pools) again before its first block.
 *
 * The child derives the deployment from the seed and the node's accounts as a kept chain's
 * resume does (planDeployment), and writes exactly what the service's own simulator would.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";
import type { Address } from "viem";
import { createSilentLogger } from "../internal/logger.js";
import { planDeployment } from "./deploy.js";
import { createDevnetRpc } from "./rpc.js";
import { createSimulator, type HistoryStats } from "./simulator.js";

/** What the child needs: the node, the market's seed, and the history's range. */
type HistoryJob = {
  rpcUrl: string;
  chainId: number;
  seed: number;
  deploymentBlock: number;
  days: number;
  /** The history's end, ms since the epoch. */
  until: number;
};

const command = path.resolve(import.meta.dirname, "../../bin/tokenmarket.js");

/** A history process, started before it is needed (loading its modules takes a few tenths of a second). */
export type HistoryProcess = {
  /**
   * Writes the history; rejects with the process's error, or with the signal's reason when
   * `signal` aborts (the process is killed then). Once only.
   */
  write(job: HistoryJob, signal: AbortSignal): Promise<HistoryStats>;
  /** Ends the process when it is not needed after all (a failed start). */
  kill(): void;
};

/**
 * Starts a history process: it loads its modules while the market is deployed, then waits for
 * its job on its standard input (and exits if that closes first: the service is gone).
 */
export function spawnHistoryProcess(): HistoryProcess {
  // In a process group of its own, as the node is: a Ctrl-C in the terminal reaches the
  // service, whose stop ends the history (signal) before the node. If the service dies instead,
  // its standard input closes, or the node goes with it (its watchdog) and its next call fails.
  // A young generation of 2 MB semi-spaces (16 by default): the history's garbage is short-lived
  // and small, and the process's resident memory counts in the demo's.
  const child = spawn(process.execPath, ["--max-semi-space-size=2", command, "devnet-history"], {
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  // A process that failed to start is reported by write().
  let spawnError: Error | undefined;
  child.once("error", (error) => {
    spawnError = error;
  });
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; killedBy: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, killedBy) => resolve({ code, killedBy })),
  );
  return {
    async write(job, signal) {
      if (signal.aborted) {
        child.kill("SIGTERM");
        throw signal.reason;
      }
      const abort = () => child.kill("SIGTERM");
      signal.addEventListener("abort", abort, { once: true });
      try {
        child.stdin.end(`${JSON.stringify(job)}\n`);
        const { code, killedBy } = await exited;
        if (signal.aborted) throw signal.reason;
        if (spawnError !== undefined) throw spawnError;
        if (code !== 0) {
          const why = stderr.trim().split("\n").slice(-3).join(" | ") || `exit ${code ?? killedBy}`;
          throw new Error(`the devnet history process failed: ${why}`);
        }
        let stats: Omit<HistoryStats, "from" | "to"> & { from: string; to: string };
        try {
          stats = JSON.parse(stdout);
        } catch {
          throw new Error(`the devnet history process answered no statistics: ${stdout.slice(0, 200)}`);
        }
        return { ...stats, from: new Date(stats.from), to: new Date(stats.to) };
      } finally {
        signal.removeEventListener("abort", abort);
      }
    },
    kill() {
      child.kill("SIGTERM");
    },
  };
}

/** The child's side (`tokenmarket devnet-history`, its job on standard input): writes the history, prints its statistics as JSON. */
export async function runHistoryChild(): Promise<number> {
  let input = "";
  for await (const chunk of process.stdin) input += String(chunk);
  if (input.trim() === "") return 0; // The service went away before it needed the history.
  const job = JSON.parse(input) as HistoryJob;
  const rpc = createDevnetRpc(job.rpcUrl);
  const accounts = await rpc.request<Address[]>("eth_accounts");
  const deployment = {
    ...planDeployment({ chainId: job.chainId, seed: job.seed, accounts }),
    blockNumber: job.deploymentBlock,
  };
  const simulator = createSimulator({
    rpcUrl: job.rpcUrl,
    deployment,
    seed: job.seed,
    logger: createSilentLogger(),
  });
  const stats = await simulator.writeHistory({ days: job.days, until: new Date(job.until) });
  process.stdout.write(JSON.stringify(stats));
  return 0;
}
