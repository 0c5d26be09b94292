import type { PublicClient } from "viem";
import type { ChainConfig } from "../config/schema.js";
import { BaseError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { blockTag } from "./convert.js";
import type { Endpoints } from "./endpoints.js";
import {
  CallRevertedError,
  classifyRpcError,
  ResponseTooLargeError,
  RpcTimeoutError,
  ThrottledRpcError,
} from "./errors.js";
import type { RpcMetrics } from "./metrics.js";
import type { CallOptions, RpcOptions } from "./options.js";
import type { RateGate } from "./rate-gate.js";
import { retryDelay, sleep } from "./retry.js";
import type { CallRequest } from "./types.js";

/** `block`: a whole-block call, batched blockBatchSize at a time. */
export type Item = { method: string; params: unknown[]; block?: true };
/** How requestAll treats answers that are not errors to throw. */
export type RequestAllOptions = {
  /** A CallRevertedError is a null result. */
  revertsAsNull?: boolean;
  /** An answer over the size cap even when sent alone is TOO_LARGE instead of an error. */
  tooLargeAsResult?: boolean;
  deadline?: Deadline | undefined;
};
/** The result of a call whose answer alone is over the size cap (with `tooLargeAsResult`). */
export const TOO_LARGE: unique symbol = Symbol("answer over the size cap");
/** The deadline of one call; its signal is shared by the call's requests so that they stay batched. */
export type Deadline = { at: number; ms: number; signal: AbortSignal };

export const deadlineOf = (options: CallOptions | undefined): Deadline | undefined =>
  options?.timeoutMs === undefined
    ? undefined
    : {
        at: Date.now() + options.timeoutMs,
        ms: options.timeoutMs,
        signal: AbortSignal.timeout(Math.max(1, options.timeoutMs)),
      };

/** The client's counters (RpcClient.stats). */
export type RequestCounters = { requests: number; retries: number; failovers: number; throttled: number };

export type Requester = {
  /** Sends all items at once (viem batches them) and retries the retryable failures together. */
  requestAll(items: readonly Item[], how?: RequestAllOptions): Promise<unknown[]>;
  /** Runs bulk items in waves of batchSize (blockBatchSize for block calls) × concurrency calls. */
  requestChunked(items: readonly Item[], how?: RequestAllOptions): Promise<unknown[]>;
  /** Bulk read whose null answers are asked again (see createRequester). */
  requestRetryingNulls<T>(
    items: readonly Item[],
    what: string,
    how?: RequestAllOptions,
  ): Promise<(T | null)[]>;
  request<T>(method: string, params: unknown[], call?: CallOptions): Promise<T>;
  callItems(calls: readonly CallRequest[], blockNumber: number | "latest"): Item[];
};

/**
 * How the client sends calls: over the chain's endpoints (endpoints.ts), classified once
 * (classifyRpcError), retried with backoff and jitter honouring Retry-After, bulk reads retried
 * as one wave so that they stay batched, throttled answers waited out at the URL's rate gate
 * (rate-gate.ts) and counted apart from failures, a caller's deadline ending the retries.
 */
export function createRequester(args: {
  chain: Pick<ChainConfig, "id">;
  logger: Logger;
  options: RpcOptions;
  metrics: RpcMetrics;
  endpoints: Endpoints;
  counters: RequestCounters;
  signal?: AbortSignal | undefined;
}): Requester {
  const { chain, logger, options, metrics, endpoints, counters, signal } = args;

  /**
   * With a deadline, one signal per wave of requests, so that they stay in one HTTP batch (viem
   * batches by signal): it aborts at the deadline or after timeoutMs, whichever comes first (a
   * signal given to viem replaces its own per-request timeout).
   */
  const waveSignal = (deadline: Deadline | undefined): AbortSignal | undefined =>
    deadline && AbortSignal.any([deadline.signal, AbortSignal.timeout(options.timeoutMs)]);

  const rawRequest = async (
    item: Item,
    client: PublicClient,
    deadline: Deadline | undefined,
    wave: AbortSignal | undefined,
  ): Promise<unknown> => {
    if (signal?.aborted) throw new BaseError("stopped", { cause: signal.reason });
    counters.requests++;
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await client.request(
        { method: item.method, params: item.params } as never,
        wave ? { signal: wave } : undefined,
      );
      metrics.call(chain.id, item.method, seconds());
      return result;
    } catch (error) {
      const classified = deadline?.signal.aborted
        ? new RpcTimeoutError(`${item.method}: no answer within ${deadline.ms} ms`, { cause: error })
        : wave?.aborted
          ? new RpcTimeoutError(`${item.method}: no answer within ${options.timeoutMs} ms`, { cause: error })
          : classifyRpcError(error, item.method);
      metrics.call(chain.id, item.method, seconds(), classified);
      throw classified;
    }
  };

  /**
   * Sends all items at once (viem batches them) and retries the retryable failures together.
   * With `revertsAsNull`, a CallRevertedError is a null result instead of an error; with
   * `tooLargeAsResult`, an answer over the size cap even alone is TOO_LARGE.
   */
  const requestAll = async (items: readonly Item[], how: RequestAllOptions = {}): Promise<unknown[]> => {
    const { revertsAsNull = false, tooLargeAsResult = false, deadline } = how;
    const results: unknown[] = new Array(items.length);
    let pending = items.map((_, i) => i);
    // Items whose batched answer was over the size cap: from then on each is sent on its own.
    const alone = new Set<number>();
    // Failures and throttled answers are counted apart: see RpcOptions.throttledAttempts.
    let failures = 0;
    let throttles = 0;
    for (;;) {
      const used = endpoints.pick();
      const { gate, batched, block: blockBatched, solo, host } = endpoints.at(used);
      const leave = await enterGate(gate, deadline, items[pending[0] as number]?.method);
      const wave = waveSignal(deadline);
      const sendsAlone = (i: number) => alone.has(i) || (items[i] as Item).method === "eth_getLogs";
      const settled = await inLimitedParallel(pending, sendsAlone, (i) => {
        const item = items[i] as Item;
        return rawRequest(item, sendsAlone(i) ? solo : item.block ? blockBatched : batched, deadline, wave);
      }).finally(leave);
      const failed: number[] = [];
      let worst: RetryableRpcError | undefined;
      let onlyTooLarge = true;
      for (let k = 0; k < settled.length; k++) {
        const outcome = settled[k] as PromiseSettledResult<unknown>;
        const index = pending[k] as number;
        if (outcome.status === "fulfilled") {
          results[index] = outcome.value;
          continue;
        }
        const error = outcome.reason as unknown;
        if (revertsAsNull && error instanceof CallRevertedError) {
          results[index] = null;
        } else if (error instanceof ResponseTooLargeError && sendsAlone(index)) {
          // Alone and still over the cap: no retry can make this answer smaller.
          if (tooLargeAsResult) {
            results[index] = TOO_LARGE;
            continue;
          }
          throw new BaseError(`${error.message} (sent alone)`, { cause: error });
        } else if (error instanceof RetryableRpcError) {
          failed.push(index);
          worst = pickWorse(worst, error);
          if (error instanceof ResponseTooLargeError) alone.add(index);
          else onlyTooLarge = false;
        } else {
          throw error;
        }
      }
      const throttled = worst instanceof ThrottledRpcError;
      if (!throttled && gate.state().share < 1) {
        gate.succeeded();
        metrics.share(chain.id, host, gate.state().share);
      }
      if (failed.length === 0 || worst === undefined) return results;
      if (throttled) throttles++;
      else failures++;
      if (failures >= options.attempts || throttles >= options.throttledAttempts) throw worst;
      const attempt = throttled ? throttles : failures;
      const delayMs = retryDelay(worst, attempt, options);
      // The caller's deadline ends the retries: an answer after it would come too late anyway.
      if (deadline && (deadline.signal.aborted || Date.now() + delayMs >= deadline.at)) {
        throw worst instanceof RpcTimeoutError
          ? worst
          : new RpcTimeoutError(`${items[failed[0] as number]?.method}: no answer within ${deadline.ms} ms`, {
              cause: worst,
            });
      }
      counters.retries++;
      metrics.retry(chain.id, host);
      if (throttled) {
        // Every request to this URL waits (enterGate), and its parallelism is halved.
        counters.throttled++;
        gate.throttled(delayMs);
        metrics.throttled(chain.id, host);
        metrics.share(chain.id, host, gate.state().share);
      }
      // The first retry of a series is a warning naming the cause and the provider's host (never
      // the URL: it may carry a key); the further ones are detail.
      (failures + throttles === 1 ? logger.warn : logger.debug).call(
        logger,
        {
          method: items[failed[0] as number]?.method,
          rpc_host: host,
          failed: failed.length,
          attempt: failures + throttles,
          delay_ms: delayMs,
          ...(throttled ? { share: gate.state().share } : {}),
          error: worst.message,
        },
        throttled ? "rpc throttled by the provider; waiting and slowing down" : "rpc retry",
      );
      // An answer too large is the batch's size, not the node's fault: no reason to leave the URL.
      if (!onlyTooLarge && endpoints.failOver(used)) {
        counters.failovers++;
        metrics.failover(chain.id);
      }
      if (!throttled) await sleep(delayMs, signal);
      pending = failed;
    }
  };

  /**
   * Takes a place at the URL's rate gate: waits out the provider's pause and the waves already in
   * flight. A caller's deadline that passes meanwhile is an RpcTimeoutError.
   */
  const enterGate = async (gate: RateGate, deadline: Deadline | undefined, method: string | undefined) => {
    const waitSignal = deadline
      ? signal
        ? AbortSignal.any([signal, deadline.signal])
        : deadline.signal
      : signal;
    try {
      return await gate.enter(waitSignal);
    } catch (error) {
      if (deadline?.signal.aborted && !signal?.aborted) {
        throw new RpcTimeoutError(
          `${method}: no answer within ${deadline.ms} ms (the provider is throttling)`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
  };

  /** Runs bulk items in waves of batchSize (blockBatchSize for block calls) × concurrency calls. */
  const requestChunked = async (items: readonly Item[], how: RequestAllOptions = {}): Promise<unknown[]> => {
    const batch = items[0]?.block ? options.blockBatchSize : options.batchSize;
    const full = batch * options.concurrency;
    // Cut to the URL's share (rate-gate.ts) at each wave: a throttling provider gets fewer
    // batches at a time, smaller ones down to half a batch, and the full wave again once it answers.
    const wave = () => endpoints.at(endpoints.pick()).gate.calls(full, batch);
    if (items.length <= wave()) return requestAll(items, how);
    const out: unknown[] = [];
    for (let start = 0; start < items.length; ) {
      const size = wave();
      const results = await requestAll(items.slice(start, start + size), how);
      for (const result of results) out.push(result);
      start += size;
    }
    return out;
  };

  const request = async <T>(method: string, params: unknown[], call?: CallOptions): Promise<T> => {
    const [result] = await requestAll([{ method, params }], { deadline: deadlineOf(call) });
    return result as T;
  };

  const callItems = (calls: readonly CallRequest[], blockNumber: number | "latest"): Item[] => {
    const tag = blockTag(blockNumber);
    return calls.map((c) => ({ method: "eth_call", params: [{ to: c.to, data: c.data }, tag] }));
  };

  /**
   * Bulk read whose null answers are asked again, up to `attempts` tries in all: a load-balanced
   * provider may not have the newest blocks and transactions on every node yet. Nulls left after
   * the last try stay null.
   */
  const requestRetryingNulls = async <T>(
    items: readonly Item[],
    what: string,
    how: RequestAllOptions = {},
  ): Promise<(T | null)[]> => {
    const results = (await requestChunked(items, how)) as (T | null)[];
    for (let attempt = 1; attempt < options.attempts && results.some((r) => r === null); attempt++) {
      await sleep(retryDelay(new RetryableRpcError(what), attempt, options), signal);
      const missing = results.map((r, i) => (r === null ? i : -1)).filter((i) => i >= 0);
      const again = (await requestChunked(
        missing.map((i) => items[i] as Item),
        how,
      )) as (T | null)[];
      missing.forEach((i, k) => {
        results[i] = again[k] ?? null;
      });
    }
    return results;
  };

  return { requestAll, requestChunked, requestRetryingNulls, request, callItems };
}

/**
 * Runs `run` on every item and settles them all, in order. The batched ones start together (viem
 * gathers them into HTTP batches); the unbatched ones are one HTTP request each, so at most
 * SOLO_PARALLEL of them are in flight at once: a batch split after a too-large answer must not
 * become hundreds of simultaneous requests to the provider.
 */
async function inLimitedParallel<T>(
  items: readonly number[],
  isSolo: (i: number) => boolean,
  run: (i: number) => Promise<T>,
): Promise<PromiseSettledResult<T>[]> {
  const settle = (p: Promise<T>): Promise<PromiseSettledResult<T>> =>
    p.then(
      (value) => ({ status: "fulfilled", value }),
      (reason: unknown) => ({ status: "rejected", reason }),
    );
  const out: PromiseSettledResult<T>[] = new Array(items.length);
  const batched: Promise<void>[] = [];
  const solo: number[] = [];
  items.forEach((item, k) => {
    if (isSolo(item)) solo.push(k);
    else
      batched.push(
        settle(run(item)).then((r) => {
          out[k] = r;
        }),
      );
  });
  let next = 0;
  const worker = async () => {
    while (next < solo.length) {
      const k = solo[next++] as number;
      out[k] = await settle(run(items[k] as number));
    }
  };
  const workers = Array.from({ length: Math.min(SOLO_PARALLEL, solo.length) }, worker);
  await Promise.all([...batched, ...workers]);
  return out;
}

/** Unbatched requests in flight at once for one bulk read. */
const SOLO_PARALLEL = 8;

function pickWorse(a: RetryableRpcError | undefined, b: RetryableRpcError): RetryableRpcError {
  if (!a) return b;
  const after = (e: RetryableRpcError) => (e as { retryAfterMs?: number }).retryAfterMs ?? -1;
  return after(b) > after(a) ? b : a;
}
