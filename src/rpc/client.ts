import {
  createPublicClient,
  decodeFunctionResult,
  encodeFunctionData,
  HttpRequestError,
  http,
  multicall3Abi,
  type PublicClient,
  webSocket,
} from "viem";
import type { ChainConfig } from "../config/schema.js";
import type { Hex, RawLog } from "../decode/types.js";
import { BaseError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import {
  CallRevertedError,
  classifyRpcError,
  ResponseTooLargeError,
  RpcTimeoutError,
  ThrottledRpcError,
} from "./errors.js";
import { createRpcMetrics, type RpcMetrics } from "./metrics.js";
import { createRateGate, type RateGate, type RateGateState } from "./rate-gate.js";
import { retryDelay, sleep } from "./retry.js";
import type { BlockHeader, BlockTransactions, CallRequest, LogFilter, TransactionInfo } from "./types.js";

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

/** Multicall3's address, the same on every chain that has it. */
export const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11" as const;

/** Per call: what a caller that must answer in time (an API request) asks of one client method. */
export type CallOptions = {
  /**
   * The whole call, retries and failovers included, ends within this many milliseconds: an
   * RpcTimeoutError when no answer came in time. Without it, the client's retry policy alone
   * bounds the call (the indexer's way: it would rather wait than fail).
   */
  timeoutMs?: number;
};

export type RpcClient = {
  readonly chainId: number;
  /** One JSON-RPC call with classification, retry and fallback. */
  request<T>(method: string, params: unknown[], options?: CallOptions): Promise<T>;
  getChainId(): Promise<number>;
  getBlockNumber(options?: CallOptions): Promise<number>;
  /** A header, or null when the node does not have that block. */
  getBlock(block: number | "latest"): Promise<BlockHeader | null>;
  /** Headers of these blocks, in the same order; null for a block the node does not have. */
  getBlocksOrNull(numbers: readonly number[]): Promise<(BlockHeader | null)[]>;
  /** Headers of these blocks, in the same order; a block the node does not have yet is retried. */
  getBlocks(numbers: readonly number[]): Promise<BlockHeader[]>;
  /** eth_getLogs; throws RangeTooLargeError (not retried) when the provider refuses the range. */
  getLogs(filter: LogFilter, options?: CallOptions): Promise<RawLog[]>;
  /** Transactions by hash; a hash the node does not know is retried, then missing from the map. */
  getTransactions(hashes: readonly Hex[]): Promise<Map<Hex, TransactionInfo>>;
  /**
   * eth_getBlockReceipts of each block, batched (blockBatchSize a batch): the block's hash, its
   * time when the receipts' logs carry `blockTimestamp`, and the senders and targets of the
   * transactions `wanted` accepts (only those are converted: a block holds hundreds). Null for a
   * block the node has no receipts of (after retries) or whose receipts alone are over the size
   * cap: the caller reads those another way. A node without the method: MethodNotSupportedError.
   */
  getBlockReceipts(
    numbers: readonly number[],
    wanted: (hash: Hex) => boolean,
  ): Promise<(BlockTransactions | null)[]>;
  /** eth_getBlockByNumber(n, true) of each block, batched like getBlockReceipts, with the same nulls. */
  getFullBlocks(
    numbers: readonly number[],
    wanted: (hash: Hex) => boolean,
  ): Promise<(BlockTransactions | null)[]>;
  /** eth_calls at one block, batched; a reverted call gives null. */
  calls(
    calls: readonly CallRequest[],
    blockNumber: number | "latest",
    options?: CallOptions,
  ): Promise<(Hex | null)[]>;
  /**
   * The same calls in one eth_call through Multicall3's aggregate3 (each call allowed to fail):
   * one round trip whatever their number; a failed call gives null. Only where Multicall3 is
   * deployed (see `getCode(MULTICALL3)`); elsewhere it throws.
   */
  multicall(
    calls: readonly CallRequest[],
    blockNumber: number | "latest",
    options?: CallOptions,
  ): Promise<(Hex | null)[]>;
  /** The native-currency balance of an address, in wei. */
  getBalance(address: Hex, blockNumber: number | "latest", options?: CallOptions): Promise<bigint>;
  getCode(address: Hex, blockNumber: number | "latest", options?: CallOptions): Promise<Hex>;
  /** New-head notifications over the chain's `ws` endpoint; a no-op without one. Returns the unsubscribe. */
  watchHeads(onHead: (blockNumber: number) => void): () => void;
  /** host[:port] of the URL in use now, for logs: never the whole URL, whose path may carry a key. */
  host(): string;
  /**
   * Moves to the chain's next configured URL (the indexer's choice when the one in use keeps
   * answering inconsistently). False when there is only one URL.
   */
  failOver(): boolean;
  /** Counters for logs and tests. */
  stats(): { requests: number; retries: number; failovers: number; throttled: number };
  /** The rate gate of the URL in use now (rate-gate.ts): the share of parallelism it is given. */
  rate(): RateGateState;
  close(): Promise<void>;
};

/** `block`: a whole-block call, batched blockBatchSize at a time. */
type Item = { method: string; params: unknown[]; block?: true };
/** How requestAll treats answers that are not errors to throw. */
type RequestAllOptions = {
  /** A CallRevertedError is a null result. */
  revertsAsNull?: boolean;
  /** An answer over the size cap even when sent alone is TOO_LARGE instead of an error. */
  tooLargeAsResult?: boolean;
  deadline?: Deadline | undefined;
};
/** The result of a call whose answer alone is over the size cap (with `tooLargeAsResult`). */
const TOO_LARGE: unique symbol = Symbol("answer over the size cap");
/** The deadline of one call; its signal is shared by the call's requests so that they stay batched. */
type Deadline = { at: number; ms: number; signal: AbortSignal };

const deadlineOf = (options: CallOptions | undefined): Deadline | undefined =>
  options?.timeoutMs === undefined
    ? undefined
    : {
        at: Date.now() + options.timeoutMs,
        ms: options.timeoutMs,
        signal: AbortSignal.timeout(Math.max(1, options.timeoutMs)),
      };

/**
 * Creates the JSON-RPC client of one chain: a viem HTTP client per configured URL (JSON-RPC
 * batching on), used in order: a retryable failure moves to the next URL. Errors are classified
 * once (classifyRpcError); RetryableRpcError is retried with backoff and jitter, honouring
 * Retry-After; bulk reads retry their failed calls together as one wave so that they stay batched.
 * A caller that must answer in time (the API) gives a call `timeoutMs`: retries stop at that
 * deadline. Every call is counted in `metrics` by chain and method, failures by kind. The indexer
 * and the API's balance reads both use this client: one retry policy, one set of metrics.
 */
export function createRpcClient(args: {
  chain: Pick<ChainConfig, "id" | "rpc" | "ws">;
  /** Carries the chain's context (a child logger with chain_id). */
  logger: Logger;
  options?: Partial<RpcOptions>;
  /** The process's RPC metrics (shared by the indexer and the API); default: a registry of its own. */
  metrics?: RpcMetrics;
  /**
   * Ends retry waits and refuses new requests (the indexer's stop). Requests in flight are not
   * aborted: a per-request signal would split viem's JSON-RPC batches; they end within timeoutMs.
   */
  signal?: AbortSignal | undefined;
}): RpcClient {
  const { signal } = args;
  const { chain, logger } = args;
  const options: RpcOptions = { ...defaultRpcOptions, ...args.options };
  const metrics = args.metrics ?? createRpcMetrics();
  const clientOf = (url: string, batched: boolean, batchSize = options.batchSize): PublicClient =>
    createPublicClient({
      transport: http(url, {
        batch: batched ? { batchSize, wait: 0 } : false,
        retryCount: 0,
        timeout: options.timeoutMs,
        onFetchResponse: rejectOverloaded,
      }),
    });
  const clients: PublicClient[] = chain.rpc.map((url) => clientOf(url, true));
  // Whole-block calls in smaller batches: their answers are large.
  const blockClients: PublicClient[] = chain.rpc.map((url) => clientOf(url, true, options.blockBatchSize));
  // Unbatched twins, one HTTP request per call: for eth_getLogs, whose answer can be large on its
  // own (a batch would make the calls sharing it fail with it at the response-size cap), and for
  // a call retried alone after its batch's answer was too large.
  const soloClients: PublicClient[] = chain.rpc.map((url) => clientOf(url, false));
  // One rate gate per URL: a provider that throttles is slowed down, the others are not.
  const gates: RateGate[] = chain.rpc.map(() => createRateGate({ concurrency: options.concurrency }));
  const hosts = chain.rpc.map(hostOf);
  let current = 0;
  let failedOverAt = 0;
  const counters = { requests: 0, retries: 0, failovers: 0, throttled: 0 };
  const unwatchers = new Set<() => void>();
  let wsClient: ReturnType<typeof createWsClient> | undefined;

  /** The index of the URL to use now. */
  const pickClient = (): number => {
    if (current !== 0 && Date.now() - failedOverAt > options.primaryRetryMs) current = 0;
    return current;
  };

  /**
   * Moves on from URL `failed`, unless another call failing at the same time already did: two
   * concurrent failures on a dead URL must not move on twice, back to where they started.
   */
  const failOver = (failed: number) => {
    if (clients.length < 2 || current !== failed) return;
    current = (current + 1) % clients.length;
    failedOverAt = Date.now();
    counters.failovers++;
    metrics.failover(chain.id);
  };

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
      const used = pickClient();
      const gate = gates[used] as RateGate;
      const leave = await enterGate(gate, deadline, items[pending[0] as number]?.method);
      const wave = waveSignal(deadline);
      const batched = clients[used] as PublicClient;
      const blockBatched = blockClients[used] as PublicClient;
      const solo = soloClients[used] as PublicClient;
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
        metrics.share(chain.id, hosts[used] as string, gate.state().share);
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
      const host = hosts[used] as string;
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
      if (!onlyTooLarge) failOver(used);
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
    const wave = () => (gates[pickClient()] as RateGate).calls(full, batch);
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

  const blockItems = (numbers: readonly number[]): Item[] =>
    numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [toQuantity(n), false] }));

  const getBlocks = async (numbers: readonly number[]): Promise<BlockHeader[]> => {
    const headers = await requestRetryingNulls<RpcBlock>(blockItems(numbers), "missing block");
    const missing = numbers.filter((_, i) => headers[i] === null);
    if (missing.length > 0)
      throw new RetryableRpcError(`blocks not available from the node: ${missing.slice(0, 5).join(", ")}`);
    return headers.map((h) => toHeader(h as RpcBlock));
  };

  return {
    chainId: chain.id,
    request,
    getChainId: async () => Number(await request<string>("eth_chainId", [])),
    getBlockNumber: async (call) => Number(await request<string>("eth_blockNumber", [], call)),
    getBlock: async (block) => {
      const raw = await request<RpcBlock | null>("eth_getBlockByNumber", [
        block === "latest" ? "latest" : toQuantity(block),
        false,
      ]);
      return raw ? toHeader(raw) : null;
    },
    getBlocks,
    getBlocksOrNull: async (numbers) => {
      const raw = (await requestChunked(blockItems(numbers))) as (RpcBlock | null)[];
      return raw.map((h) => (h ? toHeader(h) : null));
    },
    getLogs: async (filter, call) => {
      const raw = await request<RpcLog[]>(
        "eth_getLogs",
        [
          {
            fromBlock: toQuantity(filter.fromBlock),
            toBlock: toQuantity(filter.toBlock),
            ...(filter.address ? { address: filter.address } : {}),
            topics: [filter.topic0],
          },
        ],
        call,
      );
      if (!Array.isArray(raw))
        throw new RetryableRpcError("eth_getLogs answered something other than a list");
      return raw.filter((log) => !log.removed).map(toRawLog);
    },
    getTransactions: async (hashes) => {
      const unique = [...new Set(hashes)];
      const raw = await requestRetryingNulls<RpcTx>(
        unique.map((h) => ({ method: "eth_getTransactionByHash", params: [h] })),
        "missing transaction",
      );
      const map = new Map<Hex, TransactionInfo>();
      for (const tx of raw) if (tx) map.set(lower(tx.hash), toTransaction(tx));
      return map;
    },
    getBlockReceipts: async (numbers, wanted) => {
      const raw = await requestRetryingNulls<unknown>(
        numbers.map((n) => ({ method: "eth_getBlockReceipts", params: [toQuantity(n)], block: true })),
        "missing block receipts",
        { tooLargeAsResult: true },
      );
      return raw.map((answer, i) =>
        Array.isArray(answer) ? fromReceipts(numbers[i] as number, answer as RpcReceipt[], wanted) : null,
      );
    },
    getFullBlocks: async (numbers, wanted) => {
      const raw = await requestRetryingNulls<unknown>(
        numbers.map((n) => ({ method: "eth_getBlockByNumber", params: [toQuantity(n), true], block: true })),
        "missing block",
        { tooLargeAsResult: true },
      );
      return raw.map((answer) =>
        // null: not available; TOO_LARGE (a symbol): over the cap alone.
        answer !== null && typeof answer === "object" ? fromFullBlock(answer as RpcFullBlock, wanted) : null,
      );
    },
    calls: async (calls, blockNumber, call) => {
      const results = await requestChunked(callItems(calls, blockNumber), {
        revertsAsNull: true,
        deadline: deadlineOf(call),
      });
      return results.map((r) => (typeof r === "string" ? lower(r) : null));
    },
    multicall: async (calls, blockNumber, call) => {
      if (calls.length === 0) return [];
      const data = encodeFunctionData({
        abi: multicall3Abi,
        functionName: "aggregate3",
        args: [calls.map((c) => ({ target: c.to, allowFailure: true, callData: c.data }))],
      });
      const [raw] = await requestAll(callItems([{ to: MULTICALL3, data }], blockNumber), {
        deadline: deadlineOf(call),
      });
      if (typeof raw !== "string" || raw === "0x") {
        throw new BaseError(`Multicall3 is not deployed at ${MULTICALL3} on chain ${chain.id}`);
      }
      const results = decodeFunctionResult({
        abi: multicall3Abi,
        functionName: "aggregate3",
        data: raw as Hex,
      });
      return results.map((r) => (r.success ? lower(r.returnData) : null));
    },
    getBalance: async (address, blockNumber, call) =>
      BigInt(await request<string>("eth_getBalance", [address, blockTag(blockNumber)], call)),
    getCode: async (address, blockNumber, call) =>
      lower(await request<string>("eth_getCode", [address, blockTag(blockNumber)], call)),
    watchHeads: (onHead) => {
      if (!chain.ws) return () => {};
      wsClient ??= createWsClient(chain.ws);
      const unwatch = wsClient.watchBlockNumber({
        onBlockNumber: (n) => onHead(Number(n)),
        onError: (error) =>
          logger.warn(
            { error: error.message, ws_host: hostOf(chain.ws ?? "") },
            "new-head subscription failed",
          ),
      });
      unwatchers.add(unwatch);
      return () => {
        unwatch();
        unwatchers.delete(unwatch);
      };
    },
    host: () => hostOf(chain.rpc[pickClient()] ?? ""),
    failOver: () => {
      if (clients.length < 2) return false;
      failOver(pickClient());
      return true;
    },
    stats: () => ({ ...counters }),
    rate: () => (gates[pickClient()] as RateGate).state(),
    close: async () => {
      for (const unwatch of unwatchers) unwatch();
      unwatchers.clear();
      if (wsClient) {
        const transport = wsClient.transport as { getRpcClient?: () => Promise<{ close(): void }> };
        await transport
          .getRpcClient?.()
          .then((rpc) => rpc.close())
          .catch(() => {});
      }
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

function createWsClient(url: string) {
  return createPublicClient({
    transport: webSocket(url, { retryCount: 0, keepAlive: true, reconnect: true }),
  });
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

type RpcBlock = { number: string; hash: string; parentHash: string; timestamp: string };
type RpcLog = {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string | null;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  removed?: boolean;
};
type RpcTx = {
  hash: string;
  from: string;
  to: string | null;
  blockHash: string | null;
  blockNumber: string | null;
  transactionIndex: string | null;
};

/** A receipt's fields the indexer reads (eth_getBlockReceipts). */
type RpcReceipt = {
  transactionHash: string;
  transactionIndex: string;
  blockHash: string | null;
  blockNumber: string | null;
  from: string;
  to: string | null;
  logs?: { blockTimestamp?: string }[];
};
/** eth_getBlockByNumber(n, true): transactions as objects (a hash string: the node ignored `true`). */
type RpcFullBlock = RpcBlock & { transactions?: (RpcTx | string)[] };

const toQuantity = (n: number): Hex => `0x${n.toString(16)}`;
const blockTag = (block: number | "latest"): Hex | "latest" =>
  block === "latest" ? "latest" : toQuantity(block);
const lower = (s: string): Hex => s.toLowerCase() as Hex;

function toHeader(raw: RpcBlock): BlockHeader {
  if (!raw?.hash) throw new BaseError("eth_getBlockByNumber answered a block without a hash");
  return {
    number: Number(raw.number),
    hash: lower(raw.hash),
    parentHash: lower(raw.parentHash),
    timestamp: Number(raw.timestamp),
  };
}

function toRawLog(raw: RpcLog): RawLog {
  return {
    address: lower(raw.address),
    topics: raw.topics.map(lower),
    data: lower(raw.data),
    blockNumber: Number(raw.blockNumber),
    blockHash: raw.blockHash ? lower(raw.blockHash) : null,
    transactionHash: lower(raw.transactionHash),
    transactionIndex: Number(raw.transactionIndex),
    logIndex: Number(raw.logIndex),
  };
}

/**
 * A block's receipts → its hash, its time (the first log's `blockTimestamp`; 0, which geth 1.16.1
 * answers in some paths, counts as missing) and the wanted transactions. Only those are converted.
 */
function fromReceipts(number: number, receipts: readonly RpcReceipt[], wanted: (hash: Hex) => boolean) {
  let hash: Hex | null = null;
  let timestamp: number | null = null;
  const transactions: TransactionInfo[] = [];
  for (const receipt of receipts) {
    if (hash === null && receipt.blockHash) hash = lower(receipt.blockHash);
    if (timestamp === null && receipt.logs && receipt.logs.length > 0) {
      const stamp = receipt.logs[0]?.blockTimestamp;
      if (stamp !== undefined && Number(stamp) > 0) timestamp = Number(stamp);
    }
    const txHash = lower(receipt.transactionHash);
    if (!wanted(txHash)) continue;
    transactions.push({
      hash: txHash,
      from: lower(receipt.from),
      to: receipt.to ? lower(receipt.to) : null,
      blockHash: receipt.blockHash ? lower(receipt.blockHash) : null,
      blockNumber: receipt.blockNumber === null ? null : Number(receipt.blockNumber),
      transactionIndex: Number(receipt.transactionIndex),
    });
  }
  return { number, hash, parentHash: null, timestamp, transactions } satisfies BlockTransactions;
}

/** A full block → its header fields and the wanted transactions (only those are converted). */
function fromFullBlock(raw: RpcFullBlock, wanted: (hash: Hex) => boolean): BlockTransactions {
  const header = toHeader(raw);
  const transactions: TransactionInfo[] = [];
  for (const tx of raw.transactions ?? []) {
    if (typeof tx === "string") continue;
    const txHash = lower(tx.hash);
    if (wanted(txHash)) transactions.push(toTransaction(tx));
  }
  return { ...header, transactions };
}

function toTransaction(raw: RpcTx): TransactionInfo {
  return {
    hash: lower(raw.hash),
    from: lower(raw.from),
    to: raw.to ? lower(raw.to) : null,
    blockHash: raw.blockHash ? lower(raw.blockHash) : null,
    blockNumber: raw.blockNumber === null ? null : Number(raw.blockNumber),
    transactionIndex: raw.transactionIndex === null ? null : Number(raw.transactionIndex),
  };
}
