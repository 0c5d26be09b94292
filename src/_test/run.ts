/**
 * `npm test`: global setup, Node's test runner, teardown.
 *
 *   npm test                                   every src/ bench/ web/ *.test.ts
 *   npm test -- src/decode src/store/db.test.ts  only these folders/files (or path fragments)
 *   npm test -- --test-name-pattern=reorg      options starting with "-" go to `node --test`
 *
 * Setup starts a throwaway Postgres (the embedded binaries, a fresh temporary folder, a free
 * port) unless TEST_DATABASE_URL names a server, and migrates a template database there. Test
 * files get TEST_PG_URL (a URL for admin work) and TEST_TEMPLATE_DB; `createTestDb()` copies the
 * template into a database of their own. Teardown always runs: after the tests, on failure and
 * on SIGINT/SIGTERM/SIGHUP.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../embedded-postgres/index.js";
import { LaunchError } from "../internal/errors.js";
import { createSilentLogger } from "../internal/logger.js";
import { createDb } from "../store/db.js";
import { migrate } from "../store/migrate.js";
import { withAdmin } from "./db.js";
import { freePort } from "./free-port.js";
import { createDatabase, dropDatabasesStartingWith, markTemplate } from "./sql.js";

const projectRoot = path.resolve(import.meta.dirname, "../..");
const testRoots = ["src", "bench", "web"];
const skippedFolders = new Set(["node_modules", "dist", ".data", ".cache", ".git"]);
const CONCURRENCY = 2;

type Setup = {
  adminUrl: string;
  templateDb: string;
  server?: EmbeddedPostgres;
  tempDir?: string;
  /** Stops the server and removes the folder should this process be SIGKILLed. */
  watchdog?: ChildProcess;
};

const say = (message: string) => process.stderr.write(`# ${message}\n`);

async function main(): Promise<number> {
  const { files, runnerOptions } = selectTestFiles(process.argv.slice(2));
  if (files.length === 0) {
    say(`no test files match ${process.argv.slice(2).join(" ")}`);
    return 1;
  }

  let interrupted: NodeJS.Signals | undefined;
  let runner: ChildProcess | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = signal;
    say(`${signal}: stopping the tests`);
    runner?.kill(signal);
    // A runner that ignores the signal is killed, so that teardown still runs.
    setTimeout(() => runner?.kill("SIGKILL"), 10_000).unref();
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);

  let setup: Setup | undefined;
  try {
    setup = await globalSetup();
    if (interrupted) return exitCodeOf(interrupted);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--test", `--test-concurrency=${CONCURRENCY}`, ...runnerOptions, ...files],
      {
        cwd: projectRoot,
        stdio: "inherit",
        env: { ...process.env, TEST_PG_URL: setup.adminUrl, TEST_TEMPLATE_DB: setup.templateDb },
      },
    );
    runner = child;
    if (setup.tempDir && child.pid) writeFileSync(path.join(setup.tempDir, "runner.pid"), String(child.pid));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.once("exit", (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
      child.once("error", (error) => {
        say(`cannot run the test runner: ${error.message}`);
        resolve([1, null]);
      });
    });
    if (interrupted) return exitCodeOf(interrupted);
    return code ?? exitCodeOf(signal ?? "SIGTERM");
  } catch (error) {
    say(
      `test setup failed: ${error instanceof LaunchError ? error.message : ((error as Error).stack ?? error)}`,
    );
    return 1;
  } finally {
    await globalTeardown(setup).catch((error: Error) => say(`teardown failed: ${error.message}`));
  }
}

async function globalSetup(): Promise<Setup> {
  const started = Date.now();
  const runId = randomBytes(4).toString("hex");
  const templateDb = `tm_${runId}_template`;
  const setup: Setup = { adminUrl: process.env.TEST_DATABASE_URL ?? "", templateDb };
  try {
    if (!setup.adminUrl) {
      // Reachable by the server user when we are root (mkdtemp makes it 700).
      setup.tempDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-test-"));
      chmodSync(setup.tempDir, 0o755);
      setup.server = await startThrowawayPostgres(path.join(setup.tempDir, "postgres"));
      setup.adminUrl = setup.server.adminUrl;
      setup.watchdog = startWatchdog(setup.server.pid, setup.tempDir);
    }
    const serverMs = Date.now() - started;
    await createTemplate(setup.adminUrl, templateDb);
    const where = setup.server ? `embedded on port ${setup.server.port}` : "TEST_DATABASE_URL";
    say(
      `test setup: Postgres ${where} in ${serverMs} ms, template migrated in ${Date.now() - started - serverMs} ms`,
    );
    return setup;
  } catch (error) {
    await globalTeardown(setup).catch(() => {});
    throw error;
  }
}

