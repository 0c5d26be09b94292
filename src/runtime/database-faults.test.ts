import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type CliProcess, cleanEnv, runCli, stopProcess, waitFor } from "../_test/cli-process.js";
import { queryOnce as query } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { readPassword } from "../embedded-postgres/data-dir.js";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../embedded-postgres/index.js";
import { connectionUrl } from "../embedded-postgres/network.js";
import { createSilentLogger } from "../internal/logger.js";

/** How long the database stays stopped in the outage test. */
const OUTAGE_MS = 30_000;

type Readyz = { status: string; reasons: string[] };

/** What the indexer has stored up to block `upTo`: it must be there whole after the fault. */
async function storedUpTo(url: string, upTo: number) {
  const [row] = await query<{ swaps: string; pools: string; tokens: string }>(
    url,
    `SELECT (SELECT count(*) FROM swaps WHERE block_number <= ${upTo}) AS swaps,
            (SELECT count(*) FROM pools WHERE created_block <= ${upTo}) AS pools,
            (SELECT count(*) FROM tokens) AS tokens`,
  );
  return row;
}

const indexedBlock = async (url: string) =>
  Number((await query<{ b: string }>(url, "SELECT min(indexed_block) AS b FROM sync_state"))[0]?.b ?? -1);

/**
 * The database under a running `tokenmarket start`, as an operator would see it fail: its
 * embedded Postgres killed (the service restarts it and answers data again, nothing lost), and
 * an external Postgres stopped for 30 s (readiness returns within 5 s of its return, and never
 * blames the node for the database's outage).
 */
