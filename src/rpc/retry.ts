import type { RetryableRpcError } from "../internal/errors.js";
import { RateLimitedRpcError } from "./errors.js";

export type BackoffOptions = {
  /** Delay before the first retry; doubles with each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
};

/** Backoff before retry number `attempt` (1-based): jittered exponential, or Retry-After when given. */
export function retryDelay(error: RetryableRpcError, attempt: number, options: BackoffOptions): number {
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
