/**
 * The production topology with real processes, as an operator would run it: a Postgres primary and
 * a streaming hot standby (the project's embedded binaries, src/_test/replica.ts), one
 * `tokenmarket index` writing to the primary, two `tokenmarket serve` reading from the standby
 * (DATABASE_REPLICA_URLS) and a third `serve` on the primary alone as the reference. Each is
 * `node --import tsx src/cli/main.ts …` with a configuration file, as a user starts it.
 * src/api/replicas.test.ts checks the same with in-process servers; this one checks that the
 * command line, the environment and the separate processes give the same result.
 */
import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { migrateAt, readinessOf, tradedWethUsdc, wethDataRequests } from "../_test/api-replicas.js";
import { type CliProcess, cleanEnv, runCli, stopProcess, waitFor } from "../_test/cli-process.js";
import { queryOnce } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { type ReplicaPair, startReplicaPair } from "../_test/replica.js";
import type { DeployedPool } from "../devnet/deploy.js";
import { getSyncStatus } from "../store/chain-state.js";
import { createDb, type Db } from "../store/db.js";

const KEY = "topology-test-key-0123456789abcdef012345";
const HISTORY_DAYS = 0.1;
/** A process that ignores SIGTERM this long is killed. */
const STOP_BOUND_MS = 10_000;

type Client = Awaited<ReturnType<typeof createApiClient>>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The processes answer within milliseconds once they can: poll often. */
const FAST = { intervalMs: 20 };

