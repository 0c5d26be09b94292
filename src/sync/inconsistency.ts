import { backoffDelayMs } from "../internal/backoff.js";
import type { InconsistentAnswerError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { RpcClient } from "../rpc/client.js";
import type { RpcMetrics } from "../rpc/metrics.js";
import { sleep } from "../rpc/retry.js";
import type { Progress } from "./progress.js";

export type InconsistencyBackoff = {
  /** Counts, logs, shows and waits out one inconsistent answer (see createInconsistencyBackoff). */
  onInconsistent(error: InconsistentAnswerError): Promise<void>;
  /** An answer was consistent: the next inconsistency starts its backoff from the first delay. */
  consistent(): void;
  /** Inconsistent answers in a row. */
  streak(): number;
};

/**
 * The answers of a chain's node that contradict its others (InconsistentAnswerError): each is
 * counted in the metrics, logged at warn with the blocks and the URL's host, shown to readiness,
 * and waited out with a doubling, jittered backoff within `delayMs`; every `failoverAfter` in a
 * row, the next URL of the chain is tried.
 */
export function createInconsistencyBackoff(args: {
  rpc: Pick<RpcClient, "host" | "failOver">;
  chainId: number;
  logger: Logger;
  metrics: Pick<RpcMetrics, "inconsistent">;
  progress: Pick<Progress, "inconsistent" | "consistent">;
  delayMs: [number, number];
  failoverAfter: number;
  signal?: AbortSignal;
}): InconsistencyBackoff {
  const { rpc, chainId, logger, metrics, progress, delayMs: delayMsRange, failoverAfter, signal } = args;
  let inconsistentStreak = 0;

  /**
   * An answer contradicted the node's others: counted, logged at warn with the blocks and the
   * URL's host, shown to readiness, and waited out with a doubling, jittered, capped backoff;
   * every `inconsistentFailoverAfter` in a row, the next URL of the chain is tried.
   */
  const onInconsistent = async (error: InconsistentAnswerError) => {
    inconsistentStreak++;
    const host = rpc.host();
    const delayMs = backoffDelayMs(inconsistentStreak, delayMsRange);
    metrics.inconsistent(chainId, error.kind);
    progress.inconsistent(`${error.message} (node ${host})`);
    const failOver = inconsistentStreak % failoverAfter === 0 && rpc.failOver() ? rpc.host() : null;
    logger.warn(
      {
        kind: error.kind,
        blocks: error.blocks,
        rpc_host: host,
        attempt: inconsistentStreak,
        retry_in_ms: delayMs,
        ...(failOver ? { next_rpc_host: failOver } : {}),
        error: error.message,
      },
      failOver
        ? "the node keeps answering inconsistently; trying the next RPC URL"
        : "inconsistent answer from the node; retrying after a backoff",
    );
    await sleep(delayMs, signal).catch(() => {});
  };
  /** An answer was consistent: the next inconsistency starts its backoff from the first delay. */
  const consistent = () => {
    if (inconsistentStreak === 0) return;
    logger.info(
      { after: inconsistentStreak, rpc_host: rpc.host() },
      "the node's answers are consistent again",
    );
    inconsistentStreak = 0;
    progress.consistent();
  };

  return { onInconsistent, consistent, streak: () => inconsistentStreak };
}
