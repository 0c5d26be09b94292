import type { Logger } from "../internal/logger.js";
import { createPoller } from "../internal/poller.js";
import type { Queryable } from "../store/db.js";
import { loadIndexerHealth } from "../store/indexer-health.js";
import type { IndexerChainHealth, IndexerHealth } from "./readiness.js";

export type IndexerHealthWatch = IndexerHealth & { start(): void; stop(): void; refresh(): Promise<void> };

/**
 * The indexers' health as they report it in `indexer_health`, for API processes that run no
 * indexer (`tokenmarket serve`): polled every `intervalMs`. Ages are measured by the database's
 * clock and carried to this process's clock at the poll, so no two machines' clocks are compared.
 * A chain whose report is older than `staleAfterMs` has no live indexer: its phase is "absent".
 */
export function createIndexerHealthWatch(options: {
  db: Queryable;
  logger: Logger;
  intervalMs?: number;
  staleAfterMs?: number;
}): IndexerHealthWatch {
  const intervalMs = options.intervalMs ?? 1000;
  const staleAfterMs = options.staleAfterMs ?? 15_000;
  let chains: IndexerChainHealth[] = [];
  let failing = false;

  const refresh = async () => {
    try {
      const polledAt = Date.now();
      chains = (await loadIndexerHealth(options.db)).map((r) => {
        const absent = r.reportAgeSeconds * 1000 > staleAfterMs;
        return {
          chainId: r.chainId,
          phase: absent ? "absent" : r.phase,
          headBlock: r.headBlock,
          headSeenAt: new Date(polledAt - r.headAgeSeconds * 1000),
          stoppedAt: r.stoppedAt,
          error: absent
            ? `no indexer has reported on chain ${r.chainId} for ${Math.round(r.reportAgeSeconds)} s (is \`tokenmarket index\` running?)`
            : r.error,
          etaSeconds: r.etaSeconds,
        };
      });
      failing = false;
    } catch (error) {
      // The database being down is /readyz's own first reason; keep the last view meanwhile.
      if (!failing) options.logger.debug({ err: error }, "cannot read the indexers' health");
      failing = true;
    }
  };

  // One poll at a time, the next one intervalMs after each ends.
  const poller = createPoller(refresh, intervalMs);
  return { status: () => chains, refresh: poller.run, start: poller.start, stop: poller.stop };
}