describe("database faults under a running service", { timeout: 15 * 60_000 }, () => {
  const root = mkdtempSync(path.join(tmpdir(), "tokenmarket-db-faults-"));
  // Run as root, Postgres runs as another user, who must reach the folder (else it is relocated).
  chmodSync(root, 0o755);
  const procs: CliProcess[] = [];
  const servers: EmbeddedPostgres[] = [];
  after(async () => {
    for (const p of procs) await stopProcess(p, 30_000);
    for (const s of servers) await s.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  });

  const startService = async (name: string, extra: Record<string, string>) => {
    const apiPort = await freePort();
    const env = cleanEnv({
      TOKENMARKET__api__port: String(apiPort),
      TOKENMARKET__devnet__port: String(await freePort()),
      TOKENMARKET__devnet__historyDays: "0",
      // A block a second: trades to count, and a lag that grows while the database is away.
      TOKENMARKET__devnet__liveBlockIntervalMs: "1000",
      LOG_LEVEL: "info",
      ...extra,
    });
    const service = runCli(["start"], env, { name, keepChars: 400_000 });
    procs.push(service);
    await waitFor(
      `${name} to be ready`,
      async () => {
        if (service.child.exitCode !== null) throw new Error(`${name} exited:\n${service.output()}`);
        return service.output().includes("tokenmarket is running") ? true : undefined;
      },
      240_000,
      { output: service.output },
    );
    const key = /demo API key[^:]*: (\S+)/.exec(service.output())?.[1];
    assert.ok(key, `the demo key is printed:\n${service.output().slice(-2000)}`);
    const base = `http://127.0.0.1:${apiPort}`;
    // WETH's search, then (fresh: true) a search not asked before, whose answer comes from the
    // database, never the answer cache: 200 or 404 (no token matches) when the database answers,
    // 503 while it cannot.
    let searches = 0;
    const data = async (options: { fresh?: boolean } = {}) => {
      searches += 1;
      const text = options.fresh ? `no-such-token-${searches}` : "WETH";
      const response = await fetch(`${base}/v1/tokens/search?searchString=${text}`, {
        headers: { "x-api-key": key },
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      return options.fresh && response.status === 404 ? 200 : response.status;
    };
    const readyz = async (): Promise<Readyz> => {
      const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
      return (await response.json()) as Readyz;
    };
    const healthz = async () => {
      const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    return { service, data, readyz, healthz };
  };

  it("restarts its embedded Postgres killed under it: data answered again within 30 s, nothing lost", async (t) => {
    const dataDir = path.join(root, "embedded");
    const pgPort = await freePort();
    const { service, data, healthz } = await startService("start (embedded)", {
      TOKENMARKET__database__embedded__dataDir: dataDir,
      TOKENMARKET__database__embedded__port: String(pgPort),
    });
    const url = connectionUrl({ port: pgPort, password: readPassword(dataDir), database: "tokenmarket" });
    await waitFor(
      "trades indexed",
      async () => (Number((await storedUpTo(url, 1e12))?.swaps) > 0 ? true : undefined),
      120_000,
      { output: service.output },
    );
    const upTo = await indexedBlock(url);
    const before = await storedUpTo(url, upTo);
    assert.equal(await data(), 200);

    const postmaster = Number(
      /"postgres_pid":(\d+)[^\n]*"msg":"embedded Postgres started"/.exec(service.output())?.[1],
    );
    assert.ok(postmaster > 0, "the Postgres pid is logged");
    const killedAt = Date.now();
    process.kill(postmaster, "SIGKILL");
    await waitFor(
      "the death logged",
      async () =>
        /"level":50[^\n]*"signal":"SIGKILL"[^\n]*"msg":"the embedded Postgres exited unexpectedly; restarting it"/.test(
          service.output(),
        )
          ? true
          : undefined,
      30_000,
      { output: service.output, intervalMs: 100 },
    );
    // The killed postmaster's backends can still answer on connections they already hold for a
    // moment after its death, so a data answer counts only once the restarted Postgres runs.
    const restarted = async () => {
      const state = (await healthz()).body.embedded_postgres as { state?: string } | undefined;
      return state?.state === "running";
    };
    await waitFor(
      "a data answer from the restarted database within 30 s of the kill",
      async () => ((await restarted()) && (await data({ fresh: true })) === 200 ? true : undefined),
      Math.max(0, killedAt + 30_000 - Date.now()),
      {
        output: service.output,
        intervalMs: 100,
      },
    );
    t.diagnostic(`data answered again ${Date.now() - killedAt} ms after the SIGKILL`);

    assert.match(
      service.output(),
      /"level":50[^\n]*"signal":"SIGKILL"[^\n]*"msg":"the embedded Postgres exited unexpectedly; restarting it"/,
      "an error-level line names the death",
    );
    const health = await healthz();
    assert.equal(health.status, 200);
    assert.deepEqual(health.body.embedded_postgres, { state: "running", exits: 1, down_seconds: null });
    assert.deepEqual(await storedUpTo(url, upTo), before, "what was stored before the kill is all there");
    // And the indexer writes again.
    await waitFor(
      "indexing past the kill",
      async () => ((await indexedBlock(url)) > upTo + 2 ? true : undefined),
      60_000,
      { output: service.output },
    );
    assert.equal(await stopProcess(service, 30_000), 0);
  });

  it(`is ready within 5 s of its database's return after ${OUTAGE_MS / 1000} s stopped, never blaming the node`, async (t) => {
    const dataDir = path.join(root, "external");
    const pgPort = await freePort();
    const logger = createSilentLogger();
    const first = await startEmbeddedPostgres({ dataDir, port: pgPort, logger, ephemeral: true });
    servers.push(first);
    const { service, readyz } = await startService("start (external)", { DATABASE_URL: first.url });
    assert.equal((await readyz()).status, "ready");

    const seen: { at: number; status: string; reasons: string[] }[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const answer = await readyz().catch((error: Error) => ({
          status: "error",
          reasons: [error.message],
        }));
        seen.push({ at: Date.now(), status: answer.status, reasons: answer.reasons });
        await sleep(200);
      }
    })();

    await first.stop();
    const stoppedAt = Date.now();
    // The outage itself: the database stays away this long.
    await sleep(OUTAGE_MS);
    const second = await startEmbeddedPostgres({ dataDir, port: pgPort, logger, ephemeral: true });
    servers.push(second);
    const backAt = Date.now();
    await waitFor(
      "/readyz 200 after the database's return",
      async () => (seen.some((s) => s.at > backAt && s.status === "ready") ? true : undefined),
      60_000,
      { output: service.output, intervalMs: 50 },
    );
    polling = false;
    await poller;
    const readyAt = seen.find((s) => s.at > backAt && s.status === "ready")?.at ?? Number.NaN;
    t.diagnostic(
      `database stopped ${backAt - stoppedAt} ms; /readyz 200 ${readyAt - backAt} ms after its return; ${seen.length} answers`,
    );
    assert.ok(
      seen.some((s) => s.at > stoppedAt && s.at < backAt && s.status === "not ready"),
      "not ready while the database is away",
    );
    assert.ok(readyAt - backAt <= 5000, `ready ${readyAt - backAt} ms after the database's return`);
    const blaming = seen.filter((s) => s.reasons.some((r) => /node/.test(r)));
    assert.deepEqual(blaming, [], "no reason names the node");
    assert.equal(await stopProcess(service, 30_000), 0);
  });
});
