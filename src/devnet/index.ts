import type { Logger } from "../internal/logger.js";
import { type CompiledContracts, compileDevnetContracts } from "./compile.js";
import { type Deployment, deployMarket } from "./deploy.js";
import { startHardhatNode } from "./node.js";
import { createSimulator, type HistoryStats } from "./simulator.js";

export type { DeployedPool, DeployedPosition, DeployedToken, Deployment } from "./deploy.js";
export type { HardhatNode } from "./node.js";
export type { HistoryStats, Simulator } from "./simulator.js";

/** A running devnet: node, deployed market, written history and live trading. */
export type Devnet = {
  rpcUrl: string;
  wsUrl: string;
  chainId: number;
  deployment: Deployment;
  /** What the history wrote; null when `historyDays` was 0. */
  history: HistoryStats | null;
  /** Stops live trading, then the node. Idempotent. */
  stop(): Promise<void>;
  /** Signals the node to exit, without waiting (for a process about to exit at once). */
  kill(): void;
};

export type StartDevnetOptions = {
  port: number;
  chainId: number;
  seed: number;
  /** Days of simulated trading written before the start; 0 for none. */
  historyDays: number;
  /** Mean time between live blocks; 0 for no live trading. */
  liveBlockIntervalMs: number;
  logger: Logger;
};

/**
 * Starts the local devnet in one call: a Hardhat node whose genesis is dated `historyDays` ago,
 * the Uniswap market deployed on it, `historyDays` of trading up to now, then live trading.
 * A failure on the way stops what was started.
 */
export async function startDevnet(options: StartDevnetOptions): Promise<Devnet> {
  const { logger } = options;
  const startedAt = performance.now();
  const now = Date.now();
  // The node boots in its child process while this one compiles (or reads the cached contracts).
  const starting = startHardhatNode({
    port: options.port,
    chainId: options.chainId,
    initialDate: new Date(now - options.historyDays * 86_400_000),
    logger,
  });
  let contracts: CompiledContracts;
  try {
    contracts = compileDevnetContracts({ logger });
  } catch (error) {
    await (await starting.catch(() => undefined))?.stop();
    throw error;
  }
  const node = await starting;
  try {
    const deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: options.seed, logger, contracts });
    const market = createSimulator({ rpcUrl: node.rpcUrl, deployment, seed: options.seed, logger });
    const history =
      options.historyDays > 0
        ? await market.writeHistory({ days: options.historyDays, until: new Date() })
        : null;
    if (options.liveBlockIntervalMs > 0) market.startLive({ blockIntervalMs: options.liveBlockIntervalMs });
    logger.info(
      {
        rpc_url: node.rpcUrl,
        chain_id: node.chainId,
        swaps: history?.swaps ?? 0,
        elapsed_ms: Math.round(performance.now() - startedAt),
      },
      "devnet ready",
    );
    let stopping: Promise<void> | undefined;
    return {
      rpcUrl: node.rpcUrl,
      wsUrl: node.wsUrl,
      chainId: node.chainId,
      deployment,
      history,
      stop() {
        stopping ??= market.stop().finally(() => node.stop());
        return stopping;
      },
      kill: () => node.kill(),
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}
