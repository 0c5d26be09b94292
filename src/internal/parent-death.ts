/**
 * A child process that must not outlive this one (a server we start), even when this process is
 * SIGKILLed and runs no code of its own: Linux's parent-death signal (prctl PR_SET_PDEATHSIG),
 * which Node cannot set, set by util-linux's `setpriv` before it execs the program in its place.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";

let setpriv: string | null | undefined;

/**
 * util-linux's `setpriv`, when installed and able to set a parent-death signal (2.33 and later),
 * else null. Looked up once.
 */
export function findSetpriv(): string | null {
  if (setpriv !== undefined) return setpriv;
  setpriv = null;
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, "setpriv");
    if (!existsSync(candidate)) continue;
    const probe = spawnSync(candidate, ["--pdeathsig", "SIGINT", "true"], { stdio: "ignore", timeout: 5000 });
    if (probe.status === 0) setpriv = candidate;
    break;
  }
  return setpriv;
}

/**
 * The command line that runs `command` so that it gets `signal` the moment the process that
 * spawned it dies, even by SIGKILL (the kernel's parent-death signal, set by setpriv, which then
 * execs `command` in its place: same pid). Without setpriv, `command` as it is (`guarded` false).
 */
export function withParentDeathSignal(
  command: string,
  args: string[],
  signal: NodeJS.Signals,
): { command: string; args: string[]; guarded: boolean } {
  const wrapper = findSetpriv();
  if (!wrapper) return { command, args, guarded: false };
  return { command: wrapper, args: ["--pdeathsig", signal, "--", command, ...args], guarded: true };
}