async function startThrowawayPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startEmbeddedPostgres({ dataDir, port, logger: createSilentLogger(), ephemeral: true });
    } catch (error) {
      // Another program took the free port in the meantime.
      if (attempt < 3 && error instanceof LaunchError && error.message.includes(`port ${port} `)) continue;
      throw error;
    }
  }
}

async function createTemplate(adminUrl: string, templateDb: string): Promise<void> {
  await withAdmin(adminUrl, (admin) => createDatabase(admin, templateDb));
  const url = new URL(adminUrl);
  url.pathname = `/${templateDb}`;
  const db = createDb({ url: url.toString(), max: 1, applicationName: "tokenmarket-test-setup" });
  try {
    await migrate(db);
  } finally {
    await db.end();
  }
  // Nobody may connect to the template: CREATE DATABASE … TEMPLATE fails while anyone is.
  await withAdmin(adminUrl, (admin) => markTemplate(admin, templateDb));
}

async function globalTeardown(setup: Setup | undefined): Promise<void> {
  if (!setup) return;
  if (setup.server) {
    await setup.server.stop();
  } else if (setup.adminUrl) {
    // An external server outlives us: drop the template and whatever test databases remain.
    await withAdmin(setup.adminUrl, (admin) =>
      dropDatabasesStartingWith(admin, setup.templateDb.replace(/_template$/, "_")),
    );
  }
  if (setup.watchdog?.pid) {
    try {
      process.kill(-setup.watchdog.pid, "SIGKILL"); // its process group: the shell and its `sleep`
    } catch {
      // already gone
    }
  }
  if (setup.tempDir) rmSync(setup.tempDir, { recursive: true, force: true });
}

/**
 * A shell that outlives a SIGKILL of this process: it then stops the test runner (its pid is
 * written to runner.pid) and the server, and removes the temporary folder. Postgres runs in its
 * own process group, so nothing else would.
 */
function startWatchdog(postgresPid: number, tempDir: string): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
    '[ -f "$3/runner.pid" ] && kill -TERM "$(cat "$3/runner.pid")" 2>/dev/null; kill -INT "$2" 2>/dev/null; ' +
    'for i in $(seq 50); do [ -e "$3/postgres/postmaster.pid" ] || break; sleep 0.1; done; rm -rf "$3"';
  const watchdog = spawn(
    "/bin/sh",
    ["-c", script, "watchdog", String(process.pid), String(postgresPid), tempDir],
    {
      detached: true,
      stdio: "ignore",
    },
  );
  watchdog.unref();
  return watchdog;
}

/**
 * The `*.test.ts` files under src/, bench/ and web/; with arguments, those under the named
 * files or folders, or whose path contains an argument that is not a path. Arguments starting
 * with "-" are options of `node --test` (give values with "=").
 */
function selectTestFiles(args: string[]): { files: string[]; runnerOptions: string[] } {
  const runnerOptions = args.filter((arg) => arg.startsWith("-"));
  const filters = args.filter((arg) => !arg.startsWith("-"));
  const all = testRoots.flatMap((root) => findTestFiles(path.join(projectRoot, root))).sort();
  const files = all.filter((file) => {
    if (filters.length === 0) return true;
    return filters.some((filter) => {
      const target = path.resolve(filter);
      if (existsSync(target)) return file === target || file.startsWith(`${target}${path.sep}`);
      return path.relative(projectRoot, file).includes(filter);
    });
  });
  return { files: files.map((file) => path.relative(projectRoot, file)), runnerOptions };
}

function findTestFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return skippedFolders.has(entry.name) ? [] : findTestFiles(full);
    return entry.isFile() && entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

function exitCodeOf(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return 128 + (numbers[signal] ?? 0);
}

process.exitCode = await main();
