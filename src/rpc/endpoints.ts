import { createPublicClient, HttpRequestError, http, type PublicClient } from "viem";
import type { ChainConfig } from "../config/schema.js";
import type { RpcOptions } from "./options.js";
import { createRateGate, type RateGate } from "./rate-gate.js";

/** One configured URL of a chain: its viem clients, its rate gate and its host for logs. */
export type Endpoint = {
  /** JSON-RPC batches of `batchSize` calls. */
  batched: PublicClient;
  /** Whole-block calls, in smaller batches (`blockBatchSize`): their answers are large. */
  block: PublicClient;
  /**
   * Unbatched, one HTTP request per call: for eth_getLogs, whose answer can be large on its own
   * (a batch would make the calls sharing it fail with it at the response-size cap), and for a
   * call retried alone after its batch's answer was too large.
   */
  solo: PublicClient;
  /** One rate gate per URL: a provider that throttles is slowed down, the others are not. */
  gate: RateGate;
  /** host[:port], never the URL: its path may carry a key. */
  host: string;
};

export type Endpoints = {
  readonly count: number;
  /** The index of the URL to use now: a later one after a failover, the first again after `primaryRetryMs`. */
  pick(): number;
  at(index: number): Endpoint;
  /**
   * Moves on from URL `failed`, unless another call failing at the same time already did: two
   * concurrent failures on a dead URL must not move on twice, back to where they started.
   * True when it moved.
   */
  failOver(failed: number): boolean;
};

/** The URLs of a chain, in configuration order, and which one is in use. */
export function createEndpoints(args: {
  chain: Pick<ChainConfig, "rpc">;
  options: RpcOptions;
  now?: () => number;
}): Endpoints {
  const { chain, options } = args;
  const now = args.now ?? Date.now;
  const clientOf = (url: string, batched: boolean, batchSize = options.batchSize): PublicClient =>
    createPublicClient({
      transport: http(url, {
        batch: batched ? { batchSize, wait: 0 } : false,
        retryCount: 0,
        timeout: options.timeoutMs,
        onFetchResponse: rejectOverloaded,
      }),
    });
  const endpoints: Endpoint[] = chain.rpc.map((url) => ({
    batched: clientOf(url, true),
    block: clientOf(url, true, options.blockBatchSize),
    solo: clientOf(url, false),
    gate: createRateGate({ concurrency: options.concurrency }),
    host: hostOf(url),
  }));
  let current = 0;
  let failedOverAt = 0;
  return {
    count: endpoints.length,
    pick() {
      if (current !== 0 && now() - failedOverAt > options.primaryRetryMs) current = 0;
      return current;
    },
    at: (index) => endpoints[index] as Endpoint,
    failOver(failed) {
      if (endpoints.length < 2 || current !== failed) return false;
      current = (current + 1) % endpoints.length;
      failedOverAt = now();
      return true;
    },
  };
}

/**
 * A 429 or gateway error fails the whole HTTP request, JSON-RPC batch included, with its status
 * and headers (Retry-After), whatever the body says: viem would otherwise read a JSON error
 * object as the answer to a batch and fail on it. Other statuses go through viem's handling
 * (JSON-RPC errors in the body are kept: reverts and range errors are classified from them).
 */
async function rejectOverloaded(response: Response): Promise<void> {
  if (
    response.status !== 429 &&
    response.status !== 502 &&
    response.status !== 503 &&
    response.status !== 504
  )
    return;
  await response.body?.cancel().catch(() => {});
  throw new HttpRequestError({
    url: response.url,
    status: response.status,
    headers: response.headers,
    details: response.statusText,
  });
}

/** host[:port] of a URL; "unknown" when it does not parse. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "unknown";
  }
}
