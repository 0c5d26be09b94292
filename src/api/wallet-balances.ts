import { STATUS_CODES } from "node:http";
import { decodeFunctionResult, encodeFunctionData, erc20Abi } from "viem";
import type { ChainConfig, Config } from "../config/schema.js";
import { badRequest, HttpError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Hex } from "../model/index.js";
import { createRpcClient, MULTICALL3, type RpcClient } from "../rpc/client.js";
import { RateLimitedRpcError, RpcTimeoutError, timedOutWaiting } from "../rpc/errors.js";
import type { RpcMetrics } from "../rpc/metrics.js";
import type { CallRequest } from "../rpc/types.js";

/** Balances of one token for several wallets, all read at one block. */
export type WalletBalances = { blockNumber: bigint; decimals: number; balances: bigint[] };

/** Reads `balanceOf` of each wallet (and the token's decimals) at the chain head. */
export type BalanceReader = (request: {
  chainId: number;
  token: Hex;
  wallets: Hex[];
}) => Promise<WalletBalances>;

/**
 * The most a balance read takes, node calls and retries included (docs/API.md): an API client
 * waits at most this long (plus the request's own handling) before a 504 naming the network.
 */
export const BALANCE_TIMEOUT_MS = 3000;

/** Seconds a client is asked to wait (Retry-After) after the node failed, unless the node said. */
export const BALANCE_RETRY_AFTER_S = 5;

/**
 * The default balance reader: the chain's JSON-RPC client (src/rpc/client.ts: the same retry,
 * failover, classification and metrics as the indexer's) over its configured endpoints. The head
 * block is read first and every call is made at it, so the answer is consistent. Where Multicall3
 * is deployed every call goes in one `eth_call`; elsewhere the calls go out as one JSON-RPC
 * batch. The whole read has one deadline, `timeoutMs`: a single HTTP request may take half of it,
 * so a hanging first node still leaves time to fail over to the next one.
 *
 * A contract that does not answer like an ERC-20 token is a 400; a node that cannot be read is a
 * 502, 503 or 504 with Retry-After (upstreamFailure) whose message names the network and what its
 * node did, but never the RPC URL (it may carry a provider's key).
 */
export function createRpcBalanceReader(options: {
  config: Config;
  logger: Logger;
  metrics?: RpcMetrics;
  timeoutMs?: number;
}): BalanceReader {
  const timeoutMs = options.timeoutMs ?? BALANCE_TIMEOUT_MS;
  const clients = new Map<number, RpcClient>();
  // Only a successful look-up is remembered: a node down at the first request must not turn
  // Multicall3 off for good.
  const hasMulticall = new Map<number, boolean>();

  const chainOf = (chainId: number): ChainConfig => {
    const chain = options.config.chains.find((c) => c.id === chainId);
    if (!chain) throw badRequest(`chain ${chainId} is not configured`);
    return chain;
  };
  const clientOf = (chain: ChainConfig): RpcClient => {
    let client = clients.get(chain.id);
    if (!client) {
      client = createRpcClient({
        chain,
        logger: options.logger.child({ component: "balances", chain_id: chain.id }),
        ...(options.metrics ? { metrics: options.metrics } : {}),
        options: {
          timeoutMs: Math.max(1, Math.floor(timeoutMs / 2)),
          batchSize: 250,
          attempts: 3,
          baseDelayMs: 50,
          maxDelayMs: 500,
        },
      });
      clients.set(chain.id, client);
    }
    return client;
  };

  return async ({ chainId, token, wallets }) => {
    const chain = chainOf(chainId);
    const rpc = clientOf(chain);
    const deadline = Date.now() + timeoutMs;
    const left = () => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new RpcTimeoutError(`balance read: no answer within ${timeoutMs} ms`);
      return { timeoutMs: ms };
    };
    try {
      const known = hasMulticall.get(chainId);
      const [head, multicall] = await Promise.all([
        rpc.getBlockNumber(left()),
        known ?? rpc.getCode(MULTICALL3, "latest", left()).then((code) => code !== "0x"),
      ]);
      hasMulticall.set(chainId, multicall);
      const calls: CallRequest[] = [
        { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: "decimals" }) },
        ...wallets.map((wallet) => ({
          to: token,
          data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [wallet] }),
        })),
      ];
      const results = multicall
        ? await rpc.multicall(calls, head, left())
        : await rpc.calls(calls, head, left());
      const [decimals, ...balances] = results;
      const read = {
        blockNumber: BigInt(head),
        decimals: decodeOrNull(decimals, "decimals"),
        balances: balances.map((b) => decodeOrNull(b, "balanceOf")),
      };
      if (read.decimals === null || read.balances.some((b) => b === null)) {
        throw badRequest(
          `contract ${token} does not answer decimals() and balanceOf() on network ${chainId}: not an ERC-20 token`,
        );
      }
      return { ...read, decimals: Number(read.decimals), balances: read.balances as bigint[] };
    } catch (error) {
      if (error instanceof HttpError) throw error;
      options.logger.warn({ err: error, chain_id: chainId }, "balance read failed");
      const failure = upstreamFailure(error, timeoutMs);
      throw new HttpError(
        failure.status,
        `could not read balances from network ${chainId} (${chain.name}): ${failure.why}; try again later`,
        { "retry-after": String(failure.retryAfterS) },
      );
    }
  };
}

