/** Base error of the project: carries a cause and says whether retrying can help. */
export class BaseError extends Error {
  override name = "BaseError";
  /** True when the same operation may succeed if tried again (timeouts, rate limits, dropped connections). */
  readonly retryable: boolean;

  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable ?? false;
  }
}

/** A configuration value is missing or invalid; `key` is the dotted path of the bad value. */
export class ConfigError extends BaseError {
  override name = "ConfigError";
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`config ${key}: ${message}`);
  }
}

/** A node answered with an error that retrying can fix: timeout, 429, 5xx, dropped connection. */
export class RetryableRpcError extends BaseError {
  override name = "RetryableRpcError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}

/** What kind of inconsistency a node's answers showed, as counted in `tokenmarket_rpc_inconsistent_answers_total{kind}`. */
export type InconsistentKind =
  | "unlinked_header"
  | "log_block_mismatch"
  | "log_outside_range"
  | "transaction_mismatch"
  | "head_backwards";

/**
 * A node's answers contradict each other outside a real reorg: a header whose parentHash is not
 * the previous block's hash (hardhat_mine's blocks, a load balancer mixing two backends), a log
 * whose block hash is not the header's, a head lower than one it gave before. Retried with
 * backoff; after a bound the next RPC URL is tried. `blocks` are the block numbers concerned.
 */
export class InconsistentAnswerError extends BaseError {
  override name = "InconsistentAnswerError";
  constructor(
    readonly kind: InconsistentKind,
    readonly blocks: readonly number[],
    message: string,
  ) {
    super(message, { retryable: true });
  }
}

/** The provider refused a block range or its answer was too large: split the range and try again. */
export class RangeTooLargeError extends BaseError {
  override name = "RangeTooLargeError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}

/** The chain reorganised deeper than the kept window of block hashes: indexing stops loudly. */
export class DeepReorgError extends BaseError {
  override name = "DeepReorgError";
}

/** The node's genesis block is not the one the database holds for this chain id. */
export class GenesisMismatchError extends BaseError {
  override name = "GenesisMismatchError";
}

/** The node serves another chain than the configured one: indexing it would mix two chains' data. */
export class ChainIdMismatchError extends BaseError {
  override name = "ChainIdMismatchError";
}

/**
 * The node does not serve the transaction source configured for the chain
 * (`chains[].transactionSource`): a configuration to change, not a failure to retry.
 */
export class TransactionSourceUnsupportedError extends BaseError {
  override name = "TransactionSourceUnsupportedError";
}

/** A process we launch (Postgres, the devnet) could not start; the message says why in one line. */
export class LaunchError extends BaseError {
  override name = "LaunchError";
}

/** An HTTP error with its status; the API's one error handler turns it into the error body. */
export class HttpError extends BaseError {
  override name = "HttpError";
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message: string) => new HttpError(404, message);

/** The checkpoint moved under us: another indexer writes this chain. The batch is rolled back. */
export class CheckpointConflictError extends BaseError {
  override name = "CheckpointConflictError";
  constructor(chainId: number, previous: number) {
    super(
      `chain ${chainId}: the checkpoint is no longer block ${previous}; another indexer is writing this chain`,
    );
  }
}

/**
 * This process no longer holds the chain's writer lock (its lock connection failed, or a newer
 * writer claimed the chain): nothing more may be written; the chain goes back to standby.
 */
export class WriterLockLostError extends BaseError {
  override name = "WriterLockLostError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}