describe("topology: tokenmarket index and two tokenmarket serve processes over a primary and a streaming replica", () => {
  let pair: ReplicaPair;
  let devnet: IndexerDevnet;
  let primaryDb: Db;
  const dir = mkdtempSync(path.join(tmpdir(), "tokenmarket-topology-"));
  const procs: CliProcess[] = [];
  let onReplica: Client[];
  let onPrimary: Client;
  let pool: DeployedPool;
  /** Fixed bounds inside the history for the candles: they do not move with the clock. */
  const candleRange = { from: "", to: "" };

  const id = (address: string) => `${address.toLowerCase()}:${devnet.chainId}`;
  const primaryIndexed = async () =>
    (await getSyncStatus(primaryDb, [devnet.chainId]))[0]?.indexedBlock ?? -1;
  /** Waits until the indexer has stored `block` on the primary. */
  const primaryAt = (what: string, block: number, timeoutMs: number) =>
    waitFor(what, async () => ((await primaryIndexed()) >= block ? true : undefined), timeoutMs, FAST);
  /** The output of every process, for a failure's message. */
  const outputs = () => procs.map((p) => `--- ${p.name}:\n${p.output().slice(-4000)}`).join("\n");

  before(async () => {
    [pair, devnet] = await Promise.all([
      startReplicaPair({
        prepare: migrateAt,
      }),
      // serve runs on the real clock: the history ends an hour before now, so that the
      // time-relative answers (line chart, candles up to now) all contain it.
      startIndexerDevnet({
        historyDays: HISTORY_DAYS,
        seed: 11,
        initialDate: new Date(Date.now() - (HISTORY_DAYS * 86_400 + 3_600) * 1000),
      }),
    ]);
    primaryDb = createDb({ url: pair.primary.url, max: 2 });
    pool = await tradedWethUsdc(devnet);

    const [indexPort, ...apiPorts] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const tokens = devnet.deployment.tokens;
    const configFile = path.join(dir, "config.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        devnet: { enabled: false },
        api: { host: "127.0.0.1", demoKey: false },
        indexer: { port: indexPort },
        database: { replicaMaxLagSeconds: 5 },
        coins: { ETH: { chain: devnet.chainId, token: tokens.WETH.address } },
        chains: [devnet.chain()],
      }),
    );
    const env = (extra: Record<string, string>) =>
      cleanEnv({
        DATABASE_URL: pair.primary.url,
        TOKENMARKET_API_KEYS: `topology:${KEY}`,
        TOKENMARKET__api__rateLimit__max: "100000",
        ...extra,
      });
    const args = (role: string) => [role, "--config", configFile];
    procs.push(runCli(args("index"), env({}), { name: "index", keepChars: 20_000 }));
    for (const [i, port] of apiPorts.entries()) {
      const replicas: Record<string, string> = i < 2 ? { DATABASE_REPLICA_URLS: pair.replica.url } : {};
      const name = i < 2 ? `serve on the replica #${i}` : "serve on the primary";
      procs.push(
        runCli(args("serve"), env({ TOKENMARKET_API_PORT: String(port), ...replicas }), {
          name,
          keepChars: 20_000,
        }),
      );
    }

    try {
      const head = await devnet.head();
      await primaryAt("the indexer at the head", head, 120_000);
      await pair.caughtUp();
      const clients: Client[] = [];
      for (const port of apiPorts) {
        const base = `http://127.0.0.1:${port}`;
        await waitFor(
          `serve's /readyz on ${base}`,
          async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined),
          60_000,
          FAST,
        );
        clients.push(await createApiClient(base, { key: KEY }));
      }
      onReplica = clients.slice(0, 2);
      onPrimary = clients[2] as Client;
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${outputs()}`);
    }
    const first = await devnet.devnet.rpc.request<{ timestamp: string }>("eth_getBlockByNumber", [
      "0x1",
      false,
    ]);
    candleRange.from = new Date(Number(first.timestamp) * 1000).toISOString();
    candleRange.to = new Date(((await devnet.devnet.latestBlock()).timestamp + 60) * 1000).toISOString();
  });

  after(async () => {
    await Promise.all(procs.map((p) => stopProcess(p, STOP_BOUND_MS)));
    await primaryDb?.end().catch(() => {});
    await devnet?.stop().catch(() => {});
    await pair?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const dataRequests = () => wethDataRequests(devnet, pool.address, candleRange);

  const differences = (path: string, a: ApiAnswer, b: ApiAnswer): string[] => {
    const found: string[] = [];
    if (a.status !== 200) found.push(`${path}: status ${a.status}: ${a.text.slice(0, 200)}`);
    if (a.status !== b.status) found.push(`${path}: status ${a.status} against ${b.status}`);
    for (const header of ["x-indexed-block", "x-indexed-at"])
      if (a.headers.get(header) !== b.headers.get(header))
        found.push(`${path}: ${header} ${a.headers.get(header)} against ${b.headers.get(header)}`);
    if (a.text !== b.text)
      found.push(`${path}: body\n  ${a.text.slice(0, 300)}\nagainst\n  ${b.text.slice(0, 300)}`);
    return found;
  };

  /**
   * Every data endpoint answers on both replica servers as on the reference. The processes run on
   * the real clock, so the hour can turn (line chart) or the indexer's 24-hour statistics refresh
   * between two requests: a difference is retried a few times, and stands if it persists.
   */
  const assertSameEverywhere = async (requests: [string, Record<string, string | number>][]) => {
    for (const [path, query] of requests) {
      let found: string[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        if (attempt > 0) await sleep(500);
        const reference = await onPrimary.get(path, query);
        assert.equal(reference.status, 200, `${path}: the primary answers: ${reference.text.slice(0, 300)}`);
        assert.ok(reference.text.length > 2, `${path}: the primary has data to compare: ${reference.text}`);
        const answers = await Promise.all(onReplica.map((client) => client.get(path, query)));
        found = answers.flatMap((answer, i) =>
          differences(path, answer, reference).map((d) => `replica server ${i}: ${d}`),
        );
        if (found.length === 0) break;
      }
      assert.deepEqual(found, [], found.join("\n"));
    }
  };

  it("reads from the replica on both serve processes and answers every data endpoint as the primary does", async () => {
    for (const client of onReplica) {
      const ready = await waitFor(
        "the replica in use",
        async () => {
          const r = await readinessOf(client);
          return r.reads.source === "replicas" && r.reads.replicas[0]?.state === "ok" ? r : undefined;
        },
        10_000,
        FAST,
      );
      assert.equal(ready.status, "ready");
      assert.equal(ready.reads.replicas[0]?.host, `127.0.0.1:${pair.replica.port}`);
      assert.ok((ready.reads.replicas[0]?.lag_seconds ?? 99) <= 5);
    }
    const reference = await readinessOf(onPrimary);
    assert.equal(reference.reads.source, "primary");
    assert.deepEqual(reference.reads.replicas, []);

    await assertSameEverywhere(dataRequests());

    // The two serve processes really read from the standby: their pools hold connections there.
    const [standby] = await queryOnce<{ n: number }>(
      pair.replica.adminUrl,
      "SELECT count(DISTINCT client_port)::int AS n FROM pg_stat_activity WHERE application_name = 'tokenmarket-api'",
    );
    assert.ok((standby?.n ?? 0) >= 2, "connections of both serve processes on the standby");
    for (const client of onReplica) {
      const metrics = (await client.get("/metrics", {}, { key: null })).text;
      assert.match(metrics, /tokenmarket_db_replica_up\{replica="127\.0\.0\.1:\d+",state="ok"\} 1/);
      assert.match(metrics, /tokenmarket_db_reads_from_primary 0/);
    }
  });

  it("shows trades indexed on the primary on both serve processes (the delay reported)", async (t) => {
    const delays: number[] = [];
    for (const seed of [21, 22]) {
      await devnet.mineSwaps({ blocks: 1, swapsPerBlock: 3, seed });
      const block = await devnet.head();
      await primaryAt("the new block on the primary", block, 30_000);
      const indexedAt = Date.now();
      // The pairs that traded in the new block, from the primary (the test's own reading).
      const { rows } = await primaryDb.query<{ pool: string }>(
        "SELECT DISTINCT pool FROM swaps WHERE chain_id = $1 AND block_number = $2 ORDER BY pool",
        [devnet.chainId, block],
      );
      assert.ok(rows.length > 0, `block ${block} has trades`);
      const queries = rows.map(({ pool: address }) => {
        const deployed = devnet.deployment.pools.find(
          (p) => p.address.toLowerCase() === address.toLowerCase(),
        );
        assert.ok(deployed, `pool ${address} is deployed`);
        return { asset_id: id(deployed.token0), pair_id: id(deployed.address) };
      });
      const seen = await Promise.all(
        onReplica.map((client, i) =>
          waitFor(
            `block ${block}'s trades on replica server ${i}`,
            async () => {
              for (const query of queries) {
                const answer = await client.get("/api/v1/trades", query);
                const newest = (answer.body as { block_number: number }[])[0];
                if (newest?.block_number !== block) return undefined;
              }
              return Date.now() - indexedAt;
            },
            10_000,
            FAST,
          ),
        ),
      );
      t.diagnostic(
        `block ${block} (${rows.length} pairs traded): visible on the serve processes on the replica ${seen.join(" ms and ")} ms after the primary's sync state showed it`,
      );
      delays.push(...seen);
      await assertSameEverywhere(queries.map((query) => ["/api/v1/trades", query]));
    }
    // The delays are reported, not asserted: speed on a shared machine is the benchmarks' business.
    assert.equal(delays.length, 4, "both blocks seen on both serve processes");
  });

  it("falls back to the primary when the replica stops, and says so in /readyz", async (t) => {
    await pair.replica.stop();
    const stoppedAt = Date.now();
    for (const client of onReplica) {
      const ready = await waitFor(
        "the fallback",
        async () => {
          const r = await readinessOf(client);
          return r.reads.source === "primary" ? r : undefined;
        },
        15_000,
        FAST,
      );
      assert.equal(ready.reads.replicas[0]?.state, "down");
      assert.equal(ready.status, "ready", `the primary still serves: ${ready.reasons.join("; ")}`);
    }
    const fallbackMs = Date.now() - stoppedAt;
    await assertSameEverywhere(dataRequests());
    for (const client of onReplica) {
      const metrics = (await client.get("/metrics", {}, { key: null })).text;
      assert.match(metrics, /tokenmarket_db_reads_from_primary 1/);
      assert.match(metrics, /tokenmarket_db_replica_up\{replica="127\.0\.0\.1:\d+",state="down"\} 0/);
    }
    // The serve processes stop cleanly on SIGTERM, as a process manager stops them.
    for (const p of procs.filter((p) => p.name.startsWith("serve")))
      assert.equal(
        await stopProcess(p, STOP_BOUND_MS),
        0,
        `${p.name} exits 0 on SIGTERM:\n${p.output().slice(-4000)}`,
      );
    t.diagnostic(
      `the fallback to the primary was seen on both serve processes ${fallbackMs} ms after the replica stopped`,
    );
  });
});
