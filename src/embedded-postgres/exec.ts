// The embedded Postgres launcher (see README.md here): running the Postgres programs: a clean environment, as the server user when we are root.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";
import { LaunchError } from "../internal/errors.js";
import type { ServerUser } from "./user.js";

/** A minimal environment: no PG* variables of ours leak in, and the C locale needs nothing installed. */
export function serverEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", LANG: "C" };
}

export function run(
  command: string,
  args: string[],
  options: { user: ServerUser | undefined; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: "/",
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", (error) =>
      reject(new LaunchError(`cannot run ${command}: ${error.message}`, { cause: error })),
    );
    child.once("close", (code) => resolve({ code, output }));
  });
}

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
