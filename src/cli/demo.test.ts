import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { waitFor } from "../_test/cli-process.js";
import { freePort } from "../_test/free-port.js";
import { projectRoot } from "../config/load.js";
import { readPassword } from "../embedded-postgres/data-dir.js";

/**
 * The demo as a user runs it (`tokenmarket start` on a data folder), and what runs beside it:
 * `serve` with a configuration of real chains, `keys`, and a restart of the demo on its data.
 */

const CHAIN = 31337;

type Run = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

/** `tokenmarket ARGS` in a process group of its own (as a shell's job), with `env`. */
function tokenmarket(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: projectRoot,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d;
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  return { child, output: () => output, exited };
}

/** Runs a command to its end: exit code and output. */
async function command(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  const run = tokenmarket(args, env);
  const code = await run.exited;
  return { code, output: run.output() };
}

/** Ctrl-C: SIGINT to the whole group, then the exit. */
async function interrupt(run: Run): Promise<number | null> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return run.exited;
  process.kill(-(run.child.pid as number), "SIGINT");
  return run.exited;
}

async function get(url: string, key?: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { headers: key ? { "x-api-key": key } : {} });
  return { status: response.status, body: await response.text() };
}

describe("the demo on its data folder, and commands beside it", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-demo-"));
  // As root, Postgres runs as another user, who must reach the folder (else it is relocated).
  chmodSync(dir, 0o755);
  const dataDir = path.join(dir, "postgres");
  const runs: Run[] = [];
  let env: NodeJS.ProcessEnv;
  let api: string;
  let pgPort: number;
  let demo: Run;
  let demoKey: string;

  /** The demo key printed in the banner of `run`. */
  const bannerKey = (run: Run) => /demo API key[^:]*: (tm_[\w-]+)/.exec(run.output())?.[1];

  const startDemo = async (): Promise<Run> => {
    const run = tokenmarket(["start"], env);
    runs.push(run);
    return run;
  };

  before(async () => {
    const [apiPort, devnetPort] = [await freePort(), await freePort()];
    pgPort = await freePort();
    api = `http://127.0.0.1:${apiPort}`;
    env = { LOG_FORMAT: "json", LOG_LEVEL: "info" };
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith("TOKENMARKET") && !name.startsWith("DATABASE_")) env[name] = value;
    }
    Object.assign(env, {
      TOKENMARKET__database__embedded__dataDir: dataDir,
      TOKENMARKET__database__embedded__port: String(pgPort),
      TOKENMARKET__api__port: String(apiPort),
      TOKENMARKET__devnet__port: String(devnetPort),
      // A short simulated history: prices from the first blocks, a quick start.
      TOKENMARKET__devnet__historyDays: "0.05",
    });
    demo = await startDemo();
    const deadline = Date.now() + 240_000;
    for (;;) {
      assert.equal(demo.child.exitCode, null, `the demo exited:\n${demo.output()}`);
      assert.ok(Date.now() < deadline, `the demo is not ready after 240 s:\n${demo.output()}`);
      if ((await get(`${api}/readyz`).catch(() => null))?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The banner follows the first /readyz 200 (it is printed once the service is ready).
    demoKey = await waitFor("the banner's demo key", async () => bannerKey(demo), 30_000, {
      intervalMs: 50,
      output: demo.output,
    });
    assert.ok(demoKey, `the banner shows the demo key:\n${demo.output()}`);
  });

  after(async () => {
    for (const run of runs) await interrupt(run).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  it("serve with a configuration of real chains beside the demo fails, and the demo's key still answers", async () => {
    const price = `${api}/v1/coins/price?symbol=ETH`;
    assert.equal((await get(price, demoKey)).status, 200);
    const serve = await command(["serve"], { ...env, TOKENMARKET_CONFIG: "config/mainnet.example.json" });
    assert.equal(serve.code, 1, serve.output);
    assert.match(serve.output, /API port \d+ on 127\.0\.0\.1 is already in use/);
    assert.doesNotMatch(serve.output, /revoked/);
    assert.equal((await get(price, demoKey)).status, 200, "the demo key still answers");
    const list = await command(["keys", "list"], env);
    assert.match(list.output, /\tdemo \(demo\)\t[^\n]*\tactive/);
  });

  it("serve beside the demo offers the demo's key instead of making one", async () => {
    const port = await freePort();
    const serve = tokenmarket(["serve"], { ...env, TOKENMARKET__api__port: String(port) });
    runs.push(serve);
    const config = await waitFor(
      "the second listener's page configuration",
      async () => {
        const r = await get(`http://127.0.0.1:${port}/web-config.json`);
        return r.status === 200 ? (JSON.parse(r.body) as { demoKey?: string }) : undefined;
      },
      60_000,
      { output: serve.output },
    );
    assert.equal(config.demoKey, demoKey);
    assert.equal(await interrupt(serve), 0);
    const demoKeys = (await command(["keys", "list"], env)).output
      .split("\n")
      .filter((line) => line.includes("(demo)"));
    assert.equal(demoKeys.length, 1, demoKeys.join("\n"));
  });

  it("keys beside the running demo: create (a taken name refused), list, revoke one key", async () => {
    // Another Postgres port configured: the keys command uses the port the demo's server listens on.
    const keysEnv = { ...env, TOKENMARKET__database__embedded__port: String(await freePort()) };
    const created = await command(["keys", "create", "--name", "mybot"], keysEnv);
    assert.equal(created.code, 0, created.output);
    const key = /\n {2}(tm_[\w-]+)\n/.exec(created.output)?.[1] as string;
    assert.ok(key, created.output);
    assert.equal((await get(`${api}/v1/coins/price?symbol=ETH`, key)).status, 200);

    const again = await command(["keys", "create", "--name", "mybot"], keysEnv);
    assert.equal(again.code, 1);
    assert.match(again.output, /an active key is already named "mybot" \(#\d+\)/);

    const list = await command(["keys", "list"], keysEnv);
    assert.equal(list.code, 0, list.output);
    const mybots = list.output.split("\n").filter((line) => line.includes("\tmybot\t"));
    assert.equal(mybots.length, 1, list.output);
    assert.match(mybots[0] as string, new RegExp(`^#\\d+\\t${key.slice(0, 7)}…\\tmybot\\t.*\\tactive$`));

    const revoked = await command(["keys", "revoke", "mybot"], keysEnv);
    assert.equal(revoked.code, 0, revoked.output);
    assert.match(revoked.output, /^revoked key #\d+ "mybot"$/m);
    const twice = await command(["keys", "revoke", "mybot"], keysEnv);
    assert.equal(twice.code, 1);
    assert.match(twice.output, /no active key has the id, name or prefix "mybot"/);
    assert.equal((await get(`${api}/v1/coins/price?symbol=ETH`, key)).status, 403);
    // The name is free again once its key is revoked.
    assert.equal((await command(["keys", "create", "--name", "mybot"], keysEnv)).code, 0);
  });

  /**
   * Restarts the demo on its data folder while polling /readyz and ETH's price every 0.2 s (with
   * `key`, which outlives the restart) until it is ready with a price. Every answer from data (a
   * 200 of either) is checked against the node the demo follows now: the stored checkpoint block
   * must be on it with the stored hash. /readyz is never 200 while the price answers 404.
   */
  const restartWatched = async (key: string): Promise<string[]> => {
    const db = new pg.Client({
      connectionString: `postgres://postgres:${encodeURIComponent(readPassword(dataDir) ?? "")}@127.0.0.1:${pgPort}/tokenmarket`,
    });
    // The demo's Postgres stops with it, at the end: that ends this connection too.
    db.on("error", () => {});
    const restarted = await startDemo();
    demo = restarted;
    let connected = false;
    /** The stored checkpoint, and whether the node serves that block with that hash. */
    const checkpointOnNode = async (): Promise<string | null> => {
      if (!connected) {
        await db.connect();
        connected = true;
      }
      // bigint: node-pg gives it as text.
      const { rows } = await db.query<{ indexed_block: string; indexed_block_hash: string | null }>(
        "SELECT indexed_block, indexed_block_hash FROM sync_state WHERE chain_id = $1",
        [CHAIN],
      );
      const row = rows[0];
      if (!row) return "nothing is stored";
      if (row.indexed_block_hash === null) return `block ${row.indexed_block} is stored without its hash`;
      // Where the devnet listens now (its configured port, or another when that one was busy).
      const port = /"component":"devnet","port":(\d+)[^\n]*node started"/.exec(restarted.output())?.[1];
      if (port === undefined) return "the devnet has not started, yet data was answered";
      const answer = await fetch(`http://127.0.0.1:${port}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "eth_getBlockByNumber",
          params: [`0x${Number(row.indexed_block).toString(16)}`, false],
        }),
      });
      const text = await answer.text();
      const block = (JSON.parse(text) as { result?: { hash: string } | null }).result;
      return block?.hash === row.indexed_block_hash
        ? null
        : `the stored block ${row.indexed_block} ${row.indexed_block_hash} is not on the node: ${text.slice(0, 300)}`;
    };

    const seen: string[] = [];
    const deadline = Date.now() + 240_000;
    let readyWithPrice = false;
    while (!readyWithPrice) {
      assert.ok(
        Date.now() < deadline,
        `not ready with a price after 240 s:\n${seen.join("\n")}\n${restarted.output()}`,
      );
      assert.equal(restarted.child.exitCode, null, `the demo exited:\n${restarted.output()}`);
      const at = Date.now();
      // /readyz first, the price after it: a price asked at the same time may be answered from
      // the commit before the one that made the service ready (the commit that brings the prices
      // can be the one that brings the lag within its bound).
      const ready = await get(`${api}/readyz`).catch(() => null);
      const price = await get(`${api}/v1/coins/price?symbol=ETH`, key).catch(() => null);
      if (ready !== null || price !== null) {
        seen.push(`${ready?.status ?? "-"} ${price?.status ?? "-"} ${price?.body ?? ""}`);
        if (ready?.status === 200 || price?.status === 200) {
          // Whatever answered from data was of the chain the node serves now.
          const stale = await checkpointOnNode();
          assert.equal(
            stale,
            null,
            `an answer from data that is not on the node's chain:\n${seen.join("\n")}`,
          );
        }
        assert.ok(
          !(ready?.status === 200 && price?.status === 404),
          `/readyz 200 while the price answers 404:\n${seen.join("\n")}`,
        );
        readyWithPrice = ready?.status === 200 && price?.status === 200;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 200 - (Date.now() - at))));
    }
    await db.end();
    return seen;
  };

  it("a restart on the data folder answers nothing of the previous chain, and is never ready without a price", async () => {
    // A key of our own: it lives through the restarts (the demo key is made anew).
    const created = await command(["keys", "create", "--name", "restart-watch"], env);
    const key = /\n {2}(tm_[\w-]+)\n/.exec(created.output)?.[1] as string;
    assert.ok(key, created.output);

    // The devnet's chain is kept in the data folder: the data stays valid and may be served at once.
    assert.equal(await interrupt(demo), 0);
    const kept = await restartWatched(key);
    assert.ok(kept.length > 0);

    // The devnet's saved chain gone (a new chain, as after a lost or older saved state): the
    // stored data of the old chain must never be answered.
    assert.equal(await interrupt(demo), 0);
    rmSync(path.join(dir, "devnet"), { recursive: true, force: true });
    const anew = await restartWatched(key);
    assert.match(
      demo.output(),
      /the stored data of this devnet is not of the chain its node serves now: dropped/,
    );
    assert.ok(
      anew.some((line) => line.startsWith("503")),
      `indexed afresh before ready:\n${anew.join("\n")}`,
    );
  });
});
