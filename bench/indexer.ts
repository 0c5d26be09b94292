/**
 * Backfill throughput of the indexer, in swaps/s and blocks/s, raw ingestion only (no pricing):
 * - devnet: a Hardhat node with the real Uniswap contracts and `historyDays` of simulated trading,
 *   indexed from block 0 over JSON-RPC until caught up;
 * - replay: the recorded mainnet day (6,046 swaps of USDC/WETH 0.05 %) through the same
 *   decode-and-store path.
 * Each runs in a scratch database of its own, dropped afterwards.
 *
 *   npx tsx bench/indexer.ts                      embedded Postgres in a temporary folder
 *   DATABASE_URL=postgres://… npx tsx bench/indexer.ts   scratch databases on that server
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { freePort } from "../src/_test/free-port.js";
import { startIndexerDevnet } from "../src/_test/indexer-devnet.js";
import { createSilentLogger, type Logger } from "../src/internal/logger.js";
import { replayFixture } from "../src/replay/replay.js";
import { createDb, type Db } from "../src/store/db.js";
import { startEmbeddedPostgres } from "../src/store/embedded-postgres.js";
import { migrate } from "../src/store/migrate.js";
import { noDerivedData } from "../src/sync/derived.js";
import { createIndexer } from "../src/sync/indexer.js";

const fixtureDir = path.resolve(
  import.meta.dirname,
  "../../shared/fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05",
);

export type ThroughputFigures = {
  swaps: number;
  poolEvents: number;
  blocks: number;
  elapsedMs: number;
  swapsPerSecond: number;
  blocksPerSecond: number;
};

export type IndexerBenchResult = {
  devnet: ThroughputFigures & { historyDays: number; rpcUrl: "hardhat (local)" };
  replay: ThroughputFigures & { fixture: string };
};

/** Measures the indexer's backfill throughput from a devnet with history and from the replay source. */
export async function benchIndexer(
  context: { db?: Db; logger?: Logger; historyDays?: number } = {},
): Promise<IndexerBenchResult> {
  const logger = context.logger ?? createSilentLogger();
  const historyDays = context.historyDays ?? Number(process.env.BENCH_INDEXER_DAYS ?? 3);
  const server = await openServer(context.db, logger);
  try {
    const devnet = await withScratchDb(server.url, (db) => benchDevnet(db, logger, historyDays));
    const replay = await withScratchDb(server.url, (db) => benchReplay(db, logger));
    return {
      devnet: { ...devnet, historyDays, rpcUrl: "hardhat (local)" },
      replay: { ...replay, fixture: path.basename(fixtureDir) },
    };
  } finally {
    await server.close();
  }
}

async function benchDevnet(db: Db, logger: Logger, historyDays: number): Promise<ThroughputFigures> {
  const devnet = await startIndexerDevnet({ historyDays, seed: 7, logger });
  try {
    const indexer = createIndexer({
      config: { chains: [devnet.chain()] },
      db,
      logger,
      derived: noDerivedData,
      options: { follow: false, progressBar: false },
    });
    const startedAt = performance.now();
    await indexer.start();
    await indexer.done();
    const elapsedMs = performance.now() - startedAt;
    const counts = await countRows(db);
    return figures({ ...counts, blocks: (await devnet.head()) + 1, elapsedMs });
  } finally {
    await devnet.stop();
  }
}

async function benchReplay(db: Db, logger: Logger): Promise<ThroughputFigures> {
  const result = await replayFixture({
    db,
    dir: fixtureDir,
    derived: noDerivedData,
    logger,
    blocksPerBatch: 2000,
  });
  const { rows } = await db.query<{ first: number; last: number }>(
    "SELECT min(block_number)::int AS first, max(block_number)::int AS last FROM swaps",
  );
  return figures({
    swaps: result.swaps,
    poolEvents: result.poolEvents,
    blocks: (rows[0]?.last ?? 0) - (rows[0]?.first ?? 0) + 1,
    elapsedMs: result.elapsedMs,
  });
}

function figures(x: {
  swaps: number;
  poolEvents: number;
  blocks: number;
  elapsedMs: number;
}): ThroughputFigures {
  return {
    ...x,
    elapsedMs: Math.round(x.elapsedMs),
    swapsPerSecond: Math.round(x.swaps / (x.elapsedMs / 1000)),
    blocksPerSecond: Math.round(x.blocks / (x.elapsedMs / 1000)),
  };
}

async function countRows(db: Db): Promise<{ swaps: number; poolEvents: number }> {
  const { rows } = await db.query<{ swaps: number; events: number }>(
    "SELECT (SELECT count(*) FROM swaps)::int AS swaps, (SELECT count(*) FROM pool_events)::int AS events",
  );
  return { swaps: rows[0]?.swaps ?? 0, poolEvents: rows[0]?.events ?? 0 };
}

/** A server to make scratch databases on: the given pool's, DATABASE_URL's, or a throwaway embedded one. */
async function openServer(
  db: Db | undefined,
  logger: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  const given = (db as unknown as { options?: { connectionString?: string } } | undefined)?.options
    ?.connectionString;
  const url = given ?? process.env.DATABASE_URL;
  if (url) return { url, close: async () => {} };
  const dataDir = mkdtempSync(path.join(tmpdir(), "tokenmarket-bench-indexer-"));
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger, ephemeral: true });
  return {
    url: server.url,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` with a fresh, migrated database on the server of `url`, dropped afterwards. */
async function withScratchDb<T>(url: string, fn: (db: Db) => Promise<T>): Promise<T> {
  const name = `tokenmarket_bench_indexer_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const scratchUrl = new URL(url);
  scratchUrl.pathname = `/${name}`;
  const db = createDb({ url: scratchUrl.toString(), max: 6, applicationName: "tokenmarket-bench-indexer" });
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.end().catch(() => {});
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await benchIndexer();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
