import { RetryableRpcError } from "../internal/errors.js";
import { RateLimitedRpcError } from "./errors.js";

export type RetryOptions = {
  /** Tries in all (the first one included). */
  attempts: number;
  /** Delay before the first retry; doubles with each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
  signal?: AbortSignal | undefined;
  /** Called before sleeping for a retry. */
  onRetry?: ((error: RetryableRpcError, attempt: number, delayMs: number) => void) | undefined;
};

/**
 * Runs `fn` until it succeeds, retrying only RetryableRpcError (class, not message) with
 * exponential backoff and full jitter, or the provider's Retry-After when it gave one. Any other
 * error, and the last retryable one, is thrown.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (!(error instanceof RetryableRpcError) || attempt >= options.attempts || options.signal?.aborted)
        throw error;
      const delayMs = retryDelay(error, attempt, options);
      options.onRetry?.(error, attempt, delayMs);
      await sleep(delayMs, options.signal);
    }
  }
}

/** Backoff before retry number `attempt` (1-based): jittered exponential, or Retry-After when given. */
export function retryDelay(
  error: RetryableRpcError,
  attempt: number,
  options: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs">,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  const jittered = ceiling / 2 + Math.random() * (ceiling / 2);
  if (error instanceof RateLimitedRpcError && error.retryAfterMs !== undefined) {
    // The provider's word wins, with a little jitter so that parallel callers do not return together.
    return Math.min(
      Math.max(error.retryAfterMs, 0) + Math.random() * 100,
      Math.max(options.maxDelayMs, 60_000),
    );
  }
  return Math.round(jittered);
}

/** Resolves after `ms`, or rejects with the signal's reason when it is aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
