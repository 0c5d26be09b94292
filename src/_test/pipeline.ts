/**
 * The whole pipeline for tests and benchmarks: a devnet (Hardhat node with the real Uniswap V2/V3
 * contracts and the simulated market) with a traded history, the indexer with the pricing stage
 * ingesting it into a database, waited until everything is indexed and priced.
 *
 *   const pipeline = await startPipeline({ db: testDb.db });
 *   … query pipeline.db, or serve it with createApiServer({ config: pipeline.config, db, … }) …
 *   await pipeline.close();
 */
import type { Address, Hex } from "viem";
import { parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { type Deployment, deployMarket } from "../devnet/deploy.js";
import { startHardhatNode } from "../devnet/node.js";
import { createDevnetRpc } from "../devnet/rpc.js";
import { createSimulator, type HistoryStats, type Simulator } from "../devnet/simulator.js";
import { createSilentLogger, type Logger } from "../internal/logger.js";
import { createPricing, type Pricing } from "../pricing/pricing.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { getSyncStatus } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { createIndexer } from "../sync/indexer.js";
import { devnetDexes, devnetReferenceTokens } from "./devnet-config.js";

export const PIPELINE_CHAIN_ID = 31337;

export type Pipeline = {
  /** Configuration of the devnet chain as indexed (RPC URL of this node, real factories, coins). */
  config: Config;
  db: Db;
  rpcUrl: string;
  deployment: Deployment;
  history: HistoryStats;
  /** The indexer's JSON-RPC metrics, to share with an API server as `npm start` does. */
  rpcMetrics: RpcMetrics;
  /**
   * The market simulator that wrote the history, stopped: `simulator.startLive({ blockIntervalMs })`
   * keeps trading at wall-clock time (as `tokenmarket start` does) until `simulator.stop()` or close().
   */
  simulator: Simulator;
  /** The pricing stage the indexer runs (its clock is `now` of startPipeline): `refreshStats` slides the statistics. */
  pricing: Pricing;
  /** Accounts that traded (they hold every token): wallets for balance queries. */
  wallets: Address[];
  /** When the history ends (its last block's time is at most this). */
  until: Date;
  /** Stops following the head (the node keeps running); close() still stops everything. */
  stopIndexing(): Promise<void>;
  /** Waits until the indexer has ingested `block` (default: the node's head). */
  waitIndexed(block?: number, timeoutMs?: number): Promise<void>;
  /** Stops the indexer and the node. */
  close(): Promise<void>;
};

/** The configuration of a deployment, as the service's own config/devnet.json would give it. */
export function pipelineConfig(deployment: Deployment, rpcUrl: string): Config {
  const t = deployment.tokens;
  return parseConfig({
    api: { host: "127.0.0.1", port: 0 },
    devnet: { enabled: true, chainId: deployment.chainId },
    pricing: { liquidityFloorUsd: 10_000 },
    coins: {
      ETH: { chain: deployment.chainId, token: t.WETH.address },
      BTC: { chain: deployment.chainId, token: t.WBTC.address },
      USDC: { chain: deployment.chainId, token: t.USDC.address },
      DAI: { chain: deployment.chainId, token: t.DAI.address },
      LINK: { chain: deployment.chainId, token: t.LINK.address },
    },
    chains: [
      {
        id: deployment.chainId,
        name: "Devnet",
        rpc: [rpcUrl],
        devnet: true,
        confirmations: 0,
        startBlock: 0,
        maxLagBlocks: 20,
        pollIntervalMs: 100,
        dexes: devnetDexes(deployment, true),
        referenceTokens: devnetReferenceTokens(deployment),
      },
    ],
  });
}

/**
 * Starts a devnet, writes `historyDays` of trading ending now, and indexes and prices it into
 * `db` (a migrated, empty database). The indexer keeps following the head until close().
 */
export async function startPipeline(options: {
  db: Db;
  logger?: Logger;
  historyDays?: number;
  seed?: number;
  timeoutMs?: number;
  /** When the history ends (default now): a fixed date and seed write the same history at every run. */
  until?: Date;
  /** The pricing's clock (statistics windows); default the real one. */
  now?: () => Date;
}): Promise<Pipeline> {
  const logger = options.logger ?? createSilentLogger();
  const historyDays = options.historyDays ?? 2;
  const seed = options.seed ?? 42;
  const until = new Date(Math.floor((options.until?.getTime() ?? Date.now()) / 1000) * 1000);
  const node = await startHardhatNode({
    port: 0,
    chainId: PIPELINE_CHAIN_ID,
    initialDate: new Date(until.getTime() - (historyDays * 86_400 + 3600) * 1000),
    logger,
  });
  let stopIndexer: (() => Promise<void>) | undefined;
  let stopSimulator: (() => Promise<void>) | undefined;
  const close = async () => {
    await stopSimulator?.().catch(() => {});
    await stopIndexer?.().catch(() => {});
    await node.stop();
  };
  try {
    const deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed, logger });
    const rpc = createDevnetRpc(node.rpcUrl);
    const simulator = createSimulator({ rpcUrl: node.rpcUrl, deployment, seed, logger });
    stopSimulator = () => simulator.stop();
    const history = await simulator.writeHistory({ days: historyDays, until });
    await simulator.stop();
    const config = pipelineConfig(deployment, node.rpcUrl);
    const pricing = createPricing({ config, logger, ...(options.now ? { now: options.now } : {}) });
    const rpcMetrics = createRpcMetrics();
    const indexer = createIndexer({
      config,
      db: options.db,
      logger,
      derived: pricing,
      rpcMetrics,
      options: { progressBar: false, restartDelayMs: [200, 2000] },
    });
    stopIndexer = () => indexer.stop();
    await indexer.start();

    const waitIndexed = async (block?: number, timeoutMs = options.timeoutMs ?? 120_000) => {
      const target = block ?? Number(await rpc.request<Hex>("eth_blockNumber"));
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [status] = await getSyncStatus(options.db, [PIPELINE_CHAIN_ID]);
        if (status && status.indexedBlock >= target) return;
        if (Date.now() > deadline) {
          throw new Error(
            `the indexer did not reach block ${target} in ${timeoutMs} ms (at ${status?.indexedBlock ?? "none"})`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    await waitIndexed(history.lastBlock);
    // The 24-hour statistics slide with the clock; bring them to now once everything is in.
    await pricing.refreshStats(options.db, PIPELINE_CHAIN_ID);
    return {
      config,
      db: options.db,
      rpcUrl: node.rpcUrl,
      deployment,
      history,
      simulator,
      rpcMetrics,
      pricing,
      wallets: deployment.accounts.traders,
      until,
      waitIndexed,
      stopIndexing: () => indexer.stop(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
