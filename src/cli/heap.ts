/**
 * The V8 heap limit of the processes that hold a chain's pricing market (`start`, `index`).
 *
 * V8 sizes its old space from the machine's memory (4 GB on a 24 GB machine) and lets garbage
 * pile up to near that limit before a full collection: the pricing rebuilds every token's price
 * each batch, so at 300,000 pools the service's RSS swung between 1 and 2.7 GB while its live
 * heap was well under 1 GB (BENCHMARKS.md "Scale"). A limit set when the process starts keeps the
 * garbage collected sooner; V8 cannot change it later, so the command starts itself again with
 * `--max-old-space-size` (the parent only forwards signals and the exit; docs/DEPLOY.md). The
 * child never outlives the parent: it watches it from its first instruction (watch-parent.cjs).
 *
 * `TOKENMARKET_HEAP_MB`: the limit in MB (default DEFAULT_HEAP_MB); `0`: none (V8's own). A
 * `--max-old-space-size` in NODE_OPTIONS is the operator's and wins; one on node's command line
 * (`npm start` gives the default there, so that the demo runs as one process) wins unless
 * TOKENMARKET_HEAP_MB asks for another limit.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../internal/errors.js";

/** Preloaded into the child before anything else: it stops the child when the parent is gone. */
const WATCH_PARENT = fileURLToPath(new URL("./watch-parent.cjs", import.meta.url));

/** The old-space limit (MB) when the operator sets none (measured: BENCHMARKS.md "Scale"). */
export const DEFAULT_HEAP_MB = 1152;

/** The commands that hold a pricing market (and get the limit). */
export const HEAP_LIMITED_COMMANDS: ReadonlySet<string> = new Set(["start", "index"]);

const HEAP_FLAG = /(^|\s)--max[-_]old[-_]space[-_]size(=|\s|$)/;

/** Whether node was given an old-space limit already (its flags or NODE_OPTIONS). */
export function hasHeapFlag(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((arg) => HEAP_FLAG.test(arg)) || HEAP_FLAG.test(nodeOptions ?? "");
}

/** The limit node's command line gives (the last flag), or null: none, or not as `--flag=N`. */
function commandLineHeapMb(execArgv: readonly string[]): number | null {
  const flags = execArgv.filter((arg) => HEAP_FLAG.test(arg));
  const value = Number(flags.at(-1)?.split("=")[1]);
  return Number.isInteger(value) && value > 0 ? value : null;
}

/**
 * The limit (MB) this process should be started again with (`0`: again without the command
 * line's limit), or null: it runs as it should (no limit wanted, or the one wanted set already).
 */
export function wantedHeapMb(env: NodeJS.ProcessEnv, execArgv: readonly string[]): number | null {
  if (hasHeapFlag([], env.NODE_OPTIONS)) return null;
  const given = hasHeapFlag(execArgv, undefined);
  const raw = env.TOKENMARKET_HEAP_MB?.trim();
  if (raw === undefined || raw === "") return given ? null : DEFAULT_HEAP_MB;
  const mb = Number(raw);
  if (!Number.isInteger(mb) || mb < 0) {
    throw new ConfigError("TOKENMARKET_HEAP_MB", `must be a whole number of MB (0: no limit), got "${raw}"`);
  }
  if (!given) return mb === 0 ? null : mb;
  const givenMb = commandLineHeapMb(execArgv);
  // A flag whose value is not read here is taken as the operator's.
  return givenMb === null || givenMb === mb ? null : mb;
}

/**
 * Runs this command again as a child with `--max-old-space-size=<mb>` (`0`: none, in place of the
 * command line's) and the same arguments,
 * environment and standard streams; resolves with its exit code. Signals to this process go to
 * the child; a child ended by a signal ends this process by the same signal. If this process
 * dies first (SIGKILL, at any moment), the child sees its parent pid change (watch-parent.cjs,
 * preloaded before any module loads) and stops itself, so no service is left running behind a
 * dead parent.
 */
export function runWithHeapLimit(mb: number): Promise<number> {
  const execArgv = process.execArgv.filter((arg) => !HEAP_FLAG.test(arg));
  const child = spawn(
    process.execPath,
    [
      "--require",
      WATCH_PARENT,
      ...execArgv,
      ...(mb > 0 ? [`--max-old-space-size=${mb}`] : []),
      ...process.argv.slice(1),
    ],
    {
      stdio: "inherit",
      env: {
        ...process.env,
        TOKENMARKET_HEAP_PARENT: String(process.pid),
        // When the command started (epoch ms): the start banner's time counts from there.
        TOKENMARKET_HEAP_PARENT_STARTED: String(Math.round(performance.timeOrigin)),
      },
    },
  );
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const forward = (signal: NodeJS.Signals) => {
    child.kill(signal);
  };
  for (const signal of signals) process.on(signal, forward);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      for (const s of signals) process.off(s, forward);
      if (signal) {
        process.kill(process.pid, signal);
        return;
      }
      resolve(code ?? 1);
    });
  });
}
