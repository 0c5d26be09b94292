import { deepEqual, equal, notEqual, ok, rejects } from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { queryOnce as query } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { LaunchError } from "../internal/errors.js";
import { createSilentLogger } from "../internal/logger.js";
import { findSetpriv } from "../internal/parent-death.js";
import {
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
  startEmbeddedPostgres,
  stopEmbeddedPostgresIn,
} from "./index.js";

const logger = createSilentLogger();
const childScript = path.join(import.meta.dirname, "../_test/embedded-postgres-child.ts");

// Everything a test starts, for afterEach to clean up even when an assertion failed.
const dirs: string[] = [];
const servers: EmbeddedPostgres[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await Promise.all(servers.splice(0).map((server) => server.stop().catch(() => {})));
  for (const dir of dirs.splice(0)) {
    // Servers orphaned by the killed children.
    await stopEmbeddedPostgresIn({ dataDir: path.join(dir, "pg"), logger }).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh folder; the data directory is `<it>/pg`. Mode 755 so that, as root, the server user reaches it. */
function tempDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-pg-test-"));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return path.join(dir, "pg");
}

async function start(options: Partial<EmbeddedPostgresOptions> & { dataDir: string; port: number }) {
  const server = await startEmbeddedPostgres({ logger, ephemeral: true, ...options });
  servers.push(server);
  return server;
}

/** Alive and not a zombie: an orphaned postgres is reaped by init, or not, depending on the machine. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
}

/** Runs src/_test/embedded-postgres-child.ts: a launcher in another process, as `npm start` is. */
async function startInChild(
  dataDir: string,
  port: number,
  mode: "orphan" | "guarded" = "orphan",
): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", childScript, dataDir, String(port), mode], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`the child exited with code ${code} before starting Postgres`);
  });
  exited.catch(() => {}); // later, when the test kills it
  const [line] = (await Promise.race([once(createInterface({ input: child.stdout }), "line"), exited])) as [
    string,
  ];
  const { pid } = JSON.parse(line) as { pid: number };
  return { child, pid };
}

/** Starts the server from a child process, then SIGKILLs the child: the server stays, orphaned. */
async function orphanServer(dataDir: string, port: number): Promise<{ pid: number }> {
  const { child, pid } = await startInChild(dataDir, port);
  child.kill("SIGKILL");
  await once(child, "exit");
  ok(isRunning(pid), "the server outlives its killed launcher");
  return { pid };
}

