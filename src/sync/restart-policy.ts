/**
 * What a chain's indexer does after its run failed: stand by (another process writes the chain
 * now), wait out an inconsistent answer, stop for good, or restart from its checkpoint after a
 * backoff (probing the node again first when it stopped serving the transaction source's method).
 * failureAction decides (pure); createRestarts acts on it.
 */
import type { ChainConfig } from "../config/schema.js";
import { backoffDelayMs } from "../internal/backoff.js";
import {
  type BaseError,
  ChainIdMismatchError,
  DeepReorgError,
  GenesisMismatchError,
  InconsistentAnswerError,
  TransactionSourceUnsupportedError,
  WriterLockLostError,
} from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { MethodNotSupportedError } from "../rpc/errors.js";
import { sleep } from "../rpc/retry.js";
import type { TransactionSource } from "../rpc/types.js";
import type { NodeProbe } from "./node-probe.js";
import type { Progress } from "./progress.js";
import { sourceMethod } from "./transaction-source.js";

/** Errors after which indexing of the chain stops instead of retrying. */
export const isFatal = (error: unknown): boolean =>
  error instanceof DeepReorgError ||
  error instanceof GenesisMismatchError ||
  error instanceof ChainIdMismatchError ||
  error instanceof TransactionSourceUnsupportedError;

export type FailureAction =
  | { kind: "standby" }
  | { kind: "inconsistent"; error: InconsistentAnswerError }
  | { kind: "fatal"; message: string }
  | { kind: "restart"; message: string; reprobe: boolean };

/**
 * The action after `error` ended a run. `reprobe`: the node no longer serves the method of the
 * transaction source it was probed for (`source`, null before the probe) while the configured
 * source is `auto`, so the probe is made again at the restart (a failover to another node).
 */
export function failureAction(
  error: unknown,
  context: { source: TransactionSource | null; configured: ChainConfig["transactionSource"] },
): FailureAction {
  // Not a failure of this chain: another process writes it now.
  if (error instanceof WriterLockLostError) return { kind: "standby" };
  if (error instanceof InconsistentAnswerError) return { kind: "inconsistent", error };
  const message = error instanceof Error ? error.message : String(error);
  if (isFatal(error)) return { kind: "fatal", message };
  const reprobe =
    error instanceof MethodNotSupportedError &&
    context.source !== null &&
    error.method === sourceMethod[context.source] &&
    context.configured === "auto";
  return { kind: "restart", message, reprobe };
}

export type Restarts = {
  /**
   * Acts on the failure that ended a run: stands by, waits out the inconsistency, or backs off
   * (logged) before the restart. False when the chain stops for good (logged at fatal).
   */
  after(error: unknown): Promise<boolean>;
  /** Some work succeeded: the next failure's backoff starts from the first delay again. */
  reset(): void;
};

/** The restarts of one chain's indexer, counting its failures in a row for the backoff. */
export function createRestarts(args: {
  logger: Logger;
  progress: Pick<Progress, "phase" | "status">;
  node: Pick<NodeProbe, "source" | "forget">;
  rpcHost(): string;
  configured: ChainConfig["transactionSource"];
  restartDelayMs: readonly [number, number];
  signal: AbortSignal;
  /** Gives up the writer lock (another process writes the chain now). */
  standby(): Promise<void>;
  onInconsistent(error: InconsistentAnswerError): Promise<void>;
}): Restarts {
  const { logger, progress, node } = args;
  let failures = 0;
  return {
    async after(error) {
      const action = failureAction(error, { source: node.source(), configured: args.configured });
      switch (action.kind) {
        case "standby":
          logger.warn({ error: (error as Error).message }, "no longer the chain's writer; standing by");
          await args.standby();
          return true;
        case "inconsistent":
          // At start (the checkpoint's check): backed off like in the loop, then started again.
          await args.onInconsistent(action.error);
          return true;
        case "fatal":
          progress.phase("failed", action.message);
          logger.fatal(
            { error: action.message, error_name: (error as BaseError).name },
            "indexing of this chain stops",
          );
          return false;
      }
      if (action.reprobe) {
        logger.warn(
          { transaction_source: node.source(), error: action.message, rpc_host: args.rpcHost() },
          "the node does not serve the transaction source's method; probing again at the restart",
        );
        node.forget();
      }
      failures++;
      const delayMs = backoffDelayMs(failures, args.restartDelayMs);
      progress.phase(progress.status().phase, action.message);
      logger.error(
        {
          error: action.message,
          error_name: (error as Error).name,
          rpc_host: args.rpcHost(),
          failures,
          retry_in_ms: delayMs,
        },
        "chain indexing failed; restarting from the checkpoint",
      );
      await sleep(delayMs, args.signal).catch(() => {});
      return true;
    },
    reset() {
      failures = 0;
    },
  };
}
