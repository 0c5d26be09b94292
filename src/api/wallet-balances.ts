import { decodeFunctionResult, encodeFunctionData, erc20Abi } from "viem";
import type { ChainConfig, Config } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import { badRequest, HttpError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createRpcClient, MULTICALL3, type RpcClient } from "../rpc/client.js";
import { RpcTimeoutError } from "../rpc/errors.js";
import type { RpcMetrics } from "../rpc/metrics.js";
import type { CallRequest } from "../rpc/types.js";
import type { Address } from "./ids.js";

/** Balances of one token for several wallets, all read at one block. */
export type WalletBalances = { blockNumber: bigint; decimals: number; balances: bigint[] };

/** Reads `balanceOf` of each wallet (and the token's decimals) at the chain head. */
export type BalanceReader = (request: {
  chainId: number;
  token: Address;
  wallets: Address[];
}) => Promise<WalletBalances>;

/**
 * The most a balance read takes, node calls and retries included (docs/API.md): an API client
 * waits at most this long (plus the request's own handling) before a 500 naming the network.
 */
export const BALANCE_TIMEOUT_MS = 3000;

/**
 * The default balance reader: the chain's JSON-RPC client (src/rpc/client.ts: the same retry,
 * failover, classification and metrics as the indexer's) over its configured endpoints. The head
 * block is read first and every call is made at it, so the answer is consistent. Where Multicall3
 * is deployed every call goes in one `eth_call`; elsewhere the calls go out as one JSON-RPC
 * batch. The whole read has one deadline, `timeoutMs`: a single HTTP request may take half of it,
 * so a hanging first node still leaves time to fail over to the next one.
 *
 * A contract that does not answer like an ERC-20 token is a 400; a node that cannot be read is a
 * 500 whose message names the network but never the RPC URL (it may carry a provider's key).
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
      const network = `network ${chainId} (${chain.name})`;
      const why =
        error instanceof RpcTimeoutError
          ? `its node did not answer within ${timeoutMs / 1000} s`
          : error instanceof RetryableRpcError
            ? "its node could not be reached"
            : "its node answered with an error";
      throw new HttpError(500, `could not read balances from ${network}: ${why}; try again later`);
    }
  };
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
