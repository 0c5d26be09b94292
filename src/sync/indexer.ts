import { MultiBar, Presets } from "cli-progress";
import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import type { ChainHealthReport } from "../model/index.js";
import type { RpcMetrics } from "../rpc/metrics.js";
import type { Db } from "../store/db.js";
import { saveIndexerHealth } from "../store/indexer-health.js";
import { type ChainSync, createChainSync } from "./chain.js";
import type { DerivedData } from "./derived.js";
import { defaultIndexerOptions, type IndexerOptions } from "./options.js";
import type { ChainStatus } from "./progress.js";
import { createStorageUpkeep, defaultStorageOptions } from "./storage-upkeep.js";

export type Indexer = {
  /** Starts every configured chain, concurrently and independently; resolves once they are launched. */
  start(): Promise<void>;
  /** Stops every chain: a batch being fetched is abandoned, one being committed finishes. */
  stop(): Promise<void>;
  /** Per chain: phase, indexed block, head, lag (blocks, seconds), blocks/s and swaps/s. */
  status(): ChainStatus[];
  /** Resolves when every chain has ended (stop(), caught up without `follow`, or a fatal error). */
  done(): Promise<void>;
};

/**
 * The ingestion runtime: one chain indexer per configured chain, each with its own RPC client,
 * checkpoint and failure handling, so that one failing chain never stops the others. `derived`
 * is called inside every batch and rollback transaction (use `noDerivedData` for raw ingestion).
 * The indexer also keeps the time partitions (storage-upkeep.ts): at start, before any chain
 * runs, and every `storage.upkeepIntervalMs`.
 */
export function createIndexer(args: {
  config: Pick<Config, "chains"> & Partial<Pick<Config, "storage">>;
  db: Db;
  logger: Logger;
  derived: DerivedData;
  options?: Partial<IndexerOptions>;
  /** The process's JSON-RPC metrics (shared with the API); default: each chain client's own. */
  rpcMetrics?: RpcMetrics;
}): Indexer {
  const options: IndexerOptions = { ...defaultIndexerOptions, ...args.options };
  const logger = args.logger.child({ component: "indexer" });
  const bars =
    options.progressBar && process.stdout.isTTY
      ? new MultiBar(
          {
            format:
              "{chain} [{bar}] {percentage}% | {value}/{total} blocks | {bps} blocks/s {sps} swaps/s | lag {lag} | ETA {eta}",
            hideCursor: true,
            clearOnComplete: true,
            stopOnComplete: false,
          },
          Presets.shades_classic,
        )
      : null;
  const chains: ChainSync[] = args.config.chains.map((chain) =>
    createChainSync({
      chain,
      db: args.db,
      logger,
      derived: args.derived,
      options,
      bars,
      rpcMetrics: args.rpcMetrics,
    }),
  );
  let runs: Promise<void> | undefined;
  const upkeep = createStorageUpkeep({
    db: args.db,
    options: args.config.storage ?? defaultStorageOptions,
    logger,
  });

  // Each chain's status, written every few seconds for API processes that run no indexer
  // (`tokenmarket serve`): their /readyz reads the head as seen at the node and a fatal stop from
  // here, and a report that goes stale tells them no indexer is alive.
  let reporting: Promise<void> | undefined;
  let healthWarned = false;
  const report = () => {
    if (reporting) return;
    // Only the writer of a chain reports on it: a standby's word would overwrite the active one's.
    const statuses = chains.map((c) => c.status()).filter((s) => s.phase !== "standby");
    const reports: ChainHealthReport[] = statuses.map((s) => {
      return {
        chainId: s.chainId,
        phase: s.phase,
        headBlock: s.headBlock,
        headSeenAt: s.headSeenAt,
        stoppedAt: s.stoppedAt,
        error: s.error,
        etaSeconds: s.etaSeconds,
      };
    });
    reporting = saveIndexerHealth(args.db, reports)
      .then(() => {
        healthWarned = false;
      })
      .catch((error: unknown) => {
        // The database being down is already retried and logged by the chains themselves.
        if (!healthWarned) logger.warn({ err: error }, "cannot write the indexer's health report");
        healthWarned = true;
      })
      .finally(() => {
        reporting = undefined;
      });
  };
  let reportTimer: NodeJS.Timeout | undefined;

  return {
    start: async () => {
      await upkeep.start();
      runs ??= Promise.all(chains.map((c) => c.run())).then(() => {
        bars?.stop();
      });
      reportTimer ??= setInterval(report, options.healthReportMs);
      reportTimer.unref();
    },
    stop: async () => {
      clearInterval(reportTimer);
      await Promise.all([...chains.map((c) => c.stop()), upkeep.stop()]);
      bars?.stop();
      // The last word: a stopped indexer says so rather than going stale.
      report();
      await reporting;
    },
    status: () => chains.map((c) => c.status()),
    done: async () => {
      await runs;
    },
  };
}
