/**
 * Scale-out on real parts: a Postgres primary and a streaming hot standby (embedded binaries, the
 * standby made with the low-level backup API), one indexer fed by a hardhat devnet writing to the
 * primary, two API servers reading from the replica (in-process createApiServer instances, each
 * with pools, read router, LISTEN connection and caches of its own, as two `serve` processes
 * would have) and a reference server on the primary alone.
 */
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { migrateAt, readinessOf, tradedWethUsdc, wethDataRequests } from "../_test/api-replicas.js";
import { queryOnce } from "../_test/db.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import { type IndexerDevnet, startIndexerDevnet } from "../_test/indexer-devnet.js";
import { type ReplicaPair, startReplicaPair } from "../_test/replica.js";
import { connectStream } from "../_test/stream-client.js";
import { parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { DeployedPool } from "../devnet/deploy.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { createApiKey } from "../store/api-keys.js";
import { getSyncStatus } from "../store/chain-state.js";
import { createDb, type Db } from "../store/db.js";
import { createIndexer, type Indexer } from "../sync/indexer.js";
import { createApiServer } from "./server.js";

type Client = Awaited<ReturnType<typeof createApiClient>>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The API servers' answer cache lifetime: longer than the whole file runs. */
const CACHE_TTL_MS = 3_600_000;

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

describe("API over a primary and a streaming replica", () => {
  let pair: ReplicaPair;
  let devnet: IndexerDevnet;
  let primaryDb: Db;
  let indexer: Indexer;
  const pools: Db[] = [];
  const servers: FastifyInstance[] = [];
  let config: Config;
  let onReplica: Client[];
  let onPrimary: Client;
  let key: string;
  let pool: DeployedPool;
  /** The servers' clock: just after the devnet's history, which is dated from the node's start on. */
  let now: Date;

  const id = (address: string) => `${address.toLowerCase()}:${devnet.chainId}`;

  /** An API server with a primary pool of its own (as a separate process would have). */
  const server = async (overrides: { replicas?: boolean; rateLimitMax?: number } = {}) => {
    const db = createDb({ url: pair.primary.url, max: 5 });
    pools.push(db);
    const app = createApiServer({
      config: parseConfig({
        ...config,
        database: {
          ...config.database,
          replicas: overrides.replicas === false ? [] : [{ url: pair.replica.url }],
        },
        api: {
          ...config.api,
          rateLimit: { ...config.api.rateLimit, max: overrides.rateLimitMax ?? 100_000 },
        },
      }),
      db,
      logger: createSilentLogger(),
      now: () => now,
      // Cached answers outlive every test here: a new trade that shows was invalidated by its
      // block, never merely expired.
      answerCacheTtlMs: CACHE_TTL_MS,
    });
    servers.push(app);
    await app.listen({ host: "127.0.0.1", port: 0 });
    return createApiClient(app, { key });
  };

  before(async () => {
    pair = await startReplicaPair({ prepare: migrateAt });
    devnet = await startIndexerDevnet({ historyDays: 0.25 });
    pool = await tradedWethUsdc(devnet);
    const tokens = devnet.deployment.tokens;
    config = parseConfig({
      api: { host: "127.0.0.1", port: 0 },
      devnet: { enabled: false },
      database: { replicaMaxLagSeconds: 5 },
      coins: { ETH: { chain: devnet.chainId, token: tokens.WETH.address } },
      chains: [devnet.chain()],
    });
    primaryDb = createDb({ url: pair.primary.url, max: 5 });
    indexer = createIndexer({
      config,
      db: primaryDb,
      logger: createSilentLogger(),
      derived: createPricing({ config, logger: createSilentLogger() }),
      options: { progressBar: false, restartDelayMs: [200, 2000] },
    });
    await indexer.start();
    const head = await devnet.head();
    await until("the indexer at the head", 120_000, async () => {
      const [s] = await getSyncStatus(primaryDb, [devnet.chainId]);
      return s && s.indexedBlock >= head ? true : undefined;
    });
    await pair.caughtUp();
    now = new Date(((await devnet.devnet.latestBlock()).timestamp + 60) * 1000);
    ({ key } = await createApiKey(primaryDb, "replicas"));
    onReplica = [await server(), await server()];
    onPrimary = await server({ replicas: false });
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.close().catch(() => {})));
    await indexer?.stop().catch(() => {});
    for (const db of [...pools, primaryDb]) await db?.end().catch(() => {});
    await devnet?.stop().catch(() => {});
    await pair?.stop();
  });

  const dataRequests = () =>
    wethDataRequests(devnet, pool.address, {
      from: new Date(now.getTime() - 6 * 3_600_000).toISOString(),
      to: now.toISOString(),
    });

  const same = (path: string, a: ApiAnswer, b: ApiAnswer, who: string) => {
    assert.equal(a.status, 200, `${path} on ${who}: ${a.text.slice(0, 200)}`);
    assert.equal(a.status, b.status, `${path}: status on ${who}`);
    assert.equal(
      a.headers.get("x-indexed-block"),
      b.headers.get("x-indexed-block"),
      `${path}: x-indexed-block on ${who}`,
    );
    assert.equal(
      a.headers.get("x-indexed-at"),
      b.headers.get("x-indexed-at"),
      `${path}: x-indexed-at on ${who}`,
    );
    assert.equal(a.text, b.text, `${path}: body on ${who}`);
  };

  it("reads from the replica and answers every data endpoint as the primary does", async () => {
    for (const client of onReplica) {
      const ready = await until("the replica in use", 10_000, async () => {
        const r = await readinessOf(client);
        return r.reads.source === "replicas" && r.reads.replicas[0]?.state === "ok" ? r : undefined;
      });
      assert.equal(ready.reads.replicas[0]?.host, `127.0.0.1:${pair.replica.port}`);
      assert.ok((ready.reads.replicas[0]?.lag_seconds ?? 99) <= 5);
    }
    assert.equal((await readinessOf(onPrimary)).reads.source, "primary");
    for (const [path, query] of dataRequests()) {
      const reference = await onPrimary.get(path, query);
      assert.ok(reference.text.length > 2, `${path}: the primary has data to compare`);
      for (const [i, client] of onReplica.entries())
        same(path, await client.get(path, query), reference, `replica server ${i}`);
    }
    // The replica servers really read from the standby: their pools hold connections there.
    const [standby] = await queryOnce<{ n: number }>(
      pair.replica.adminUrl,
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'tokenmarket-api'",
    );
    assert.ok((standby?.n ?? 0) >= 2, "connections of both replica servers on the standby");
    const metrics = (await onReplica[0]?.get("/metrics", {}, { key: null }))?.text ?? "";
    assert.match(metrics, /tokenmarket_db_replica_up\{replica="127\.0\.0\.1:\d+",state="ok"\} 1/);
    assert.match(metrics, /tokenmarket_db_replica_lag_seconds\{replica="127\.0\.0\.1:\d+"\} \d/);
    assert.match(metrics, /tokenmarket_db_reads_from_primary 0/);
    assert.match(metrics, /tokenmarket_db_commit_listener_up 1/);
  });

  /** Trader `trader` sells 0.1 WETH in the pool, in a block of its own 12 s on; the new head. */
  const tradeWethInABlock = async (trader: number) => {
    await devnet.devnet.swapV2({
      from: devnet.deployment.accounts.traders[trader] as `0x${string}`,
      pool: pool.address,
      tokenIn: devnet.deployment.tokens.WETH.address,
      amountIn: 10n ** 17n,
    });
    const latest = await devnet.devnet.latestBlock();
    await devnet.devnet.mine({ timestamp: latest.timestamp + 12 });
    return devnet.head();
  };

  it("shows a trade indexed on the primary on both replica servers: their warm caches invalidated by the block, not expired", async (t) => {
    const weth = devnet.deployment.tokens.WETH;
    const query = { asset_id: id(weth.address), pair_id: id(pool.address) };
    // Warm the caches, so that the new trade must invalidate them.
    for (const client of onReplica) assert.equal((await client.get("/api/v1/trades", query)).status, 200);
    const block = await tradeWethInABlock(0);
    await until("the trade on the primary", 30_000, async () => {
      const [s] = await getSyncStatus(primaryDb, [devnet.chainId]);
      return s && s.indexedBlock >= block ? true : undefined;
    });
    const indexedAt = Date.now();
    const seen = await Promise.all(
      onReplica.map((client) =>
        until("the trade on a replica server", 60_000, async () => {
          const answer = await client.get("/api/v1/trades", query);
          const newest = (answer.body as { block_number: number }[])[0];
          return newest?.block_number === block ? Date.now() - indexedAt : undefined;
        }),
      ),
    );
    t.diagnostic(
      `the trade was visible on the replica servers ${seen.join(" and ")} ms after it was indexed`,
    );
    const reference = await onPrimary.get("/api/v1/trades", query);
    for (const client of onReplica)
      same("/api/v1/trades", await client.get("/api/v1/trades", query), reference, "a replica server");
  });

  it("streams a new trade through the replica servers, equal to the primary's /api/v1/trades", async () => {
    const weth = devnet.deployment.tokens.WETH;
    const streams = await Promise.all(onReplica.map((client) => connectStream(client.base, { key })));
    try {
      for (const stream of streams) {
        stream.send({
          type: "subscribe",
          channel: "trades",
          pair_id: id(pool.address),
          asset_id: id(weth.address),
        });
        assert.equal((await stream.next()).type, "subscribed");
      }
      const block = await tradeWethInABlock(1);
      const reference = await until("the trade on the primary", 30_000, async () => {
        const answer = await onPrimary.get("/api/v1/trades", {
          asset_id: id(weth.address),
          pair_id: id(pool.address),
        });
        const newest = (answer.body as { block_number: number }[])[0];
        return newest?.block_number === block ? newest : undefined;
      });
      for (const stream of streams) {
        const message = await stream.next((m) => m.type === "trade", 10_000);
        assert.deepEqual(message.data, reference);
      }
    } finally {
      for (const stream of streams) await stream.close();
    }
  });

  it("holds one key's rate limit across two API servers", async () => {
    const limited = [await server({ rateLimitMax: 5 }), await server({ rateLimitMax: 5 })];
    const { key: own } = await createApiKey(primaryDb, "shared budget");
    const query = { asset_ids: id(devnet.deployment.tokens.WETH.address) };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (limited[i % 2] as Client).get("/api/v1/assets", query, { key: own }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, 5, `allowed in the window: ${statuses.join(",")}`);
    assert.equal(statuses.filter((s) => s === 429).length, 15);
  });

  it("falls back to the primary when the replica stops, and says so in /readyz", async () => {
    await pair.replica.stop();
    for (const client of onReplica) {
      const ready = await until("the fallback", 10_000, async () => {
        const r = await readinessOf(client);
        return r.reads.source === "primary" ? r : undefined;
      });
      assert.equal(ready.reads.replicas[0]?.state, "down");
      assert.equal(ready.status, "ready", "the primary still serves");
    }
    for (const [path, query] of dataRequests()) {
      const reference = await onPrimary.get(path, query);
      for (const [i, client] of onReplica.entries())
        same(path, await client.get(path, query), reference, `replica server ${i}`);
    }
    const metrics = (await onReplica[0]?.get("/metrics", {}, { key: null }))?.text ?? "";
    assert.match(metrics, /tokenmarket_db_reads_from_primary 1/);
    assert.match(metrics, /tokenmarket_db_replica_up\{replica="127\.0\.0\.1:\d+",state="down"\} 0/);
  });
});
