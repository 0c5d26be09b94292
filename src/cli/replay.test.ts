import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { assertSameDump, dumpIndexedData } from "../_test/indexer-dump.js";
import { loadConfig, projectRoot } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { replayFixture } from "../replay/replay.js";

const fixtureDir = path.join(projectRoot, "fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05");
const manifest = JSON.parse(readFileSync(path.join(fixtureDir, "manifest.json"), "utf8"));
const csvLines = readFileSync(path.join(fixtureDir, "logs.raw.csv"), "utf8").trimEnd().split("\n");

// The default configuration (the devnet demo), whatever the caller's environment says.
const { TOKENMARKET_CONFIG: _config, ...withoutConfig } = process.env;

/** Runs `tokenmarket replay` as a user would, against the given database. */
function runCli(
  args: string[],
  databaseUrl: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "replay", ...args], {
      cwd: projectRoot,
      env: { ...withoutConfig, DATABASE_URL: databaseUrl },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Writes a recording folder: the fixture's manifest with `changes`, and the given CSV lines. */
function writeRecording(
  root: string,
  name: string,
  changes: Record<string, unknown>,
  lines: string[],
): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "manifest.json"), JSON.stringify({ ...manifest, ...changes }, null, 2));
  writeFileSync(path.join(dir, "logs.raw.csv"), `${lines.join("\n")}\n`);
  return dir;
}

const candleRows = async (t: TestDb, chainId: number) =>
  (
    await t.db.query<{ row: string }>(
      "SELECT row_to_json(c)::text AS row FROM (SELECT * FROM candles WHERE chain_id = $1 ORDER BY pool, resolution, bucket) c",
      [chainId],
    )
  ).rows.map((r) => r.row);

