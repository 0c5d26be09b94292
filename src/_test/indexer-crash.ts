import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { createInterface } from "node:readline";

const childScript = path.resolve(import.meta.dirname, "indexer-child.ts");

export type ChildRun = { exitCode: number | null; signal: NodeJS.Signals | null; batches: number };

export type Kill = { afterBatches: number; delayMs: number };

/**
 * Runs the indexer in a child process (indexer-child.ts); with `kill`, SIGKILLs it `delayMs`
 * after its `afterBatches`-th committed batch: every run makes some progress, and the kill lands
 * anywhere in the next batch (fetching, preparing or committing).
 */
export function runIndexerChild(input: unknown, kill: Kill | null): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", childScript], {
      env: { ...process.env, TOKENMARKET_INDEXER_CHILD: JSON.stringify(input) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let batches = 0;
    let timer: NodeJS.Timeout | undefined;
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (!line.includes('"batch committed"')) return;
      batches++;
      if (kill && batches === kill.afterBatches)
        timer = setTimeout(() => child.kill("SIGKILL"), kill.delayMs);
    });
    child.once("error", reject);
    child.once("exit", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, batches });
    });
  });
}
