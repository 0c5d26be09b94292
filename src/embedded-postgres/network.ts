// The embedded Postgres launcher (see README.md here): the port, connecting and readiness, and start failures told in one line.
import { createServer } from "node:net";
import * as path from "node:path";
import pg from "pg";
import { LaunchError } from "../internal/errors.js";
import { PASSWORD_FILE, readLogTail, SUPERUSER } from "./data-dir.js";

export function portTakenError(port: number): LaunchError {
  return new LaunchError(
    `port ${port} on 127.0.0.1 is taken by another program, so the embedded Postgres cannot listen on it: set database.embedded.port (or TOKENMARKET__database__embedded__port) to a free port, or DATABASE_URL to use an external Postgres`,
  );
}

export async function assertPortFree(port: number): Promise<void> {
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
export async function canConnect(url: string, dataDir: string): Promise<boolean> {
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

export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
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

export function startFailure(options: {
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

export function connectionUrl(options: {
  port: number;
  password: string | undefined;
  database: string;
}): string {
  const auth =
    options.password === undefined ? SUPERUSER : `${SUPERUSER}:${encodeURIComponent(options.password)}`;
  return `postgres://${auth}@127.0.0.1:${options.port}/${encodeURIComponent(options.database)}`;
}
