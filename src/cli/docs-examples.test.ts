import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { freePort } from "../_test/free-port.js";
import { projectRoot } from "../config/load.js";

/**
 * Every `curl` line of README.md and docs/*.md runs as written against the demo (`tokenmarket
 * start` with config/devnet.json), with the variables its page defines (KEY is the key the demo
 * prints; the pages' http://127.0.0.1:8080 is the demo's address here), and answers the status
 * its page shows at the end of the line (`# 200`).
 */

const run = promisify(execFile);

type Example = { page: string; line: string; expected: number };

/** The ```sh blocks of a page, line by line. */
function shellLines(text: string): string[] {
  const lines: string[] = [];
  let inside = false;
  for (const line of text.split("\n")) {
    if (/^```(sh|bash|shell)\s*$/.test(line)) inside = true;
    else if (line.startsWith("```")) inside = false;
    else if (inside) lines.push(line);
  }
  return lines;
}

function pages(): { page: string; text: string }[] {
  const docs = readdirSync(path.join(projectRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs].map((page) => ({
    page,
    text: readFileSync(path.join(projectRoot, page), "utf8"),
  }));
}

const all = pages();
const examples: Example[] = [];
/** curl lines aimed at another service than the demo, which their page starts. */
const elsewhere: { page: string; line: string }[] = [];
const variables = new Map<string, Record<string, string>>();
for (const { page, text } of all) {
  const vars: Record<string, string> = {};
  for (const line of shellLines(text)) {
    const assignment = /^([A-Z_][A-Z0-9_]*)=(\S+)/.exec(line);
    if (assignment) vars[assignment[1] as string] = assignment[2] as string;
    if (/^\s*curl\s/.test(line) && !/\$BASE|\$DATA|127\.0\.0\.1:8080/.test(line))
      elsewhere.push({ page, line });
    else if (/^\s*curl\s/.test(line)) {
      const status = /#\s*(\d{3})\s*$/.exec(line)?.[1];
      examples.push({ page, line, expected: status === undefined ? 0 : Number(status) });
    }
  }
  variables.set(page, vars);
}

describe("the curl examples of README.md and docs/", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-docs-"));
  chmodSync(dir, 0o755);
  let demo: ChildProcess | undefined;
  let output = "";
  let api = "";
  let key = "";

  before(async () => {
    const [apiPort, devnetPort, pgPort] = [await freePort(), await freePort(), await freePort()];
    api = `http://127.0.0.1:${apiPort}`;
    const env: NodeJS.ProcessEnv = { LOG_FORMAT: "json", LOG_LEVEL: "warn" };
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith("TOKENMARKET") && !name.startsWith("DATABASE_")) env[name] = value;
    }
    Object.assign(env, {
      TOKENMARKET__database__embedded__dataDir: path.join(dir, "postgres"),
      TOKENMARKET__database__embedded__port: String(pgPort),
      TOKENMARKET__api__port: String(apiPort),
      TOKENMARKET__devnet__port: String(devnetPort),
      // A short simulated history: every example's pair has traded, and the start is quick.
      TOKENMARKET__devnet__historyDays: "0.1",
    });
    demo = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "start"], {
      cwd: projectRoot,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    demo.stdout?.on("data", (d: Buffer) => {
      output += d;
    });
    demo.stderr?.on("data", (d: Buffer) => {
      output += d;
    });
    // The banner, printed once /readyz answers 200, holds the demo key.
    const deadline = Date.now() + 600_000;
    for (;;) {
      assert.equal(demo.exitCode, null, `the demo exited:\n${output}`);
      assert.ok(Date.now() < deadline, `the demo is not ready after 600 s:\n${output}`);
      const found = /demo API key[^:]*: (tm_[\w-]+)/.exec(output)?.[1];
      if (found !== undefined) {
        key = found;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(async () => {
    if (demo?.pid !== undefined && demo.exitCode === null) {
      const exited = new Promise((resolve) => demo?.once("exit", resolve));
      process.kill(-demo.pid, "SIGINT");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds the examples, each with the status it answers", () => {
    // A line aimed elsewhere belongs to a walk-through that starts that service on its page
    // (the shape sandbox, a replay's serve): its port is set there. Those are tested with them.
    for (const other of elsewhere) {
      const port = /127\.0\.0\.1:(\d+)/.exec(other.line)?.[1];
      const text = all.find((p) => p.page === other.page)?.text ?? "";
      const started = shellLines(text).some(
        (l) => !/^\s*curl\s/.test(l) && port !== undefined && l.includes(`PORT=${port}`),
      );
      assert.ok(
        started,
        `${other.page}: aimed neither at the demo nor at a service the page starts: ${other.line}`,
      );
    }
    assert.ok(examples.length >= 7, `${examples.length} curl lines aimed at the demo`);
    for (const example of examples)
      assert.ok(example.expected > 0, `${example.page}: no status at the end of: ${example.line}`);
  });

  for (const example of examples) {
    it(`${example.page}: ${example.line.replace(/\s+#.*$/, "").slice(0, 140)}`, async () => {
      const vars = { ...variables.get(example.page), KEY: key, BASE: api, DATA: api };
      for (const [name, value] of Object.entries(vars))
        assert.ok(!value.includes("…"), `${example.page} defines ${name} as ${value}`);
      const line = example.line
        .replaceAll("http://127.0.0.1:8080", api)
        .replace(/^\s*curl\s/, 'curl -sS -o /dev/null -w "%{http_code}" ');
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...vars };
      const { stdout } = await run("sh", ["-c", line], { env });
      assert.equal(Number(stdout.trim()), example.expected, `${example.page}: ${example.line}`);
    });
  }
});
