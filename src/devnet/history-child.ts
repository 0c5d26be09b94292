/**
 * A new chain's history written by a process of its own, while the service indexes it.
 *
 * Why: the history is a chain of round trips (plan a block, the node mines it, plan the next), so
 * it goes as fast as the node mines only if each answer is taken in at once. In the service's
 * process, the indexer's and the pricing's work on the same thread held the answers back: a
 * week of demo history took 12–13 s beside the indexer against 9 s alone. The child is the
 * `tokenmarket` command itself (bin/tokenmarket.js, internal command `devnet-history`), and
 * it exits once the history is written; live trading then runs in the service, which reads the
 * chain's state (nonces, pools) again before its first block.
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

/**
 * Writes the history in a child process; rejects with the child's error, or with the signal's
 * reason when `signal` aborts (the child is killed then).
 */
export function writeHistoryInChild(job: HistoryJob, signal: AbortSignal): Promise<HistoryStats> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    // In a process group of its own, as the node is: a Ctrl-C in the terminal reaches the
    // service, whose stop ends the history (signal) before the node. If the service dies instead,
    // the node goes with it (its watchdog) and the child's next call fails: it exits.
    const child = spawn(process.execPath, [command, "devnet-history", JSON.stringify(job)], {
      stdio: ["ignore", "pipe", "pipe"],
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
    const abort = () => child.kill("SIGTERM");
    signal.addEventListener("abort", abort, { once: true });
    child.once("error", (error) => {
      signal.removeEventListener("abort", abort);
      reject(error);
    });
    child.once("exit", (code, killedBy) => {
      signal.removeEventListener("abort", abort);
      if (signal.aborted) return reject(signal.reason);
      if (code !== 0) {
        const why = stderr.trim().split("\n").slice(-3).join(" | ") || `exit ${code ?? killedBy}`;
        return reject(new Error(`the devnet history process failed: ${why}`));
      }
      try {
        const stats = JSON.parse(stdout) as Omit<HistoryStats, "from" | "to"> & { from: string; to: string };
        resolve({ ...stats, from: new Date(stats.from), to: new Date(stats.to) });
      } catch {
        reject(new Error(`the devnet history process answered no statistics: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

/** The child's side (`tokenmarket devnet-history JOB`): writes the history, prints its statistics as JSON. */
export async function runHistoryChild(argv: readonly string[]): Promise<number> {
  const job = JSON.parse(argv[0] ?? "null") as HistoryJob | null;
  if (job === null) {
    console.error("devnet-history: internal command of the service's start, given no job");
    return 2;
  }
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
