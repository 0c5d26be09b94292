// The embedded Postgres launcher (see README.md here): a server left running (postmaster.pid): reused, attached to, or stopped; launcher bookkeeping.
import {
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { readPassword } from "./data-dir.js";
import { canConnect, connectionUrl } from "./network.js";

/** Which process started the server, so that a second launcher does not take it over. */
export const LAUNCHER_FILE = "tokenmarket.launcher.json";

export type PidFile = { pid: number; port: number; status: string };

export function readPidFile(dataDir: string): PidFile | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return undefined;
  }
  return { pid: Number(lines[0]), port: Number(lines[3]), status: lines[7]?.trim() ?? "" };
}

/** Alive and not a zombie (an exited child that nobody reaped yet is as good as gone). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Start time of a process in clock ticks since boot: with the pid, it names one process for good. */
export function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .at(19);
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a live postmaster of `dataDir`. Its working directory is the data directory
 * (the postmaster chdirs into it); reading that link of another user's process needs
 * CAP_SYS_PTRACE, which root lacks in a default Docker container, so the command line (readable
 * by all, and left intact by the postmaster) is the fallback. A process that cannot be
 * inspected at all is not assumed to be anything: that is an error.
 */
export function isPostmasterOf(pid: number, dataDir: string): boolean {
  if (!isAlive(pid)) return false;
  const realDataDir = realpathSync(dataDir);
  try {
    const exe = path.basename(readlinkSync(`/proc/${pid}/exe`));
    return exe.startsWith("postgres") && readlinkSync(`/proc/${pid}/cwd`) === realDataDir;
  } catch {
    // not allowed: see the command line
  }
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch (error) {
    if (!isAlive(pid)) return false;
    throw new LaunchError(
      `${dataDir}/postmaster.pid names process ${pid}, which cannot be inspected (${(error as Error).message}): stop that server, or delete postmaster.pid if it is not one`,
    );
  }
  if (!path.basename(argv[0] ?? "").startsWith("postgres")) return false;
  const dashD = argv.indexOf("-D");
  const argDir = dashD >= 0 ? argv[dashD + 1] : undefined;
  if (argDir === undefined) return false;
  try {
    return realpathSync(argDir) === realDataDir;
  } catch {
    return false;
  }
}

/**
 * A killed postmaster leaves `.s.PGSQL.<port>.lock` in its socket folder (our data directory);
 * Postgres refuses to start while the pid it names exists, even as a zombie nobody reaps.
 */
export function removeStaleSocketLocks(socketDir: string, dataDir: string): void {
  for (const name of readdirSync(socketDir)) {
    const match = /^\.s\.PGSQL\.\d+\.lock$/.exec(name);
    if (!match) continue;
    const pid = Number(readFileSync(path.join(socketDir, name), "utf8").split("\n")[0]);
    if (isPostmasterOf(pid, dataDir)) continue;
    rmSync(path.join(socketDir, name), { force: true });
    rmSync(path.join(socketDir, name.slice(0, -".lock".length)), { force: true });
  }
}

export function writeLauncherFile(dataDir: string): void {
  const launcher = { pid: process.pid, start_time: startTimeOf(process.pid) };
  writeFileSync(path.join(dataDir, LAUNCHER_FILE), `${JSON.stringify(launcher)}\n`);
}

export function removeLauncherFile(dataDir: string): void {
  rmSync(path.join(dataDir, LAUNCHER_FILE), { force: true });
}

/** The live process that started the server in `dataDir`, if it is still running. */
export function liveLauncher(dataDir: string): number | undefined {
  try {
    const launcher = JSON.parse(readFileSync(path.join(dataDir, LAUNCHER_FILE), "utf8")) as {
      pid: number;
      start_time?: string;
    };
    if (!isAlive(launcher.pid)) return undefined;
    return startTimeOf(launcher.pid) === launcher.start_time ? launcher.pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Deals with a `postmaster.pid` found at start: a stale one is removed; a server orphaned by a
 * killed launcher is returned for reuse when it answers on `port`, else stopped. A server whose
 * launcher is still running is not touched.
 */
export async function handleLeftover(options: {
  dataDir: string;
  port: number;
  logger: Logger;
  attach: boolean;
}): Promise<{ pid: number; attached?: boolean; port?: number } | undefined> {
  const { dataDir, port, logger } = options;
  const pidFile = readPidFile(dataDir);
  if (!pidFile) return undefined;
  if (!isPostmasterOf(pidFile.pid, dataDir)) {
    // Postgres would refuse to start while the pid it names is alive, even as another program.
    unlinkSync(path.join(dataDir, "postmaster.pid"));
    logger.info({ postgres_pid: pidFile.pid, data_dir: dataDir }, "removed a stale postmaster.pid");
    return undefined;
  }
  const launcher = liveLauncher(dataDir);
  // Attached on the port the running server listens on, whatever this configuration says.
  if (launcher !== undefined && options.attach) {
    const url = connectionUrl({ port: pidFile.port, password: readPassword(dataDir), database: "postgres" });
    if (await canConnect(url, dataDir)) return { pid: pidFile.pid, attached: true, port: pidFile.port };
  }
  if (launcher !== undefined) {
    throw new LaunchError(
      `the embedded Postgres in ${dataDir} (127.0.0.1:${pidFile.port}) is in use by process ${launcher}, a running tokenmarket: ` +
        "stop it first, or set database.embedded.dataDir to another folder " +
        "(tokenmarket serve, index, keys, replay and migrate use the running one)",
    );
  }
  if (pidFile.port === port) {
    const url = connectionUrl({ port, password: readPassword(dataDir), database: "postgres" });
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && isAlive(pidFile.pid)) {
      if (await canConnect(url, dataDir)) {
        logger.info(
          { postgres_pid: pidFile.pid, port },
          "reusing the embedded Postgres left running by an earlier run",
        );
        return { pid: pidFile.pid };
      }
      await sleep(100);
    }
  }
  logger.info(
    { postgres_pid: pidFile.pid, port: pidFile.port, data_dir: dataDir },
    "stopping the embedded Postgres left running by an earlier run",
  );
  await stopPostmaster(pidFile.pid, logger);
  return undefined;
}

/** Fast shutdown (SIGINT); escalates to immediate shutdown (SIGQUIT) and SIGKILL if it hangs. */
export async function stopPostmaster(pid: number, logger: Logger): Promise<void> {
  const steps: [NodeJS.Signals, number][] = [
    ["SIGINT", 10_000],
    ["SIGQUIT", 5_000],
    ["SIGKILL", 5_000],
  ];
  for (const [signal, waitMs] of steps) {
    if (!isAlive(pid)) return;
    if (signal !== "SIGINT")
      logger.warn({ postgres_pid: pid, signal }, "the embedded Postgres is slow to stop");
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
    const deadline = Date.now() + waitMs;
    while (isAlive(pid) && Date.now() < deadline) await sleep(25);
  }
  if (isAlive(pid)) throw new LaunchError(`the embedded Postgres (pid ${pid}) does not stop`);
}
