import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliProcess, cleanEnv, runCli, waitFor } from "../_test/cli-process.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { rotateDemoKey } from "../store/api-keys.js";

const KEY = "roles-test-key-0123456789abcdef0123456789";

describe("roles: tokenmarket index and tokenmarket serve as separate processes", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-roles-"));
  let devnet: IndexerDevnet;
  let testDb: TestDb;
  const procs: CliProcess[] = [];
  before(async () => {
    [devnet, testDb] = await Promise.all([startIndexerDevnet({ historyDays: 0.2, seed: 7 }), createTestDb()]);
  });
  after(async () => {
    for (const p of procs) p.child.kill("SIGKILL");
    await devnet?.stop();
    await testDb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("index writes, serve answers, each with its own /healthz, /readyz and /metrics", async () => {
    const [apiPort, healthPort] = [await freePort(), await freePort()];
    const configFile = path.join(dir, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        devnet: { enabled: false },
        api: { port: apiPort, demoKey: false },
        indexer: { port: healthPort },
        chains: [devnet.chain({ maxLagBlocks: 2 })],
      }),
    );
    // A demo key left by an earlier demo on this database: a configuration without one revokes it.
    const leftover = await rotateDemoKey(testDb.db);
    const env = cleanEnv({ DATABASE_URL: testDb.url, TOKENMARKET_API_KEYS: `roles:${KEY}` });
    const index = runCli(["index", "--config", configFile], env);
    const serve = runCli(["serve", "--config", configFile], env);
    procs.push(index, serve);
    const health = `http://127.0.0.1:${healthPort}`;
    const api = `http://127.0.0.1:${apiPort}`;

    const ready = await waitFor(
      "the indexer's /readyz",
      async () => {
        const r = await fetch(`${health}/readyz`);
        return r.status === 200
          ? ((await r.json()) as { role: string; chains: { chain_id: number; ready: boolean }[] })
          : undefined;
      },
      90_000,
    ).catch((error) => {
      throw new Error(`${(error as Error).message}\nindex output:\n${index.output()}`);
    });
    assert.equal(ready.role, "index");
    assert.deepEqual(
      ready.chains.map((c) => [c.chain_id, c.ready]),
      [[devnet.chainId, true]],
    );
    assert.equal((await fetch(`${health}/healthz`)).status, 200);
    const indexMetrics = await (await fetch(`${health}/metrics`)).text();
    assert.match(
      indexMetrics,
      new RegExp(`tokenmarket_indexed_block\\{chain_id="${devnet.chainId}"\\} \\d+`),
    );

    await waitFor(
      "the API's /readyz",
      async () => ((await fetch(`${api}/readyz`)).status === 200 ? true : undefined),
      30_000,
    );
    assert.equal((await fetch(`${api}/healthz`)).status, 200);
    const search = await fetch(`${api}/v1/tokens/search?searchString=WETH`, {
      headers: { "x-api-key": KEY },
    });
    assert.equal(search.status, 200);
    const found = (await search.json()) as unknown[];
    assert.ok(found.length > 0, "serve answers from what index wrote");
    const withLeftover = await fetch(`${api}/v1/tokens/search?searchString=WETH`, {
      headers: { "x-api-key": leftover },
    });
    assert.equal(
      withLeftover.status,
      403,
      "the old demo key does not survive into a configuration without one",
    );
    assert.match(await (await fetch(`${api}/metrics`)).text(), /tokenmarket_http_requests_total/);
    // serve runs no indexer: its /metrics has no indexer throughput, and index serves no API.
    assert.equal(
      (await fetch(`${health}/v1/tokens/search?searchString=WETH`, { headers: { "x-api-key": KEY } })).status,
      404,
    );

    // A new trade mined now reaches serve through the database alone.
    const before = Number(
      ((await fetch(`${api}/readyz`).then((r) => r.json())) as { chains: { indexed_block: number }[] })
        .chains[0]?.indexed_block,
    );
    await devnet.mineSwaps({ blocks: 2, swapsPerBlock: 2, seed: 3 });
    await waitFor(
      "serve to see the new blocks",
      async () => {
        const r = (await (await fetch(`${api}/readyz`)).json()) as { chains: { indexed_block: number }[] };
        return (r.chains[0]?.indexed_block ?? 0) >= before + 2 ? true : undefined;
      },
      20_000,
    );

    // serve runs no indexer, yet its /readyz tells when none is alive: the indexer's reports stop.
    // The indexer reports its health every 2 s; once it has, its death must show.
    await waitFor(
      "the indexer's first health report",
      async () => ((await testDb.db.query("SELECT 1 FROM indexer_health")).rowCount ? true : undefined),
      10_000,
    );
    index.child.kill("SIGKILL");
    const notReady = await waitFor(
      "serve's /readyz to say no indexer reports",
      async () => {
        const r = await fetch(`${api}/readyz`);
        const body = (await r.json()) as { reasons: string[] };
        return r.status === 503 ? body : undefined;
      },
      // The report's staleness bound (15 s) must pass: awaited for up to 5× that (a loaded machine).
      5 * 15_000,
    ).catch(async (error) => {
      const last = await (await fetch(`${api}/readyz`)).text();
      throw new Error(`${(error as Error).message}\nlast /readyz: ${last}`);
    });
    assert.match(
      notReady.reasons.join("; "),
      new RegExp(`no indexer has reported on chain ${devnet.chainId}`),
    );

    serve.child.kill("SIGTERM");
    assert.equal(await serve.exited, 0, serve.output());
  });

  it("start on the real-chain sample with no RPC variables stops with one line naming them", async () => {
    const p = runCli(["start"], cleanEnv({ TOKENMARKET_CONFIG: "config/mainnet.example.json" }));
    procs.push(p);
    const code = await p.exited;
    assert.equal(code, 1);
    // One line for the operator; structured log lines (JSON) may accompany it.
    const lines = p
      .output()
      .trim()
      .split("\n")
      .filter((line) => !line.startsWith("{"));
    assert.equal(lines.length, 1, p.output());
    assert.match(
      lines[0] as string,
      /^tokenmarket: no JSON-RPC URL for chain 1 \(Ethereum\), 56 \(BNB Chain\), 137 \(Polygon\): set TOKENMARKET_RPC_1, TOKENMARKET_RPC_56, TOKENMARKET_RPC_137/,
    );
  });
});
