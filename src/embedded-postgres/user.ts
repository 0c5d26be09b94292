// The embedded Postgres launcher (see README.md here): the OS user of the server when we are root: Postgres refuses to run as root.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { serverEnv } from "./exec.js";

/** The system user created to run the server when we are root and there is no `postgres` user. */
export const SYSTEM_USER = "tokenmarket-pg";

export type ServerUser = { name: string; uid: number; gid: number };

export function chooseServerUser(existingDataDir: string | undefined, logger: Logger): ServerUser {
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

export function lookupUser(nameOrUid: string): ServerUser | undefined {
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

export function createSystemUser(logger: Logger): ServerUser | undefined {
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

export function canRun(user: ServerUser, command: string, args: string[]): boolean {
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
export function canReach(user: ServerUser, dir: string): boolean {
  return canRun(user, "/bin/sh", ["-c", 'test -x "$1" && test -w "$1"', "sh", dir]);
}

export function makeReachableFolder(dir: string): void {
  mkdirSync(dir, { recursive: true });
  // mkdir's mode is masked by the umask, which may be 077.
  chmodSync(dir, 0o755);
}
