/**
 * `tokenmarket <role> …` as its own process, as a user or a deployment starts it
 * (`node --import tsx src/cli/main.ts …`), for the tests that check the command line, the
 * environment and separate processes together.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { projectRoot } from "../config/load.js";

export type CliProcess = {
  /** For failure messages: the role by default. */
  name: string;
  child: ChildProcess;
  /** Its stdout and stderr so far (the tail only when `keepChars` is given). */
  output: () => string;
  /** The exit code; -1 when a signal ended it. */
  exited: Promise<number | null>;
};

/** The environment of a user's shell, minus anything that would pick another configuration. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("TOKENMARKET") && !name.startsWith("DATABASE_")) env[name] = value;
  }
  return { ...env, LOG_FORMAT: "json", ...extra };
}

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { name?: string; keepChars?: number; nodeArgs?: string[] } = {},
): CliProcess {
  // nodeArgs: Node's own flags for the child (e.g. --cpu-prof, which NODE_OPTIONS refuses).
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), "--import", "tsx", "src/cli/main.ts", ...args],
    {
      cwd: projectRoot,
      env,
    },
  );
  let output = "";
  // A serve process logs every request: a long-running one keeps only the tail when asked.
  const keep = (d: Buffer) => {
    output += d;
    if (options.keepChars !== undefined) output = output.slice(-options.keepChars);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  return { name: options.name ?? args[0] ?? "tokenmarket", child, output: () => output, exited };
}

/**
 * Polls `probe` until it gives a value other than undefined. A probe that throws counts as "not
 * yet": a process still starting refuses connections.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  options: { intervalMs?: number; output?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const output = options.output ? `\n${options.output()}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

/** SIGTERM, then SIGKILL when the process has not exited within `timeoutMs`; resolves with its exit code. */
export async function stopProcess(p: CliProcess, timeoutMs: number): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.exited;
  p.child.kill("SIGTERM");
  const timer = setTimeout(() => p.child.kill("SIGKILL"), timeoutMs);
  try {
    return await p.exited;
  } finally {
    clearTimeout(timer);
  }
}
