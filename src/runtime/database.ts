import path from "node:path";
import { projectRoot } from "../config/load.js";
import type { Config } from "../config/schema.js";
import {
  DEMO_SETTINGS,
  type EmbeddedPostgresHealth,
  startEmbeddedPostgres,
} from "../embedded-postgres/index.js";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createDb, type Db, type DbTimeouts, isDatabaseUnavailable } from "../store/db.js";
import { migrate } from "../store/migrate.js";

export type Database = {
  db: Db;
  /** The connection URL (for further pools, such as the API's, with bounds of their own). */
  url: string;
  /** Where the data lives, for the start-up summary (no password). */
  where: string;
  close(): Promise<void>;
  /** For an exit that cannot wait: asks the embedded server, if any, to stop on its own. */
  kill(): void;
  /** The embedded server this process started and supervises (restarts); undefined otherwise. */
  serverHealth?: () => EmbeddedPostgresHealth;
};

/**
 * Opens the configured database and brings its schema up to date: the external Postgres of
 * `database.url` (DATABASE_URL) when set, else the embedded Postgres started from the npm
 * package's binaries with its data kept in `database.embedded.dataDir`.
 */
export async function openDatabase(options: {
  config: Config;
  logger: Logger;
  /** Use the embedded server that a running `tokenmarket start` owns, leaving it running. */
  attach?: boolean;
}): Promise<Database> {
  const { config, logger } = options;
  let url = config.database.url;
  let stopServer: (() => Promise<void>) | undefined;
  let killServer: (() => void) | undefined;
  let serverHealth: (() => EmbeddedPostgresHealth) | undefined;
  let where: string;
  if (url) {
    const parsed = new URL(url);
    where = `external Postgres at ${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } else {
    const dataDir = path.resolve(projectRoot, config.database.embedded.dataDir);
    const server = await startEmbeddedPostgres({
      dataDir,
      port: config.database.embedded.port,
      logger,
      attach: options.attach === true,
      // The demo's server holds a devnet's few MB of data.
      ...(config.devnet.enabled ? { settings: DEMO_SETTINGS } : {}),
    });
    url = server.url;
    stopServer = () => server.stop();
    killServer = () => server.kill();
    // A server attached to (another process started it) is that process's to supervise.
    if (!server.attached) serverHealth = () => server.health();
    where = `embedded Postgres on 127.0.0.1:${server.port} (data in ${path.relative(process.cwd(), server.dataDir) || server.dataDir})`;
  }
  const db = createDb({ url, timeouts: dbTimeouts(config) });
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
  } catch (error) {
    await db.end().catch(() => {});
    await stopServer?.();
    // An unreachable server is an operator's matter: one line saying where, not a stack.
    if (isDatabaseUnavailable(error)) {
      throw new LaunchError(
        `cannot reach the database (${where}): ${(error as Error).message || (error as { code?: string }).code}; is it running, and is DATABASE_URL right?`,
        { cause: error },
      );
    }
    throw error;
  }
  return {
    db,
    url,
    where,
    close: async () => {
      await db.end().catch(() => {});
      await stopServer?.();
    },
    kill: () => killServer?.(),
    ...(serverHealth ? { serverHealth } : {}),
  };
}

/** The database bounds of the configuration, for the pools of the indexer and the command line. */
export function dbTimeouts(config: Config): DbTimeouts {
  return {
    connectTimeoutMs: config.database.connectTimeoutMs,
    statementTimeoutMs: config.database.statementTimeoutMs,
    idleInTransactionTimeoutMs: config.database.idleInTransactionTimeoutMs,
  };
}

/**
 * The API's bounds: a request must get its database answer within `api.databaseTimeoutMs`
 * (connecting included) or answer 503, so its pool's bounds are that short.
 */
export function apiDbTimeouts(config: Config): DbTimeouts {
  const bound = config.api.databaseTimeoutMs;
  return {
    connectTimeoutMs: Math.min(config.database.connectTimeoutMs, bound),
    statementTimeoutMs: bound,
    idleInTransactionTimeoutMs: config.database.idleInTransactionTimeoutMs,
    queryTimeoutMs: bound,
  };
}
