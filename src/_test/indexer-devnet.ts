import * as assert from "node:assert/strict";
import { encodeEventTopics, type Hex, numberToHex } from "viem";
import { type ChainConfig, chainSchema } from "../config/schema.js";
import { v2PairAbi, v3PoolAbi } from "../devnet/abis.js";
import { algebraPoolEventsAbi } from "../devnet/algebra.js";
import type { Deployment } from "../devnet/deploy.js";
import type { DevnetRpc } from "../devnet/rpc.js";
import { createSimulator, type HistoryStats } from "../devnet/simulator.js";
import { poolManagerEventsAbi } from "../devnet/v4.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import type { Db } from "../store/db.js";
import { createTestDb } from "./db.js";
import { startTestDevnet, type TestDevnet } from "./devnet.js";
import { devnetDexes } from "./devnet-config.js";
import { type FamilyEvents, type MinedFamilyEvents, mineFamilyEvents } from "./family-events.js";
import { assertSameDump, dumpIndexedData } from "./indexer-dump.js";
import { type ExpectedSwap, type PoolRef, readSwapsFromReceipts } from "./indexer-receipts.js";
import { indexOnce } from "./indexer-run.js";

/** A test devnet (startTestDevnet) with a traded history, as the indexer's tests use it. */
export type IndexerDevnet = {
  rpcUrl: string;
  chainId: number;
  deployment: Deployment;
  /**
   * What the simulator wrote, with `swaps` counting the swaps of the pools the configured chain
   * (chain()) indexes: by default the V2 and V3 factories' (the V4 and Algebra pools' swaps are
   * then not the indexer's to find; config/devnet.json lists every family, and the demo indexes
   * them all); with `allFamilies`, every pool's.
   */
  history: HistoryStats;
  /** The V2 and V3 pools (those chain() indexes), for the independent reading of the receipts. */
  pools: PoolRef[];
  rpc: DevnetRpc;
  devnet: TestDevnet;
  /** The chain's configuration for the indexer (both factories, or every family's), with overrides. */
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
  /**
   * Mines one block (12 s after the head) holding V4 and Algebra events: liquidity added and
   * removed and swaps on their deployed pools, and, when asked, a new V4 pool (Initialize) and a
   * new Algebra pool (the factory's Pool event), each with liquidity and a swap. See family-events.ts.
   */
  mineFamilyEvents(options: FamilyEvents): Promise<MinedFamilyEvents>;
  stop(): Promise<void>;
};

/**
 * Starts a test devnet (the real Uniswap V2/V3, V4 and Algebra contracts, deployed) and has the
 * market simulator write `historyDays` of trading on it: swaps on every pool, multi-hop routes,
 * liquidity added and removed (V2 Mint/Burn, V3 and Algebra Mint/Burn/Collect, V4
 * ModifyLiquidity and Donate). Automining is off afterwards: blocks appear only when a test mines
 * them. `allFamilies`: the configured chain indexes the V4 PoolManager and the Algebra factory too.
 */
export async function startIndexerDevnet(
  options: {
    chainId?: number;
    seed?: number;
    historyDays?: number;
    /** The node's clock at its start (default now): a date in the past puts the history there. */
    initialDate?: Date;
    logger?: Logger;
    allFamilies?: boolean;
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
    const indexedPools = deployment.pools.filter(
      (p): p is typeof p & { protocol: "v2" | "v3" } => p.protocol === "v2" || p.protocol === "v3",
    );
    const allFamilies = options.allFamilies === true;
    // V4 pools' events come from the PoolManager's address.
    const swapSources = allFamilies
      ? [
          ...deployment.pools.filter((p) => p.protocol !== "v4").map((p) => p.address),
          deployment.v4.poolManager,
        ]
      : indexedPools.map((p) => p.address);
    const history: HistoryStats = {
      ...written,
      swaps: (
        await devnet.rpc.request<unknown[]>("eth_getLogs", [
          {
            fromBlock: numberToHex(written.firstBlock),
            toBlock: numberToHex(written.lastBlock),
            address: swapSources,
            topics: [
              [
                encodeEventTopics({ abi: v2PairAbi, eventName: "Swap" })[0],
                encodeEventTopics({ abi: v3PoolAbi, eventName: "Swap" })[0],
                ...(allFamilies
                  ? [
                      encodeEventTopics({ abi: poolManagerEventsAbi, eventName: "Swap" })[0],
                      encodeEventTopics({ abi: algebraPoolEventsAbi, eventName: "Swap" })[0],
                    ]
                  : []),
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
          dexes: devnetDexes(deployment, allFamilies),
          referenceTokens: {
            stablecoins: [deployment.tokens.USDC.address],
            wrappedNative: deployment.tokens.WETH.address,
          },
          ...overrides,
        }),
      head: async () => (await devnet.latestBlock()).number,
      snapshot: () => devnet.snapshot(),
      revert: (id) => devnet.revert(id as `0x${string}`),
      mineSwaps: async ({ blocks, swapsPerBlock, seed: tradeSeed, pools = indexedPools }) => {
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
      mineFamilyEvents: (events) => mineFamilyEvents(devnet, events),
      stop: () => devnet.stop(),
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}

/**
 * Asserts that `db` holds what a fresh index of the node's current (canonical) chain stores:
 * nothing lost, doubled, or left of an abandoned branch. `chain`: the configuration to index it with.
 */
export async function assertEqualsFreshIndex(
  db: Db,
  devnet: Pick<IndexerDevnet, "chainId" | "chain">,
  label: string,
  chain: ChainConfig = devnet.chain(),
): Promise<void> {
  const fresh = await createTestDb();
  try {
    await indexOnce(fresh.db, chain);
    assertSameDump(
      await dumpIndexedData(db, [devnet.chainId]),
      await dumpIndexedData(fresh.db, [devnet.chainId]),
      label,
    );
  } finally {
    await fresh.drop();
  }
}

/**
 * The swaps of the indexed pools' receipts from block 0 to `head`: every swap the history wrote
 * (a count of its own: how busy the simulated hours were varies with the hour and weekday they
 * fall on), and the deployment's before them.
 */
export async function historyReceiptSwaps(devnet: IndexerDevnet, head: number): Promise<ExpectedSwap[]> {
  const expected = await readSwapsFromReceipts({
    rpcUrl: devnet.rpcUrl,
    pools: devnet.pools,
    fromBlock: 0,
    toBlock: head,
  });
  assert.ok(
    devnet.history.swaps > 0 && expected.length >= devnet.history.swaps,
    `${expected.length} swaps, the history's ${devnet.history.swaps} among them`,
  );
  return expected;
}
