/**
 * Scale-out figure: requests/s of the API as one and as two separate processes (each its own
 * Node process, pools, answer cache and LISTEN connection; one shared rate budget per key in
 * Postgres), beside a bare Fastify hello-world measured in the same run, all on this machine.
 *
 *   npx tsx bench/scale-out.ts            (BENCH_SECONDS=5, BENCH_CONNECTIONS=50 by default)
 *
 * The load is a hot (cached) answer, so the figure is the per-request cost of the API itself:
 * key check, the rate-limit counter (one INSERT … ON CONFLICT on the primary with the "database"
 * store), routing and serialisation. Two processes are measured with one autocannon per process,
 * run at the same time, and their rates summed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpus } from "node:os";
import * as path from "node:path";
import { fixture, loadMarketFixture } from "../src/_test/market-fixture.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { measure, startHelloWorld } from "./api.js";
import { openBenchServer, withScratchDb } from "./database.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const say = (line: string) => process.stderr.write(`${line}\n`);

async function startChild(dbUrl: string, store: string): Promise<{ base: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(import.meta.dirname, "scale-out-child.ts")],
    {
      env: { ...process.env, BENCH_DB_URL: dbUrl, BENCH_RATE_STORE: store },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const base = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`API child exited with ${code}`)));
  });
  return { base, child };
}

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });

async function main() {
  const logger = createSilentLogger();
  const server = await openBenchServer(undefined, logger, "scale-out");
  try {
    await withScratchDb(server.url, { name: "scaleout", max: 4 }, async (db) => {
      const { key } = await loadMarketFixture(db);
      const url = (db.options as { connectionString: string }).connectionString;
      const paths = [`/api/v1/assets?asset_ids=${fixture.weth}:1,${fixture.usdc}:1`];
      const hello = await startHelloWorld();
      const rows: { name: string; rps: number; p50: number; p99: number; non2xx: number }[] = [];
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
          non2xx: per.reduce((s, r) => s + r.non2xx + r.errors, 0),
        };
        rows.push(row);
        say(`${name}: ${row.rps} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, non-2xx/errors ${row.non2xx}`);
      };
      try {
        await run("hello-world (bare Fastify)", [hello.base], false);
        for (const store of ["database", "memory"]) {
          const one = await startChild(url, store);
          try {
            await run(`API, 1 process, rate limits in ${store}`, [one.base], true);
            const two = await startChild(url, store);
            try {
              await run(`API, 2 processes, rate limits in ${store}`, [one.base, two.base], true);
            } finally {
              await stopChild(two.child);
            }
          } finally {
            await stopChild(one.child);
          }
        }
        await run("hello-world (bare Fastify), again", [hello.base], false);
      } finally {
        await hello.close();
      }
      const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}`;
      process.stdout.write(
        `\n${machine}, ${connections} connections, ${seconds} s each, hot answer of /api/v1/assets\n\n| run | req/s | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|\n${rows
          .map((r) => `| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.non2xx} |`)
          .join("\n")}\n`,
      );
    });
  } finally {
    await server.close();
  }
}

await main();
