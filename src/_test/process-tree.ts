import { readdirSync, readFileSync } from "node:fs";

/**
 * Sends `signal` to a process and to every process it forked (Linux /proc): a Postgres server
 * frozen with SIGSTOP must have its backends frozen too, each of which runs a session of its own.
 * A process that is gone by then is skipped.
 */
export function signalProcessTree(pid: number, signal: NodeJS.Signals): void {
  const pids = [pid];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    if (children) pids.push(...children.split(/\s+/).map(Number));
  }
  for (const each of pids) {
    try {
      process.kill(each, signal);
    } catch {
      // exited meanwhile
    }
  }
}
