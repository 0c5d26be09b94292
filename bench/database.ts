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

/**
 * A database kept between runs (`BENCH_SCALE_KEEP=<folder>` of bench/scale.ts): an embedded
 * server on the data folder `dataDir`, left in place when closed, and in it the database `name`.
 * `load` fills it once (after migrating) and returns what later runs need to know about it (stored
 * as JSON in the table `bench_kept`, written last, so a load that died is redone); a later run with
 * the same `key` migrates it (new migrations, e.g. an index, apply as on a deployment) and gets
 * that JSON back without loading. Loading 10 M swaps takes ~10 min; reusing them, seconds.
 */
export async function withKeptDb<T, L>(
  options: { dataDir: string; name: string; key: string; max: number; logger: Logger },
  load: (db: Db) => Promise<L>,
  fn: (db: Db, loaded: L) => Promise<T>,
): Promise<T> {
  const server = await startEmbeddedPostgres({
    dataDir: options.dataDir,
    port: await freePort(),
    logger: options.logger,
    database: options.name,
    ephemeral: true,
  });
  const db = createDb({
    url: server.url,
    max: options.max,
    applicationName: `tokenmarket-bench-${options.name}`,
  });
  try {
    await db.query("CREATE TABLE IF NOT EXISTS bench_kept (key text PRIMARY KEY, loaded jsonb NOT NULL)");
    const { rows } = await db.query<{ loaded: L }>("SELECT loaded FROM bench_kept WHERE key = $1", [
      options.key,
    ]);
    await migrate(db);
    let loaded = rows[0]?.loaded;
    if (loaded === undefined) {
      const { rows: any } = await db.query("SELECT 1 FROM tokens LIMIT 1");
      if (any.length > 0) {
        throw new Error(
          `database ${options.name} in ${options.dataDir} holds another or a half-done load: drop it (or the folder) first`,
        );
      }
      loaded = await load(db);
      await db.query("INSERT INTO bench_kept (key, loaded) VALUES ($1, $2)", [
        options.key,
        JSON.stringify(loaded),
      ]);
    }
    return await fn(db, loaded);
  } finally {
    await db.end().catch(() => {});
    await server.stop();
  }
}
