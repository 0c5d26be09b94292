import * as assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliProcess, cleanEnv, runCli, waitFor } from "../_test/cli-process.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { projectRoot } from "../config/load.js";

const KEY = "rate-leases-test-key-0123456789abcdef0123";
const MAX = 40;
const WINDOW_MS = 8000;
/** How long the load lasts: well inside one window, which starts at the first request. */
const LOAD_MS = 2500;

describe("one key's rate limit across two real `tokenmarket serve` processes", () => {
  let testDb: TestDb;
  let dir: string;
  const procs: CliProcess[] = [];
  before(async () => {
    testDb = await createTestDb();
    dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-rate-leases-"));
  });
  after(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    await testDb?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("allows at most the limit in a window across both, most of it, and 429s carry Retry-After", async (t) => {
    // The devnet chain with nothing listening at its RPC URL: serve only reads the database.
    const devnetConfig = JSON.parse(readFileSync(path.join(projectRoot, "config/devnet.json"), "utf8"));
    const chain = { ...devnetConfig.chains[0], rpc: [`http://127.0.0.1:${await freePort()}`] };
    const env = cleanEnv({
      DATABASE_URL: testDb.url,
      TOKENMARKET_API_KEYS: `leases:${KEY}`,
      TOKENMARKET__api__rateLimit__max: String(MAX),
      TOKENMARKET__api__rateLimit__windowMs: String(WINDOW_MS),
    });
    const bases: string[] = [];
    for (const name of ["a", "b"]) {
      const port = await freePort();
      const configFile = path.join(dir, `${name}.json`);
      writeFileSync(
        configFile,
        JSON.stringify({ devnet: { enabled: false }, api: { port, demoKey: false }, chains: [chain] }),
      );
      const proc = runCli(["serve", "--config", configFile], env);
      procs.push(proc);
      bases.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(
      bases.map((base, i) =>
        waitFor(
          `serve ${i}`,
          async () => ((await fetch(`${base}/healthz`)).status === 200 ? true : undefined),
          60_000,
          { output: () => (procs[i] as CliProcess).output() },
        ),
      ),
    );

    // Eight clients per process, each sending one request after another until the load ends.
    const answers: { status: number; retryAfter: string | null; process: number }[] = [];
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const process = i % 2;
        while (Date.now() - started < LOAD_MS) {
          const r = await fetch(`${bases[process]}/v1/tokens/search?searchString=WETH`, {
            headers: { "x-api-key": KEY },
          });
          await r.arrayBuffer();
          answers.push({ status: r.status, retryAfter: r.headers.get("retry-after"), process });
        }
      }),
    );
    const elapsed = Date.now() - started;
    const allowed = answers.filter((a) => a.status !== 429);
    const refused = answers.filter((a) => a.status === 429);
    t.diagnostic(
      `${answers.length} requests in ${elapsed} ms: ${allowed.length} allowed (${allowed.filter((a) => a.process === 0).length} + ${allowed.filter((a) => a.process === 1).length}), ${refused.length} refused; limit ${MAX}`,
    );
    assert.ok(elapsed < WINDOW_MS, `the load (${elapsed} ms) fits in one window`);
    // The database is empty: the route answers 404 (no such token), after the key and its limit.
    for (const a of allowed) assert.ok(a.status === 200 || a.status === 404, `status ${a.status}`);
    assert.ok(allowed.length <= MAX, `${allowed.length} allowed in one window, the limit is ${MAX}`);
    assert.ok(allowed.length >= MAX * 0.8, `${allowed.length} allowed: at least 80 % of the limit is used`);
    assert.ok(refused.length > 0, "the load goes beyond the limit");
    for (const a of refused) {
      assert.match(a.retryAfter ?? "", /^\d+$/, "a 429 says when to retry");
      assert.ok(Number(a.retryAfter) >= 1 && Number(a.retryAfter) <= WINDOW_MS / 1000);
    }

    for (const p of procs) p.child.kill("SIGTERM");
    for (const p of procs) assert.equal(await p.exited, 0, p.output());
  });
});
