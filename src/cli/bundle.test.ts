import * as assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, statSync, utimesSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";

const root = path.resolve(import.meta.dirname, "../..");
const inputsFile = path.join(root, "node_modules/.cache/tokenmarket/cli/inputs.json");
const run = (env: NodeJS.ProcessEnv = {}) =>
  promisify(execFile)(process.execPath, [path.join(root, "bin/tokenmarket.js"), "help"], {
    cwd: root,
    env: { ...process.env, ...env },
  });
type Inputs = Record<string, { size: number; mtimeMs: number }>;
const inputs = (): Inputs => JSON.parse(readFileSync(inputsFile, "utf8")) as Inputs;

/**
 * The `tokenmarket` command (and `npm start`) runs the command line from a bundle of the sources
 * (bin/cli-bundle.js), built again when one of them changed.
 */
describe("the command line's bundle", () => {
  it("runs the command, and is built again after a source it holds changed", async () => {
    const first = await run();
    assert.match(first.stdout, /^tokenmarket — market data/);
    const source = "src/cli/env-file.ts";
    assert.ok(inputs()[source] !== undefined, `${source} is one of the bundle's inputs`);

    const file = path.join(root, source);
    const { atime, mtime } = statSync(file);
    const touched = new Date(mtime.getTime() + 60_000);
    utimesSync(file, atime, touched);
    try {
      const second = await run();
      assert.equal(second.stdout, first.stdout);
      assert.equal(inputs()[source]?.mtimeMs, statSync(file).mtimeMs, "built again from the changed source");
    } finally {
      utimesSync(file, atime, mtime);
    }
  });

  it("runs the sources through tsx with TOKENMARKET_SOURCES=1, leaving the bundle as it is", async () => {
    await run();
    const source = "src/cli/env-file.ts";
    const file = path.join(root, source);
    const { atime, mtime, mtimeMs } = statSync(file);
    assert.equal(inputs()[source]?.mtimeMs, mtimeMs, "the bundle is fresh");
    utimesSync(file, atime, new Date(mtime.getTime() + 60_000));
    try {
      const { stdout } = await run({ TOKENMARKET_SOURCES: "1" });
      assert.match(stdout, /^tokenmarket — market data/);
      assert.equal(inputs()[source]?.mtimeMs, mtimeMs, "the stale bundle was not built again");
    } finally {
      utimesSync(file, atime, mtime);
    }
  });
});
