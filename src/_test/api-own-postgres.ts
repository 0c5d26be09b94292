import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import type { FastifyInstance } from "fastify";
import { createApiServer } from "../api/server.js";
import type { Config } from "../config/schema.js";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../embedded-postgres/index.js";
import type { Logger } from "../internal/logger.js";
import { apiDbTimeouts } from "../runtime/database.js";
import { createDb, type Db } from "../store/db.js";
import { migrate } from "../store/migrate.js";
import { freePort } from "./free-port.js";
import { blockTime, fixture, loadMarketFixture } from "./market-fixture.js";
import { signalProcessTree } from "./process-tree.js";

/**
 * An API server (not listening yet) over a Postgres of its own holding the market fixture, so
 * that a test can freeze that Postgres without stalling the other test files' server. The API's
 * pool is bounded as `tokenmarket start` bounds it; the clock stands at the fixture's head.
 */
export async function startApiOnOwnPostgres(options: {
  /** Start of the name of the temporary folder the data directory lies in. */
  prefix: string;
  config: Config;
  logger: Logger;
  answerCacheTtlMs: number;
}) {
  const dir = mkdtempSync(path.join(tmpdir(), options.prefix));
  // Run as root, Postgres runs as another user, who must reach the folder.
  chmodSync(dir, 0o755);
  let server: EmbeddedPostgres | undefined;
  let db: Db | undefined;
  let app: FastifyInstance | undefined;
  const close = async () => {
    if (server) signalProcessTree(server.pid, "SIGCONT");
    await app?.close();
    await db?.end().catch(() => {});
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const started = await startEmbeddedPostgres({
      dataDir: path.join(dir, "pg"),
      port: await freePort(),
      logger: options.logger,
      ephemeral: true,
    });
    server = started;
    const setup = createDb({ url: started.url });
    await migrate(setup);
    const { key } = await loadMarketFixture(setup);
    await setup.end();
    db = createDb({
      url: started.url,
      applicationName: "tokenmarket-api",
      timeouts: apiDbTimeouts(options.config),
    });
    const api = createApiServer({
      config: options.config,
      db,
      logger: options.logger,
      now: () => blockTime(fixture.indexedBlock),
      keyCacheTtlMs: 200,
      answerCacheTtlMs: options.answerCacheTtlMs,
    });
    app = api;
    return {
      app: api,
      key,
      /** Signals the postmaster and every process it forked (SIGSTOP freezes the database). */
      signalServer: (signal: NodeJS.Signals) => signalProcessTree(started.pid, signal),
      /** Thaws the database, closes the server and the pool, stops Postgres and removes its folder. */
      close,
    };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}

/** GET `url` with an API key: the status, Retry-After, the body's text and how long it took (ms). */
export async function timedGet(url: string, key: string, timeoutMs: number) {
  const started = performance.now();
  const response = await fetch(url, {
    headers: { "x-api-key": key },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return {
    status: response.status,
    ms: performance.now() - started,
    retryAfter: response.headers.get("retry-after"),
    text,
  };
}
