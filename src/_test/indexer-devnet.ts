import { encodeEventTopics, type Hex, numberToHex } from "viem";
import { type ChainConfig, chainSchema } from "../config/schema.js";
import { v2PairAbi, v3PoolAbi } from "../devnet/abis.js";
import type { Deployment } from "../devnet/deploy.js";
import type { DevnetRpc } from "../devnet/rpc.js";
import { createSimulator, type HistoryStats } from "../devnet/simulator.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import { startTestDevnet, type TestDevnet } from "./devnet.js";
import type { PoolRef } from "./indexer-receipts.js";

/** A test devnet (startTestDevnet) with a traded history, as the indexer's tests use it. */
export type IndexerDevnet = {
  rpcUrl: string;
  chainId: number;
  deployment: Deployment;
  /**
   * What the simulator wrote, with `swaps` counting only the swaps of the V2 and V3 pools: the
   * chain configured here (chain()) has the two factories, not the V4 PoolManager, so the V4
   * pools' swaps are not the indexer's to find in these tests (config/devnet.json lists the
   * PoolManager: the demo indexes them, and the pipeline tests check it).
   */
  history: HistoryStats;
  /** The V2 and V3 pools (those chain() indexes), for the independent reading of the receipts. */
  pools: PoolRef[];
  rpc: DevnetRpc;
  devnet: TestDevnet;
  /** The chain's configuration for the indexer (both factories), with overrides. */
  chain(overrides?: Record<string, unknown>): ChainConfig;
  head(): Promise<number>;
  snapshot(): Promise<string>;
  revert(id: string): Promise<void>;
  /**
   * Mines `blocks` blocks, 12 s apart, each with `swapsPerBlock` single-pool swaps of random
   * deployed pools (V2 and V3, either direction, 20 to 220 USD), deterministic from `seed`;
   * only among `pools` when given.
   */
  mineSwaps(options: {
    blocks: number;
    swapsPerBlock: number;
    seed: number;
    pools?: readonly Deployment["pools"][number][];
  }): Promise<void>;
  stop(): Promise<void>;
};

/**
 * Starts a test devnet (the real Uniswap V2/V3 contracts, deployed) and has the market simulator
 * write `historyDays` of trading on it: swaps on every pool, multi-hop routes, liquidity added
 * and removed (V2 Mint/Burn, V3 Mint/Burn/Collect). Automining is off afterwards: blocks appear
 * only when a test mines them.
 */
export async function startIndexerDevnet(
  options: {
    chainId?: number;
    seed?: number;
    historyDays?: number;
    /** The node's clock at its start (default now): a date in the past puts the history there. */
    initialDate?: Date;
    logger?: Logger;
  } = {},
): Promise<IndexerDevnet> {
  const logger = options.logger ?? createSilentLogger();
  const seed = options.seed ?? 42;
  const historyDays = options.historyDays ?? 1;
  const devnet = await startTestDevnet({
    chainId: options.chainId ?? 31337,
    seed,
    ...(options.initialDate ? { initialDate: options.initialDate } : {}),
  });
  try {
    const { deployment } = devnet;
    const simulator = createSimulator({ rpcUrl: devnet.rpcUrl, deployment, seed, logger });
    // The node's clock starts now (or at initialDate): the history is dated from the deployment on.
    const latest = await devnet.latestBlock();
    const until = new Date((latest.timestamp + Math.round(historyDays * 86_400)) * 1000);
    const written = await simulator.writeHistory({ days: historyDays, until });
    await simulator.stop();
    const indexedPools = deployment.pools.filter((p) => p.protocol !== "v4");
    const history: HistoryStats = {
      ...written,
      swaps: (
        await devnet.rpc.request<unknown[]>("eth_getLogs", [
          {
            fromBlock: numberToHex(written.firstBlock),
            toBlock: numberToHex(written.lastBlock),
            address: indexedPools.map((p) => p.address),
            topics: [
              [
                encodeEventTopics({ abi: v2PairAbi, eventName: "Swap" })[0],
                encodeEventTopics({ abi: v3PoolAbi, eventName: "Swap" })[0],
              ] as Hex[],
            ],
          },
        ])
      ).length,
    };
    await devnet.setAutomine(false);
    const tokenByAddress = new Map(Object.values(deployment.tokens).map((t) => [t.address.toLowerCase(), t]));
    return {
      rpcUrl: devnet.rpcUrl,
      chainId: devnet.chainId,
      deployment,
      history,
      rpc: devnet.rpc,
      devnet,
      pools: indexedPools.map((p) => ({
        address: p.address,
        protocol: p.protocol,
        token0: p.token0,
        token1: p.token1,
      })),
      chain: (overrides = {}) =>
        chainSchema.parse({
          id: devnet.chainId,
          name: `Devnet ${devnet.chainId}`,
          rpc: [devnet.rpcUrl],
          devnet: true,
          confirmations: 0,
          startBlock: 0,
          pollIntervalMs: 100,
          dexes: [
            { name: "Uniswap V2", protocol: "v2", factory: deployment.v2.factory, fee: 3000 },
            { name: "Uniswap V3", protocol: "v3", factory: deployment.v3.factory },
          ],
          referenceTokens: {
            stablecoins: [deployment.tokens.USDC.address],
            wrappedNative: deployment.tokens.WETH.address,
          },
          ...overrides,
        }),
      head: async () => (await devnet.latestBlock()).number,
      snapshot: () => devnet.snapshot(),
      revert: (id) => devnet.revert(id as `0x${string}`),
      mineSwaps: async ({
        blocks,
        swapsPerBlock,
        seed: tradeSeed,
        pools = deployment.pools.filter((p) => p.protocol !== "v4"),
      }) => {
        let state = tradeSeed >>> 0 || 1;
        const next = () => {
          state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
          return state / 2 ** 32;
        };
        const traders = deployment.accounts.traders;
        for (let b = 0; b < blocks; b++) {
          for (let s = 0; s < swapsPerBlock; s++) {
            const pool = pools[Math.floor(next() * pools.length)] as Deployment["pools"][number];
            const tokenIn = next() < 0.5 ? pool.token0 : pool.token1;
            const token = tokenByAddress.get(tokenIn.toLowerCase());
            if (!token) continue;
            const amountIn = BigInt(
              Math.floor(((20 + next() * 200) / token.initialPriceUsd) * 10 ** token.unitDecimals),
            );
            const from = traders[Math.floor(next() * traders.length)] as `0x${string}`;
            const swap = { from, pool, tokenIn, amountIn };
            await (pool.protocol === "v2" ? devnet.swapV2(swap) : devnet.swapV3(swap));
          }
          const latest = await devnet.latestBlock();
          await devnet.mine({ timestamp: latest.timestamp + 12 });
        }
      },
      stop: () => devnet.stop(),
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}
