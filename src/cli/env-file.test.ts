import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";

const root = path.resolve(import.meta.dirname, "../..");
const main = path.join(root, "src/cli/main.ts");
const dirs: string[] = [];

/** Runs `tokenmarket migrate` in `cwd` as the bin does; the configuration file it names shows which value won. */
function migrateIn(cwd: string, env: Record<string, string>): string {
  const { TOKENMARKET_CONFIG: _ignored, ...inherited } = process.env;
  const result = spawnSync(process.execPath, ["--import", import.meta.resolve("tsx"), main, "migrate"], {
    cwd,
    // A bad port as a safety net: should the file be ignored, the default configuration is
    // refused too, instead of starting a Postgres.
    env: { ...inherited, TOKENMARKET__api__port: "-1", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  assert.equal(result.status, 1, result.stderr);
  return result.stderr;
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "tm-dotenv-"));
  dirs.push(dir);
  return dir;
}

describe("the .env file", () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("is read at start from the working directory", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, ".env"), "# comment\nTOKENMARKET_CONFIG=/nonexistent/from-dotenv.json\n");
    assert.match(migrateIn(dir, {}), /cannot read \/nonexistent\/from-dotenv\.json/);
  });

  it("loses to a variable set in the real environment", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, ".env"), "TOKENMARKET_CONFIG=/nonexistent/from-dotenv.json\n");
    const stderr = migrateIn(dir, { TOKENMARKET_CONFIG: "/nonexistent/from-env.json" });
    assert.match(stderr, /cannot read \/nonexistent\/from-env\.json/);
    assert.doesNotMatch(stderr, /from-dotenv/);
  });

  it("may be missing", () => {
    const stderr = migrateIn(tempDir(), { TOKENMARKET_CONFIG: "/nonexistent/from-env.json" });
    assert.match(stderr, /cannot read \/nonexistent\/from-env\.json/);
  });
});
