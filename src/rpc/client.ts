import { createPublicClient, decodeFunctionResult, encodeFunctionData, multicall3Abi, webSocket } from "viem";
import type { ChainConfig } from "../config/schema.js";
import type { Hex, RawLog } from "../decode/types.js";
import { BaseError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import {
  blockTag,
  fromFullBlock,
  fromReceipts,
  lower,
  type RpcBlock,
  type RpcFullBlock,
  type RpcLog,
  type RpcReceipt,
  type RpcTx,
  toHeader,
  toQuantity,
  toRawLog,
  toTransaction,
} from "./convert.js";
import { createEndpoints, hostOf } from "./endpoints.js";
import { createRpcMetrics, type RpcMetrics } from "./metrics.js";
import { type CallOptions, defaultRpcOptions, type RpcOptions } from "./options.js";
import type { RateGateState } from "./rate-gate.js";
import { createRequester, deadlineOf, type Item, type RequestCounters } from "./requester.js";
import type { BlockHeader, BlockTransactions, CallRequest, LogFilter, TransactionInfo } from "./types.js";

export { hostOf } from "./endpoints.js";
export { type CallOptions, defaultRpcOptions, type RpcOptions } from "./options.js";

/** Multicall3's address, the same on every chain that has it. */
export const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11" as const;

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
  const endpoints = createEndpoints({ chain, options });
  const counters: RequestCounters = { requests: 0, retries: 0, failovers: 0, throttled: 0 };
  const { requestAll, requestChunked, requestRetryingNulls, request, callItems } = createRequester({
    chain,
    logger,
    options,
    metrics,
    endpoints,
    counters,
    signal,
  });
  const unwatchers = new Set<() => void>();
  let wsClient: ReturnType<typeof createWsClient> | undefined;

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
    host: () => endpoints.at(endpoints.pick()).host,
    failOver: () => {
      if (endpoints.count < 2) return false;
      if (endpoints.failOver(endpoints.pick())) {
        counters.failovers++;
        metrics.failover(chain.id);
      }
      return true;
    },
    stats: () => ({ ...counters }),
    rate: () => endpoints.at(endpoints.pick()).gate.state(),
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

function createWsClient(url: string) {
  return createPublicClient({
    transport: webSocket(url, { retryCount: 0, keepAlive: true, reconnect: true }),
  });
}
