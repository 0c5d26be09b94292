// The embedded Postgres launcher (see README.md here): running the Postgres programs: a clean environment, as the server user when we are root.
import { spawn } from "node:child_process";
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
