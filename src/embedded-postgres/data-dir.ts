// The embedded Postgres launcher (see README.md here): the data directory: where it lives (relocated for root when needed), initdb, password, log.
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import * as path from "node:path";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Binaries } from "./binaries.js";
import { run, serverEnv } from "./exec.js";
import { canReach, makeReachableFolder, type ServerUser } from "./user.js";

/** The superuser created by initdb, whatever OS user the server runs as. */
export const SUPERUSER = "postgres";
/** Written by initdb's caller into the data directory (mode 600); see `initialise`. */
export const PASSWORD_FILE = "tokenmarket.password";
/** When we are root and the server user cannot reach the project folder (e.g. under /root). */
export const RELOCATED_DATA_ROOT = "/var/lib/tokenmarket";
export const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

export function isInitialised(dataDir: string): boolean {
  return existsSync(path.join(dataDir, "PG_VERSION"));
}

/** Where a data directory of root goes when its server user cannot reach the requested one. */
export function relocatedDataDir(requested: string): string {
  const hash = createHash("sha256").update(requested).digest("hex").slice(0, 8);
  return path.join(RELOCATED_DATA_ROOT, `${path.basename(requested)}-${hash}`);
}

/** The requested directory, or its relocated twin when an earlier start had to move it. */
export function findDataDir(requested: string): string {
  if (isInitialised(requested) || process.getuid?.() !== 0) return requested;
  const relocated = relocatedDataDir(requested);
  return isInitialised(relocated) ? relocated : requested;
}

/**
 * Creates the data directory, hands it to the server user and checks that this user can reach
 * it. As root, an unreachable fresh directory is replaced by one under /var/lib/tokenmarket.
 */
export function prepareDataDir(options: {
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
export async function initialise(options: {
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

export function readPassword(dataDir: string): string | undefined {
  try {
    return readFileSync(path.join(dataDir, PASSWORD_FILE), "utf8").trim();
  } catch {
    return undefined;
  }
}

/** A data directory copied in by root must belong to the server user, or Postgres refuses it. */
export function chownTreeIfRoot(dataDir: string, user: ServerUser): void {
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

export function rotateLog(logFile: string): void {
  try {
    if (statSync(logFile).size > LOG_ROTATE_BYTES) renameSync(logFile, `${logFile}.1`);
  } catch {
    // no log yet
  }
}

export function readLogTail(logFile: string, offset: number, lines = 15): string[] {
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