describe("startEmbeddedPostgres", () => {
  test("serves queries, stops, and keeps its data across restarts", async (t) => {
    const dataDir = tempDataDir();
    const port = await freePort();

    let began = Date.now();
    const first = await start({ dataDir, port });
    t.diagnostic(`cold start (initdb + start): ${Date.now() - began} ms`);
    equal(first.reused, false);
    equal(first.dataDir, dataDir);
    equal(new URL(first.url).pathname, "/tokenmarket", "the default database");
    await query(first.url, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)");
    ok(
      readFileSync(first.logFile, "utf8").includes("ready to accept connections"),
      "the server logs to its file",
    );

    await first.stop();
    equal(isRunning(first.pid), false, "stop() waits for the exit");
    equal(existsSync(path.join(dataDir, "postmaster.pid")), false, "a clean shutdown");
    await first.stop(); // idempotent

    began = Date.now();
    const second = await start({ dataDir, port });
    t.diagnostic(`warm start: ${Date.now() - began} ms`);
    notEqual(second.pid, first.pid);
    equal(second.url, first.url, "same password, same URL");
    const rows = await query<{ v: number }>(second.url, "SELECT v FROM kept");
    equal(rows[0]?.v, 42, "the data survived the restart");
  });

  test("creates the requested database and requires the generated password", async () => {
    const dataDir = tempDataDir();
    const server = await start({ dataDir, port: await freePort(), database: "other_db" });
    const [row] = await query<{ db: string }>(server.url, "SELECT current_database() AS db");
    equal(row?.db, "other_db");
    const passwordFile = path.join(dataDir, "tokenmarket.password");
    equal(statSync(passwordFile).mode & 0o077, 0, "only its owner reads the password");
    const withoutPassword = new URL(server.url);
    withoutPassword.password = "wrong";
    await rejects(query(withoutPassword.toString(), "SELECT 1"), /password authentication failed/);
  });

  test("reuses a server orphaned by a killed launcher (same port)", async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const orphan = await orphanServer(dataDir, port);

    const server = await start({ dataDir, port });
    equal(server.reused, true);
    equal(server.pid, orphan.pid, "no second server");
    await query(server.url, "SELECT 1");
    await server.stop();
    equal(isRunning(orphan.pid), false, "stop() stops the adopted server");
  });

  test("replaces a server orphaned by a killed launcher when the port changed", async () => {
    const dataDir = tempDataDir();
    const oldPort = await freePort();
    const orphan = await orphanServer(dataDir, oldPort);

    const newPort = await freePort();
    const server = await start({ dataDir, port: newPort });
    equal(server.reused, false);
    equal(isRunning(orphan.pid), false, "the orphan was stopped: never two servers");
    const [row] = await query<{ port: string }>(server.url, "SHOW port");
    equal(row?.port, String(newPort));
  });

  test("starts over a postmaster.pid naming a process that is not our server", async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const first = await start({ dataDir, port });
    await first.stop();
    // As after a SIGKILLed postmaster whose pid now belongs to another process of the server's
    // user: Postgres would take that pid for a live server and refuse to start.
    const { uid, gid } = statSync(dataDir);
    const other = spawn("sleep", ["60"], {
      stdio: "ignore",
      ...(process.getuid?.() === 0 ? { uid, gid } : {}),
    });
    children.push(other);
    await once(other, "spawn");
    const stale = `${other.pid}\n${dataDir}\n0\n${port}\n${dataDir}\n127.0.0.1\n0 0\nready   \n`;
    writeFileSync(path.join(dataDir, "postmaster.pid"), stale);
    writeFileSync(path.join(dataDir, `.s.PGSQL.${port}.lock`), `${other.pid}\n${dataDir}\n0\n${port}\n`);

    const second = await start({ dataDir, port });
    equal(second.reused, false);
    await query(second.url, "SELECT 1");
  });

  test("refuses a data directory whose launcher still runs", async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const { child, pid } = await startInChild(dataDir, port);

    await rejects(start({ dataDir, port }), (error: Error) => {
      ok(error instanceof LaunchError);
      ok(error.message.includes(`in use by process ${child.pid}`), error.message);
      return true;
    });
    ok(isRunning(pid), "the other launcher's server is left alone");
  });

  test("attach: connects to the server another live launcher runs, and leaves it running", async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const { pid } = await startInChild(dataDir, port);

    const attached = await start({ dataDir, port, attach: true });
    equal(attached.pid, pid, "the same server, not a second one");
    await query(attached.url, "SELECT 1");
    await attached.stop();
    ok(isRunning(pid), "stop() of an attached handle leaves the owner's server running");
  });

  test("a taken port is a one-line LaunchError naming the port and the setting", async () => {
    const dataDir = tempDataDir();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen({ host: "127.0.0.1", port: 0 }, resolve));
    const address = blocker.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      await rejects(start({ dataDir, port }), (error: Error) => {
        ok(error instanceof LaunchError, `a LaunchError, not ${error.name}`);
        ok(error.message.includes(`port ${port}`), error.message);
        ok(error.message.includes("database.embedded.port"), error.message);
        ok(error.message.includes("DATABASE_URL"), error.message);
        equal(error.message.includes("\n"), false, "one line");
        return true;
      });
      equal(existsSync(path.join(dataDir, "postmaster.pid")), false, "no server left behind");
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  test("a failed start names the cause from the server log", async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    const server = await start({ dataDir, port });
    await server.stop();
    appendFileSync(path.join(dataDir, "postgresql.conf"), "\nshared_buffers = banana\n");

    await rejects(start({ dataDir, port }), (error: Error) => {
      ok(error instanceof LaunchError);
      ok(error.message.includes('invalid value for parameter "shared_buffers"'), error.message);
      ok(error.message.includes(server.logFile), "names the log file");
      ok(String((error.cause as Error).message).includes("FATAL"), "the cause holds the log's last lines");
      return true;
    });
  });

  test("stops when its launcher is SIGKILLed (setpriv's parent-death signal), cleanly", {
    skip: findSetpriv() === null && "util-linux's setpriv is not installed",
  }, async () => {
    const dataDir = tempDataDir();
    const { child, pid } = await startInChild(dataDir, await freePort(), "guarded");
    ok(isRunning(pid));
    child.kill("SIGKILL");
    await once(child, "exit");
    // A fast shutdown takes a checkpoint first: awaited, with a bound for the failure message.
    const deadline = Date.now() + 30_000;
    while (isRunning(pid) && Date.now() < deadline) await sleep(50);
    equal(isRunning(pid), false, "the server stopped with its launcher");
    equal(existsSync(path.join(dataDir, "postmaster.pid")), false, "by a clean shutdown");
  });

  test("a server killed under us is logged at error level and restarted, with its data", async () => {
    const dataDir = tempDataDir();
    const lines: { level: string; msg: string }[] = [];
    const recording = createSilentLogger();
    for (const level of ["error", "warn"] as const) {
      recording[level] = ((...args: unknown[]) => {
        lines.push({ level, msg: String(args.find((a) => typeof a === "string")) });
      }) as typeof recording.error;
    }
    // Not ephemeral: a commit must be durable (an ephemeral server may lose its last ones in a crash).
    const server = await start({ dataDir, port: await freePort(), logger: recording, ephemeral: false });
    await query(server.url, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)");
    const first = server.pid;
    process.kill(first, "SIGKILL");
    // Back within the restart delays (250 ms doubling to 5 s) once the old backends are gone.
    const deadline = Date.now() + 30_000;
    let rows: { v: number }[] | undefined;
    while (rows === undefined && Date.now() < deadline) {
      rows = await query<{ v: number }>(server.url, "SELECT v FROM kept").catch(() => undefined);
      if (rows === undefined) await sleep(100);
    }
    deepEqual(rows, [{ v: 7 }], "answers again, with its data");
    notEqual(server.pid, first, "a new postmaster");
    // The new server may answer a query a moment before the launcher's own readiness probe has
    // marked it running: await that.
    while (server.health().state !== "running" && Date.now() < deadline) await sleep(50);
    const health = server.health();
    equal(health.state, "running");
    equal(health.exits, 1);
    equal(health.lastExit?.signal, "SIGKILL");
    equal(health.downSince, null);
    deepEqual(
      lines.filter((l) => l.level === "error").map((l) => l.msg),
      ["the embedded Postgres exited unexpectedly; restarting it"],
      "one error line for the death",
    );
    ok(lines.some((l) => l.level === "warn" && l.msg === "the embedded Postgres restarted"));
    await server.stop();
    equal(server.health().state, "stopped");
    equal(isRunning(server.pid), false);
  });

  test("stopEmbeddedPostgresIn stops an orphaned server", async () => {
    const dataDir = tempDataDir();
    const orphan = await orphanServer(dataDir, await freePort());
    equal(await stopEmbeddedPostgresIn({ dataDir, logger }), true);
    equal(isRunning(orphan.pid), false);
    equal(await stopEmbeddedPostgresIn({ dataDir, logger }), false, "nothing left to stop");
  });

  test("as root, runs the server as another user and moves an unreachable data directory", {
    skip: process.getuid?.() !== 0 && "needs root",
  }, async () => {
    const closed = path.join(tempDataDir(), "..", "closed");
    const requested = path.join(closed, "pg");
    rmSync(closed, { recursive: true, force: true });
    mkdirSync(closed, { mode: 0o700 }); // like a project under /root
    const server = await start({ dataDir: requested, port: await freePort() });
    try {
      notEqual(server.dataDir, requested, "relocated");
      notEqual(statSync(server.dataDir).uid, 0, "the data belongs to the server user");
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1];
      ok(uid !== undefined && uid !== "0", `the server runs as a normal user, not uid ${uid}`);
      await query(server.url, "SELECT 1");
      await server.stop();
      const again = await start({ dataDir: requested, port: server.port });
      equal(again.dataDir, server.dataDir, "the same place at the next start");
    } finally {
      await Promise.all(servers.splice(0).map((s) => s.stop()));
      rmSync(server.dataDir, { recursive: true, force: true });
      rmSync(server.logFile, { force: true });
    }
  });
});