describe("tokenmarket replay", () => {
  const dbs: TestDb[] = [];
  let root: string;
  const newDb = async () => {
    const t = await createTestDb();
    dbs.push(t);
    return t;
  };
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), "tokenmarket-replay-"));
  });
  after(async () => {
    await Promise.all(dbs.map((t) => t.drop()));
    rmSync(root, { recursive: true, force: true });
  });

  it("stores the recorded mainnet day with the same rows as the replay path, prices included", async () => {
    const [viaCli, direct] = await Promise.all([newDb(), newDb()]);
    const run = await runCli([fixtureDir], viaCli.url);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /6046 swaps/);

    const ethereum = loadConfig({ file: path.join(projectRoot, "config/mainnet.example.json"), env: {} });
    const pricing = createPricing({ config: ethereum, logger: createSilentLogger() });
    await replayFixture({ db: direct.db, dir: fixtureDir, derived: pricing, logger: createSilentLogger() });

    const cliDump = await dumpIndexedData(viaCli.db, [1]);
    assert.equal(cliDump.swaps?.length, 6046);
    assertSameDump(cliDump, await dumpIndexedData(direct.db, [1]), "CLI replay vs replayFixture");
    const candles = await candleRows(viaCli, 1);
    assert.ok(candles.length > 1000, `candles written: ${candles.length}`);
    assert.deepEqual(candles, await candleRows(direct, 1));
    // Without starting balances the pool's liquidity is unknown, so it cannot qualify to price WETH;
    // USDC, a reference stablecoin, is priced at 1 USD in every trade.
    const priced = await viaCli.db.query<{ usdc: number; weth: number }>(
      "SELECT count(token0_usd) AS usdc, count(token1_usd) AS weth FROM swaps WHERE chain_id = 1",
    );
    assert.deepEqual(priced.rows[0], { usdc: 6046, weth: 0 });
  });

  it("replays a chain-137 recording with Polygon's genesis and reference tokens, timestamps with +00:00 accepted", async () => {
    const t = await newDb();
    const polygon = {
      chainId: 137,
      factory: "0x1F98431c8aD98523631AE4a59f267346ea31F984",
      token0: { address: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", symbol: "USDC", decimals: 6 },
      token1: { address: "0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619", symbol: "WETH", decimals: 18 },
      // 60 M USDC and 25,000 WETH before the first log: deep enough to qualify the pool to price WETH.
      balances: { reserve0: "60000000000000", reserve1: "25000000000000000000000" },
    };
    const lines = csvLines
      .slice(0, 801)
      .map((line, i) =>
        i === 0 ? line : line.replace(/^(\d+),(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),/, "$1,$2T$3+00:00,"),
      );
    const dir = writeRecording(root, "polygon", polygon, lines);
    const run = await runCli([dir], t.url);
    assert.equal(run.code, 0, run.stderr);
    const chain = await t.db.query<{ genesis_hash: string; name: string }>(
      "SELECT genesis_hash, name FROM chains WHERE chain_id = 137",
    );
    assert.deepEqual(chain.rows[0], {
      genesis_hash: "0xa9c28ce2141b56c474f1dc504bee9b01eb1bd7d1a507580d5519d4437a97de1b",
      name: "Polygon",
    });
    const swaps = await t.db.query<{ n: string; priced: string; first: Date }>(
      "SELECT count(*) AS n, count(token1_usd) AS priced, min(block_time) AS first FROM swaps WHERE chain_id = 137",
    );
    const stored = swaps.rows[0];
    const expected = lines
      .slice(1)
      .filter((l) => l.includes("0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67")).length;
    assert.equal(Number(stored?.n), expected, "every Swap log stored");
    assert.equal(Number(stored?.priced), expected, "priced through Polygon's USDC");
    assert.equal(stored?.first.toISOString(), "2024-01-05T00:00:23.000Z", "+00:00 read as UTC");
  });

  it("starting balances from --balances price WETH; the output says how to see the data and why the demo does not serve it", async () => {
    const t = await newDb();
    const dir = writeRecording(root, "with-balances", {}, csvLines.slice(0, 801));
    // 60 M USDC and 25,000 WETH before the first log: deep enough to qualify the pool to price WETH.
    const run = await runCli([dir, "--balances", "60000000000000,25000000000000000000000"], t.url);
    assert.equal(run.code, 0, run.stderr);
    const priced = await t.db.query<{ n: string; usdc: string; weth: string }>(
      "SELECT count(*) AS n, count(token0_usd) AS usdc, count(token1_usd) AS weth FROM swaps WHERE chain_id = 1",
    );
    const row = priced.rows[0];
    assert.ok(Number(row?.n) > 700, `swaps stored: ${row?.n}`);
    assert.deepEqual([row?.usdc, row?.weth], [row?.n, row?.n], "every trade priced, WETH too");
    // The default configuration (the devnet demo) lacks chain 1: said, with what to run instead.
    assert.match(run.stdout, /chain 1 is not in this configuration \(config\/devnet\.json\)/);
    assert.match(
      run.stdout,
      /^ {2}TOKENMARKET_CONFIG=config\/mainnet\.example\.json npx tokenmarket serve /m,
    );
    assert.match(
      run.stdout,
      /curl -H "x-api-key: \$KEY" "http:\/\/127\.0\.0\.1:8080\/api\/v1\/candles\?pair_id=0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640:1&asset_id=0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2:1&interval=1h&from=2024-01-05T00:00:\d\dZ&to=2024-01-05T\d\d:\d\d:\d\dZ"/,
    );
    assert.doesNotMatch(run.stdout, /Without the pool's starting balances/);

    const without = await runCli(
      [writeRecording(root, "without-balances", {}, csvLines.slice(0, 11))],
      (await newDb()).url,
    );
    assert.equal(without.code, 0, without.stderr);
    assert.match(
      without.stdout,
      /Without the pool's starting balances \(0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640\)/,
    );

    const malformed = await runCli([dir, "--balances", "60000000000000"], t.url);
    assert.equal(malformed.code, 1);
    assert.match(
      malformed.stderr,
      /--balances 60000000000000: expected RESERVE0,RESERVE1 or POOL=RESERVE0,RESERVE1/,
    );
  });

  it("a malformed file is one line naming the file, line and column, and stores nothing", async () => {
    const t = await newDb();
    const bad = [...csvLines.slice(0, 10)];
    bad[6] = (bad[6] as string).replace(/,2024-01-05 /, ",2024-13-05 ");
    const dir = writeRecording(root, "bad-time", {}, bad);
    const run = await runCli([dir], t.url);
    assert.equal(run.code, 1);
    const message = run.stderr.trim();
    assert.equal(message.split("\n").length, 1, `one line: ${message}`);
    assert.match(message, /logs\.raw\.csv line 7, column 2 \(block_timestamp\): "2024-13-05 /);

    const badTopics = [...csvLines.slice(0, 10)];
    badTopics[3] = (badTopics[3] as string).replace('"[""0xc4', '"[""0xzz');
    const run2 = await runCli([writeRecording(root, "bad-topics", {}, badTopics)], t.url);
    assert.equal(run2.code, 1);
    assert.match(run2.stderr, /line 4, column 6 \(topics\)/);

    const dir3 = writeRecording(root, "bad-manifest", { token0: { address: "0x12" } }, csvLines.slice(0, 10));
    const run3 = await runCli([dir3], t.url);
    assert.equal(run3.code, 1);
    assert.match(run3.stderr, /manifest\.json: token0\.address: expected a 20-byte 0x address/);

    const stored = await t.db.query<{ n: string }>("SELECT count(*) AS n FROM swaps");
    assert.equal(Number(stored.rows[0]?.n), 0, "nothing stored");
  });

  it("days out of order: given together they are merged in order; a later older day is refused with a message", async () => {
    const header = csvLines[0] as string;
    const body = csvLines.slice(1, 1201);
    const day1 = writeRecording(root, "day1", {}, [header, ...body.slice(0, 600)]);
    const day2 = writeRecording(root, "day2", {}, [header, ...body.slice(600)]);
    const whole = writeRecording(root, "whole", {}, [header, ...body]);

    const [together, reference, separately] = await Promise.all([newDb(), newDb(), newDb()]);
    assert.equal((await runCli([day2, day1], together.url)).code, 0);
    assert.equal((await runCli([whole], reference.url)).code, 0);
    assertSameDump(
      await dumpIndexedData(together.db, [1]),
      await dumpIndexedData(reference.db, [1]),
      "two days in reverse order in one command",
    );

    assert.equal((await runCli([day2], separately.url)).code, 0);
    const refused = await runCli([day1], separately.url);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /at or below block \d+ that chain 1 is already replayed to: replay recordings oldest first/,
    );
    // The same day again is not an error: everything is stored already.
    const again = await runCli([day2], separately.url);
    assert.equal(again.code, 0, again.stderr);
  });
});
