/**
 * Scale-out figure: requests/s of the API as one and as two real `tokenmarket serve` processes
 * (each its own Node process, pools, answer cache and LISTEN connection, over one Postgres), with
 * the default rate-limit store ("database": budget leases in Postgres, one budget per key across
 * processes) and, for comparison, per-process counting in memory, beside a bare Fastify hello-world
 * measured in the same run (before and after), all on this machine, over loopback.
 *
 *   npm run bench:scale-out        (BENCH_SECONDS=5, BENCH_CONNECTIONS=50 by default)
 *
 * The load is one hot (cached) answer, so the figure is the per-request cost of the API itself:
 * key check, rate limit, routing and serialisation. Two processes are measured with one autocannon
 * per process (half the connections each), run at the same time, and their rates summed. The
 * limit is high enough that no request is refused: the figure is what counting costs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import * as path from "node:path";
import autocannon from "autocannon";
import { freePort } from "../src/_test/free-port.js";
import { fixture, loadMarketFixture } from "../src/_test/market-fixture.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { startHelloWorld } from "./api.js";
import { openBenchServer, withScratchDb } from "./database.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const say = (line: string) => process.stderr.write(`${line}\n`);
const root = path.resolve(import.meta.dirname, "..");

/** The fixture market's configuration (src/_test/market-fixture.ts), as a file for `serve`. */
const configFor = (port: number) => ({
  devnet: { enabled: false },
  tokenLists: ["@uniswap/default-token-list"],
  coins: { ETH: { chain: 1, token: fixture.weth }, BTC: { chain: 1, token: fixture.wbtc } },
  api: { port, demoKey: false },
  chains: [
    {
      id: 1,
      name: "Ethereum",
      rpc: ["http://127.0.0.1:9"],
      dexes: [{ name: "Uniswap V2", protocol: "v2", factory: fixture.factory, fee: 3000 }],
      referenceTokens: {
        stablecoins: [fixture.usdc],
        wrappedNative: fixture.weth,
        wrappedBtc: [fixture.wbtc],
      },
    },
  ],
});

/** autocannon against `base`: rate, latency and the count of each status other than 200. */
async function measure(options: {
  base: string;
  paths: string[];
  key?: string;
  connections: number;
  durationSeconds: number;
}) {
  const result = await autocannon({
    url: options.base,
    connections: options.connections,
    duration: options.durationSeconds,
    workers: 1,
    headers: options.key ? { "x-api-key": options.key } : {},
    requests: options.paths.map((p) => ({ method: "GET", path: p })),
  } as autocannon.Options);
  const other: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
    if (code !== "200") other[code] = (stat as { count: number }).count;
  if (result.errors + result.timeouts > 0) other.errors = result.errors + result.timeouts;
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    other,
  };
}

type Serve = { base: string; child: ChildProcess };

async function startServe(dir: string, dbUrl: string, store: string): Promise<Serve> {
  const port = await freePort();
  const configFile = path.join(dir, `serve-${port}.json`);
  writeFileSync(configFile, JSON.stringify(configFor(port)));
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith("TOKENMARKET") && name !== "DATABASE_URL") env[name] = value;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "serve", "--config", configFile],
    {
      cwd: root,
      env: {
        ...env,
        DATABASE_URL: dbUrl,
        LOG_LEVEL: "warn",
        LOG_FORMAT: "json",
        TOKENMARKET__api__rateLimit__store: store,
        TOKENMARKET__api__rateLimit__max: "100000000",
        TOKENMARKET__api__rateLimit__windowMs: "60000",
        // Key checks under way count as failures of the address until they succeed, and the key's
        // cache entry lives 1 s: 50 connections from one address would get 429s from the wrong-key
        // flood limit each second. This bench measures the per-key limit, so that one is lifted.
        TOKENMARKET__api__failedKeyLimit__max: "1000000",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`serve exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { base, child };
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("serve did not answer /healthz within 60 s");
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const stopServe = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });

async function main() {
  const logger = createSilentLogger();
  const server = await openBenchServer(undefined, logger, "scale-out");
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-scale-out-"));
  try {
    await withScratchDb(server.url, { name: "scaleout", max: 4 }, async (db) => {
      const { key } = await loadMarketFixture(db);
      const url = (db.options as { connectionString: string }).connectionString;
      const paths = [`/api/v1/assets?asset_ids=${fixture.weth}:1,${fixture.usdc}:1`];
      const hello = await startHelloWorld();
      const rows: { name: string; rps: number; p50: number; p99: number; other: Record<string, number> }[] =
        [];
      const run = async (name: string, bases: string[], withKey: boolean) => {
        const per = await Promise.all(
          bases.map((base) =>
            measure({
              base,
              paths: withKey ? paths : ["/"],
              key: withKey ? key : undefined,
              connections: Math.ceil(connections / bases.length),
              durationSeconds: seconds,
            }),
          ),
        );
        const row = {
          name,
          rps: per.reduce((s, r) => s + r.requestsPerSecond, 0),
          p50: Math.max(...per.map((r) => r.p50Ms)),
          p99: Math.max(...per.map((r) => r.p99Ms)),
          other: per.reduce<Record<string, number>>((all, r) => {
            for (const [code, n] of Object.entries(r.other)) all[code] = (all[code] ?? 0) + n;
            return all;
          }, {}),
        };
        rows.push(row);
        say(
          `${name}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, not 200: ${JSON.stringify(row.other)}`,
        );
      };
      const leases = async () =>
        (await db.query<{ n: string }>("SELECT count(*) AS n FROM api_rate_limits")).rows[0]?.n ?? "0";
      try {
        await run("hello-world (bare Fastify)", [hello.base], false);
        for (const store of ["database", "memory"]) {
          const label = store === "database" ? "rate limits leased from Postgres" : "rate limits in memory";
          const one = await startServe(dir, url, store);
          try {
            // A warm-up, so that the first process's answer cache and key check are hot.
            await measure({ base: one.base, paths, key, connections: 10, durationSeconds: 1 });
            await run(`\`serve\` × 1, ${label}`, [one.base], true);
            const two = await startServe(dir, url, store);
            try {
              await measure({ base: two.base, paths, key, connections: 10, durationSeconds: 1 });
              await run(`\`serve\` × 2, ${label}`, [one.base, two.base], true);
            } finally {
              await stopServe(two.child);
            }
          } finally {
            await stopServe(one.child);
          }
          if (store === "database") say(`rate-limit rows in Postgres: ${await leases()}`);
        }
        await run("hello-world (bare Fastify), again", [hello.base], false);
      } finally {
        await hello.close();
      }
      const baseline = rows[0]?.rps ?? 1;
      const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`;
      process.stdout.write(
        `\n${machine}, ${connections} connections, ${seconds} s each, hot answer of /api/v1/assets\n\n| run | req/s | × hello-world | p50 ms | p99 ms | not 200 |\n|---|---:|---:|---:|---:|---|\n${rows
          .map(
            (r) =>
              `| ${r.name} | ${r.rps} | ${(r.rps / baseline).toFixed(2)}× | ${r.p50} | ${r.p99} | ${
                Object.entries(r.other)
                  .map(([code, n]) => `${n} × ${code}`)
                  .join(", ") || "0"
              } |`,
          )
          .join("\n")}\n`,
      );
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

await main();
