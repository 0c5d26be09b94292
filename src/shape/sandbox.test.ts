import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { freePort } from "../_test/free-port.js";
import { projectRoot } from "../config/load.js";

/**
 * docs/SHAPE.md's operator's sandbox, as written: scripts/shape-sandbox.sh (the page's four steps)
 * on free ports and a data folder of its own, to its end.
 */
describe("the operator's sandbox of docs/SHAPE.md", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-sandbox-"));
  // As root, Postgres runs as another user, who must reach the folder.
  chmodSync(dir, 0o755);
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("indexes the synthetic Ethereum from block 200 with the sample configuration and answers ETH's price and candles", async () => {
    const page = readFileSync(path.join(projectRoot, "docs/SHAPE.md"), "utf8");
    assert.match(page, /scripts\/shape-sandbox\.sh/, "the page names the script");
    const script = readFileSync(path.join(projectRoot, "scripts/shape-sandbox.sh"), "utf8");
    // The page's commands are the script's: same node options, the same configuration and start block.
    assert.match(page, /--pools 2000 --history-blocks 300 --live false/);
    assert.match(script, /POOLS=\$\{POOLS:-2000\}/);
    assert.match(script, /HISTORY_BLOCKS=\$\{HISTORY_BLOCKS:-300\}/);
    assert.match(page, /TOKENMARKET__chains__0__startBlock=200/);
    assert.match(script, /START_BLOCK=\$\{START_BLOCK:-200\}/);

    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith("TOKENMARKET") && !name.startsWith("DATABASE_")) env[name] = value;
    }
    Object.assign(env, {
      NODE_PORT: String(await freePort()),
      API_PORT: String(await freePort()),
      PG_PORT: String(await freePort()),
      DATA: path.join(dir, "shape"),
    });
    const child = spawn("bash", [path.join(projectRoot, "scripts/shape-sandbox.sh")], {
      cwd: dir,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d;
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    assert.equal(code, 0, output);
    assert.match(output, /head 304; indexing from block 200/);
    assert.match(output, /ready after \d+ s: \{"status":"ready"/);
    assert.match(output, /\{"price":"\d+\.\d+","change":"-?\d+(\.\d+)?"\}/);
    assert.match(output, /\[\{"open":\d+(\.\d+)?,"high"/);
  });
});
