import { Registry } from "prom-client";
import {
  type BaseError,
  type InconsistentKind,
  RangeTooLargeError,
  RetryableRpcError,
} from "../internal/errors.js";
import { metricsIn } from "../internal/metrics.js";
import {
  CallRevertedError,
  MethodNotSupportedError,
  RateLimitedRpcError,
  ResponseTooLargeError,
  RpcTimeoutError,
} from "./errors.js";
import { type TransactionSource, transactionSources } from "./types.js";

/** Why a JSON-RPC call failed, as counted in `tokenmarket_rpc_errors_total{kind}`. */
export type RpcErrorKind =
  | "timeout"
  | "overloaded"
  | "unavailable"
  | "range_too_large"
  | "response_too_large"
  | "reverted"
  | "unsupported"
  | "other";

/**
 * The JSON-RPC metrics of one process, in a registry of their own: every RPC client of the
 * process (the indexer's per chain, the API's balance reader) records into the same instance, so
 * /metrics shows one set of figures for all of them.
 */
export type RpcMetrics = {
  registry: Registry;
  /** One JSON-RPC call (a call in a batch counts once), its time and, when it failed, why. */
  call(chainId: number, method: string, seconds: number, error?: BaseError): void;
  /** A retry of a failed or throttled call, with the provider's host (never its URL). */
  retry(chainId: number, host: string): void;
  /** The provider at `host` throttled (HTTP 429). */
  throttled(chainId: number, host: string): void;
  /** The share of parallelism the provider at `host` is given now (rate-gate.ts). */
  share(chainId: number, host: string, share: number): void;
  failover(chainId: number): void;
  /** An answer that contradicts the node's other answers (see InconsistentAnswerError). */
  inconsistent(chainId: number, kind: InconsistentKind): void;
  /** The chain's transaction source in use: 1 for it, 0 for the others. */
  transactionSource(chainId: number, source: TransactionSource): void;
};

export function createRpcMetrics(): RpcMetrics {
  const registry = new Registry();
  const { counter, gauge, histogram } = metricsIn(registry);
  const calls = counter(
    "tokenmarket_rpc_calls_total",
    "JSON-RPC calls made, by chain and method (each call of a batch counts once; retries count again).",
    ["chain_id", "method"],
  );
  const errors = counter(
    "tokenmarket_rpc_errors_total",
    "JSON-RPC calls that failed, by chain, method and kind: timeout (no answer in time), overloaded (HTTP 429, 408, 413, 425 or 5xx), unavailable (connection failed or dropped, node-side transient error), range_too_large (eth_getLogs), response_too_large (an answer over the size cap, retried alone), reverted (eth_call), unsupported (the node does not serve the method), other.",
    ["chain_id", "method", "kind"],
  );
  const duration = histogram(
    "tokenmarket_rpc_call_duration_seconds",
    "Time from sending a JSON-RPC call to its answer or failure, in seconds (a batch's calls share its time).",
    ["chain_id", "method"],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  const retries = counter(
    "tokenmarket_rpc_retries_total",
    "Retries of failed or throttled JSON-RPC calls (a retried wave of a bulk read counts once), by chain and the provider's host (never its URL, which may carry a key).",
    ["chain_id", "host"],
  );
  const throttled = counter(
    "tokenmarket_rpc_throttled_total",
    "Throttled answers (HTTP 429, rate limit) that paused the client for the provider's Retry-After and halved its parallelism, by chain and the provider's host.",
    ["chain_id", "host"],
  );
  const share = gauge(
    "tokenmarket_rpc_parallelism_share",
    "The share (0 to 1) of the configured concurrency and batch size a provider is given after its last throttled answer; it grows back by 1/16 with each wave answered without throttling. By chain and the provider's host.",
    ["chain_id", "host"],
  );
  const failovers = counter(
    "tokenmarket_rpc_failovers_total",
    "Switches to the chain's next configured RPC URL after a retryable failure, by chain.",
    ["chain_id"],
  );
  const inconsistent = counter(
    "tokenmarket_rpc_inconsistent_answers_total",
    "Answers of a chain's node that contradict its other answers outside a real reorg, by chain and kind: unlinked_header (parentHash is not the previous block's hash), log_block_mismatch, log_outside_range, transaction_mismatch, head_backwards. Each is retried after a backoff.",
    ["chain_id", "kind"],
  );
  const sourceGauge = gauge(
    "tokenmarket_indexer_transaction_source",
    "How the indexer reads swaps' senders and targets, by chain: 1 for the source in use (blockReceipts: eth_getBlockReceipts; fullBlocks: eth_getBlockByNumber with transactions; transactions: eth_getTransactionByHash per swap), 0 for the others. Chosen by a probe at start, or configured (chains[].transactionSource).",
    ["chain_id", "source"],
  );
  return {
    registry,
    call(chainId, method, seconds, error) {
      const labels = { chain_id: String(chainId), method };
      calls.inc(labels);
      duration.observe(labels, seconds);
      if (error) errors.inc({ ...labels, kind: errorKind(error) });
    },
    retry(chainId, host) {
      retries.inc({ chain_id: String(chainId), host });
    },
    throttled(chainId, host) {
      throttled.inc({ chain_id: String(chainId), host });
    },
    share(chainId, host, value) {
      share.set({ chain_id: String(chainId), host }, value);
    },
    failover(chainId) {
      failovers.inc({ chain_id: String(chainId) });
    },
    inconsistent(chainId, kind) {
      inconsistent.inc({ chain_id: String(chainId), kind });
    },
    transactionSource(chainId, source) {
      for (const s of transactionSources)
        sourceGauge.set({ chain_id: String(chainId), source: s }, s === source ? 1 : 0);
    },
  };
}

export function errorKind(error: BaseError): RpcErrorKind {
  if (error instanceof RpcTimeoutError) return "timeout";
  if (error instanceof RateLimitedRpcError) return "overloaded";
  if (error instanceof RangeTooLargeError) return "range_too_large";
  if (error instanceof ResponseTooLargeError) return "response_too_large";
  if (error instanceof CallRevertedError) return "reverted";
  if (error instanceof MethodNotSupportedError) return "unsupported";
  if (error instanceof RetryableRpcError) return "unavailable";
  return "other";
}