/** How a failed read of the node is answered: a gateway status, what the node did, when to retry. */
export type UpstreamFailure = { status: 502 | 503 | 504; why: string; retryAfterS: number };

/**
 * What the node did, from the error of a failed read (its cause chain: the RPC client's class,
 * viem's HTTP error with the status, the socket's code, a JSON parse error):
 * - it answered HTTP 429, or said when to come back: 503 with its own Retry-After;
 * - it answered another HTTP error status: 502 naming the status;
 * - it answered something that is not JSON: 502;
 * - it did not answer within the read's bound: 504;
 * - it could not be reached (refused, reset, no such host): 503;
 * - it answered a JSON-RPC error: 502 naming the code.
 * The words never quote the node's own text, which may carry its URL and so a provider's key.
 */
export function upstreamFailure(error: unknown, timeoutMs: number): UpstreamFailure {
  let httpStatus: number | undefined;
  let retryAfterMs: number | undefined;
  let rpcCode: number | undefined;
  let socketCode: string | undefined;
  let notJson = false;
  let current: unknown = error;
  for (let depth = 0; current !== null && typeof current === "object" && depth < 10; depth++) {
    const e = current as Record<string, unknown>;
    if (current instanceof RateLimitedRpcError) retryAfterMs ??= current.retryAfterMs;
    if (typeof e.status === "number") httpStatus ??= e.status;
    if (typeof e.code === "number" && e.code !== -1) rpcCode ??= e.code;
    if (typeof e.code === "string" && /^E[A-Z_]+$/.test(e.code)) socketCode ??= e.code;
    if (current instanceof SyntaxError) notJson = true;
    current = e.cause;
  }
  const retryAfterS =
    retryAfterMs === undefined ? BALANCE_RETRY_AFTER_S : Math.max(1, Math.ceil(retryAfterMs / 1000));
  if (httpStatus === 429) {
    return {
      status: 503,
      why: "its node refused the request for now (HTTP 429 Too Many Requests)",
      retryAfterS,
    };
  }
  if (httpStatus !== undefined && (httpStatus < 200 || httpStatus >= 300)) {
    const text = STATUS_CODES[httpStatus];
    return { status: 502, why: `its node answered HTTP ${httpStatus}${text ? ` ${text}` : ""}`, retryAfterS };
  }
  if (notJson) return { status: 502, why: "its node answered something that is not JSON", retryAfterS };
  if (
    timedOutWaiting(error) ||
    (error instanceof RpcTimeoutError && socketCode === undefined && rpcCode === undefined)
  ) {
    return { status: 504, why: `its node did not answer within ${timeoutMs / 1000} s`, retryAfterS };
  }
  if (socketCode !== undefined) {
    const how =
      socketCode === "ECONNREFUSED"
        ? "refused the connection"
        : socketCode === "ENOTFOUND" || socketCode === "EAI_AGAIN"
          ? "has a host name that does not resolve"
          : `failed the connection (${socketCode})`;
    return { status: 503, why: `its node could not be reached: it ${how}`, retryAfterS };
  }
  if (rpcCode !== undefined) {
    return { status: 502, why: `its node answered with JSON-RPC error ${rpcCode}`, retryAfterS };
  }
  return { status: 502, why: "its node answered with an error", retryAfterS };
}

/** The value an ERC-20 view returned, or null when the call failed or the answer is not one. */
function decodeOrNull(data: Hex | null | undefined, functionName: "decimals" | "balanceOf"): bigint | null {
  if (!data) return null;
  try {
    return BigInt(decodeFunctionResult({ abi: erc20Abi, functionName, data }));
  } catch {
    // "0x" from an address without code, or an answer too short: not a token.
    return null;
  }
}
