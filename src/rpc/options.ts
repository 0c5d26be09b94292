/** The JSON-RPC client's tuning and the per-call options. */

/** Tuning of a chain's JSON-RPC client; the defaults suit public providers. */
export type RpcOptions = {
  /** Per HTTP request (a JSON-RPC batch counts as one). */
  timeoutMs: number;
  /** JSON-RPC calls per HTTP batch. */
  batchSize: number;
  /**
   * Whole-block calls (a block's receipts, a block with its transactions) per HTTP batch: a busy
   * mainnet block's receipts are 0.3–1 MB, and a batch's answer must stay under viem's 10 MB cap
   * (a batch over it is sent again call by call).
   */
  blockBatchSize: number;
  /** HTTP batches in flight at once for bulk reads (headers, transactions, eth_calls). */
  concurrency: number;
  /** Tries per call (or per wave of a bulk read) before a RetryableRpcError is thrown. */
  attempts: number;
  /**
   * Throttled answers (HTTP 429, "rate limit") a call (or wave) takes before it fails, counted
   * apart from `attempts`: a throttling provider is answering, and is waited for (its
   * Retry-After, every request of the URL paused) rather than failed: at 80 % of answers
   * throttled, 100 in a row happen to one call in 5·10⁹.
   */
  throttledAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** After failing over to a later URL, go back to the first one after this long. */
  primaryRetryMs: number;
};

export const defaultRpcOptions: RpcOptions = {
  timeoutMs: 15_000,
  batchSize: 100,
  blockBatchSize: 5,
  concurrency: 4,
  attempts: 8,
  throttledAttempts: 100,
  baseDelayMs: 250,
  maxDelayMs: 20_000,
  primaryRetryMs: 60_000,
};

/** Per call: what a caller that must answer in time (an API request) asks of one client method. */
export type CallOptions = {
  /**
   * The whole call, retries and failovers included, ends within this many milliseconds: an
   * RpcTimeoutError when no answer came in time. Without it, the client's retry policy alone
   * bounds the call (the indexer's way: it would rather wait than fail).
   */
  timeoutMs?: number;
};
