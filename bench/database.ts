/**
 * Scratch databases of the stage benchmarks (bench/indexer.ts, bench/market.ts): a Postgres server
 * to make them on, and fresh migrated databases dropped after use.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import pg from "pg";
import { freePort } from "../src/_test/free-port.js";
import { startEmbeddedPostgres } from "../src/embedded-postgres/index.js";
import type { Logger } from "../src/internal/logger.js";
import { createDb, type Db } from "../src/store/db.js";
import { migrate } from "../src/store/migrate.js";

export type BenchServer = { url: string; close(): Promise<void> };

/**
 * A server to make scratch databases on: the given pool's, DATABASE_URL's, or a throwaway
 * embedded one (`name` goes into its temporary folder's name).
 */
export async function openBenchServer(
  db: Db | undefined,
  logger: Logger,
  name: string,
): Promise<BenchServer> {
  const url = db?.options.connectionString ?? process.env.DATABASE_URL;
  if (url) return { url, close: async () => {} };
  const dataDir = mkdtempSync(path.join(tmpdir(), `tokenmarket-bench-${name}-`));
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger, ephemeral: true });
  return {
    url: server.url,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let scratchCount = 0;

/**
 * Runs `fn` with a fresh, migrated database on the server of `url` (a pool of `max`), dropped
 * afterwards; `until`: migrated only that far (migrate's option).
 */
export async function withScratchDb<T>(
  url: string,
  options: { name: string; max: number; until?: string },
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const database = `tokenmarket_bench_${options.name}_${process.pid}_${Date.now().toString(36)}_${++scratchCount}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${database}`);
  const scratchUrl = new URL(url);
  scratchUrl.pathname = `/${database}`;
  const db = createDb({
    url: scratchUrl.toString(),
    max: options.max,
    applicationName: `tokenmarket-bench-${options.name}`,
  });
  try {
    await migrate(db, options.until === undefined ? {} : { until: options.until });
    return await fn(db);
  } finally {
    await db.end().catch(() => {});
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}
