import path from "node:path";
import { projectRoot } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { startEmbeddedPostgres } from "../embedded-postgres/index.js";
import type { Logger } from "../internal/logger.js";
import { createDb, type Db } from "../store/db.js";
import { migrate } from "../store/migrate.js";

export type Database = {
  db: Db;
  /** Where the data lives, for the start-up summary (no password). */
  where: string;
  close(): Promise<void>;
  /** For an exit that cannot wait: asks the embedded server, if any, to stop on its own. */
  kill(): void;
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
    });
    url = server.url;
    stopServer = () => server.stop();
    killServer = () => server.kill();
    where = `embedded Postgres on 127.0.0.1:${config.database.embedded.port} (data in ${path.relative(process.cwd(), server.dataDir) || server.dataDir})`;
  }
  const db = createDb({ url });
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
  } catch (error) {
    await db.end().catch(() => {});
    await stopServer?.();
    throw error;
  }
  return {
    db,
    where,
    close: async () => {
      await db.end().catch(() => {});
      await stopServer?.();
    },
    kill: () => killServer?.(),
  };
}
