import type { ChainConfig } from "../config/schema.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import type { RpcMetrics } from "../rpc/metrics.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { type DerivedData, noDerivedData } from "../sync/derived.js";
import { createIndexer, type Indexer } from "../sync/indexer.js";
import type { IndexerOptions } from "../sync/options.js";
import { waitFor } from "./indexer-wait.js";

/** How a test runs the indexer: a silent logger, no derived data and no progress bar unless given. */
export type TestIndexerRun = {
  logger?: Logger | undefined;
  derived?: DerivedData;
  options?: Partial<IndexerOptions>;
  rpcMetrics?: RpcMetrics;
};

/** Creates and starts an indexer of `chain` on `db` (following the head unless `options.follow` is false). */
export async function startIndexer(db: Db, chain: ChainConfig, run: TestIndexerRun = {}): Promise<Indexer> {
  const indexer = createIndexer({
    config: { chains: [chain] },
    db,
    logger: run.logger ?? createSilentLogger(),
    derived: run.derived ?? noDerivedData,
    options: { progressBar: false, ...run.options },
    ...(run.rpcMetrics ? { rpcMetrics: run.rpcMetrics } : {}),
  });
  await indexer.start();
  return indexer;
}

/** Indexes `chain` once, up to its head (no following); its status at the end. */
export async function indexOnce(db: Db, chain: ChainConfig, run: TestIndexerRun = {}) {
  const indexer = await startIndexer(db, chain, { ...run, options: { ...run.options, follow: false } });
  await indexer.done();
  return indexer.status()[0];
}

/** Waits until `db` has indexed `chainId` up to `block` at least (and, when given, has `hash` as its block's hash). */
export async function waitIndexed(
  db: Db,
  chainId: number,
  block: number,
  hash?: string,
  timeoutMs = 120_000,
): Promise<void> {
  await waitFor(
    async () => {
      const [status] = await getSyncStatus(db, [chainId]);
      return !!status && status.indexedBlock >= block && (!hash || status.indexedBlockHash === hash);
    },
    `indexed up to ${block}${hash ? ` with hash ${hash}` : ""}`,
    { timeoutMs },
  );
}

/** How many of these swaps (by transaction) `db` holds for `chainId` (those of an abandoned branch must be none). */
export async function storedSwapsOf(
  db: Db,
  chainId: number,
  swaps: readonly { tx_hash: string }[],
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM swaps WHERE chain_id = $1 AND tx_hash = ANY($2)",
    [chainId, swaps.map((s) => s.tx_hash)],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The end of an indexer child process: runs `indexer` until its chains have caught up, logs
 * "`what` done" with the count of failed chains, closes `db` and exits, 1 if a chain failed.
 */
export async function runChildToEnd(indexer: Indexer, db: Db, logger: Logger, what: string): Promise<never> {
  await indexer.start();
  await indexer.done();
  const failed = indexer.status().filter((s) => s.phase === "failed");
  logger.info({ done: true, failed: failed.length }, `${what} done`);
  await db.end();
  process.exit(failed.length > 0 ? 1 : 0);
}
