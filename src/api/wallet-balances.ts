import {
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  createPublicClient,
  erc20Abi,
  fallback,
  http,
  type PublicClient,
  BaseError as ViemError,
} from "viem";
import type { Config } from "../config/schema.js";
import { badRequest, HttpError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Address } from "./ids.js";

/** Balances of one token for several wallets, all read at one block. */
export type WalletBalances = { blockNumber: bigint; decimals: number; balances: bigint[] };

/** Reads `balanceOf` of each wallet (and the token's decimals) at the chain head. */
export type BalanceReader = (request: {
  chainId: number;
  token: Address;
  wallets: Address[];
}) => Promise<WalletBalances>;

/** Multicall3's address, the same on every chain that has it. */
export const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11" as const;

/**
 * The default balance reader: one viem client per configured chain over its JSON-RPC endpoints
 * (tried in order), all calls made at the head block read first, so the answer is consistent.
 * Where Multicall3 is deployed every call goes in one `eth_call`; elsewhere the calls go out as
 * one JSON-RPC batch. A contract that does not answer like an ERC-20 token is a 400; a node that
 * cannot be reached is a 500 whose message names the network but never the RPC URL.
 */
export function createRpcBalanceReader(options: {
  config: Config;
  logger: Logger;
  timeoutMs?: number;
}): BalanceReader {
  const clients = new Map<number, PublicClient>();
  const hasMulticall = new Map<number, Promise<boolean>>();
  const clientOf = (chainId: number): PublicClient => {
    let client = clients.get(chainId);
    if (!client) {
      const chain = options.config.chains.find((c) => c.id === chainId);
      if (!chain) throw badRequest(`chain ${chainId} is not configured`);
      const transports = chain.rpc.map((url) =>
        http(url, { batch: { batchSize: 250, wait: 0 }, timeout: options.timeoutMs ?? 5000, retryCount: 1 }),
      );
      client = createPublicClient({
        transport: transports.length === 1 ? (transports[0] as never) : fallback(transports),
      });
      clients.set(chainId, client);
    }
    return client;
  };

  return async ({ chainId, token, wallets }) => {
    const client = clientOf(chainId);
    try {
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      let multicall = hasMulticall.get(chainId);
      if (!multicall) {
        multicall = client
          .getCode({ address: MULTICALL3 })
          .then((code) => code !== undefined && code !== "0x")
          .catch(() => false);
        hasMulticall.set(chainId, multicall);
      }
      const calls = [
        { address: token, abi: erc20Abi, functionName: "decimals" } as const,
        ...wallets.map(
          (wallet) => ({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [wallet] }) as const,
        ),
      ];
      let results: (bigint | number)[];
      if (await multicall) {
        results = (await client.multicall({
          contracts: calls,
          blockNumber,
          allowFailure: false,
          multicallAddress: MULTICALL3,
        })) as (bigint | number)[];
      } else {
        // Issued together, these go out as one JSON-RPC batch request (http transport batching).
        results = await Promise.all(
          calls.map(
            (call) => client.readContract({ ...call, blockNumber } as never) as Promise<bigint | number>,
          ),
        );
      }
      const [decimals, ...balances] = results;
      return { blockNumber, decimals: Number(decimals), balances: balances.map((b) => BigInt(b)) };
    } catch (error) {
      if (error instanceof HttpError) throw error;
      const notAToken =
        error instanceof ViemError &&
        error.walk(
          (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError,
        ) !== null;
      if (notAToken) {
        throw badRequest(
          `contract ${token} does not answer decimals() and balanceOf() on network ${chainId}: not an ERC-20 token`,
        );
      }
      options.logger.warn({ err: error, chain_id: chainId }, "balance read failed");
      throw new HttpError(
        500,
        `could not read balances from network ${chainId}: its node did not answer; try again later`,
      );
    }
  };
}
