/**
 * Starts an embedded Postgres and waits to be killed: the tests SIGKILL this process to leave
 * an orphaned server behind, as a crashed `npm start` would.
 * Usage: node --import tsx embedded-postgres-child.ts <dataDir> <port>
 */

import { startEmbeddedPostgres } from "../embedded-postgres/index.js";
import { createSilentLogger } from "../internal/logger.js";

const [dataDir, port] = process.argv.slice(2);
const server = await startEmbeddedPostgres({
  dataDir: dataDir ?? "",
  port: Number(port),
  logger: createSilentLogger(),
  ephemeral: true,
});
process.stdout.write(`${JSON.stringify({ pid: server.pid, url: server.url })}\n`);
setInterval(() => {}, 60_000);
