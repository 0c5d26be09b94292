/**
 * Starts an embedded Postgres and waits to be killed: the tests SIGKILL this process to leave
 * an orphaned server behind, as a crashed `npm start` would where setpriv is not installed
 * (`stopWithLauncher: false`). With a third argument `guarded`, the server is started as the
 * service starts it, to be stopped by its parent-death signal.
 * Usage: node --import tsx embedded-postgres-child.ts <dataDir> <port>
 */

import { startEmbeddedPostgres } from "../embedded-postgres/index.js";
import { createSilentLogger } from "../internal/logger.js";

const [dataDir, port, mode] = process.argv.slice(2);
const server = await startEmbeddedPostgres({
  dataDir: dataDir ?? "",
  port: Number(port),
  logger: createSilentLogger(),
  ephemeral: true,
  stopWithLauncher: mode === "guarded",
});
process.stdout.write(`${JSON.stringify({ pid: server.pid, url: server.url })}\n`);
setInterval(() => {}, 60_000);
