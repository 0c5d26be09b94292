import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import type { Logger } from "../internal/logger.js";
import { type CompiledContracts, compileDevnetContracts } from "./compile.js";
import { type Deployment, deployMarket, planDeployment } from "./deploy.js";
import { type HistoryProcess, spawnHistoryProcess } from "./history-child.js";
import { type DevnetNode, startAnvilNode } from "./node.js";
import { createDevnetRpc } from "./rpc.js";
import { createSimulator, type HistoryStats, logHistory, type Simulator } from "./simulator.js";

export type { DeployedPool, DeployedPosition, DeployedToken, Deployment } from "./deploy.js";
export type { DevnetNode, HardhatNode } from "./node.js";
export type { HistoryStats, Simulator } from "./simulator.js";

/** A running devnet: node, deployed market, written history and live trading. */
export type Devnet = {
  rpcUrl: string;
  wsUrl: string;
  chainId: number;
  deployment: Deployment;
  /**
   * What the history (or, on a kept chain, the catch-up since its last block) wrote; null when
   * nothing was written, or while it is written (`historyInBackground`).
   */
  history: HistoryStats | null;
  /** Settles once the history is written and live trading runs (rejects when the history fails). */
  historyWritten: Promise<HistoryStats | null>;
  /** True when the chain was loaded from `stateDir` (the previous run's chain, continued). */
  resumed: boolean;
  /** Stops live trading, then the node (which writes its state file when it has one). Idempotent. */
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
  /**
   * A folder the chain is kept in across restarts: the next start loads it and continues it
   * (trading written for the time it was stopped, at most `historyDays`), so what was indexed
   * from it stays true. Without it every start makes a new chain.
   */
  stateDir?: string;
  /** Keep no state of past blocks in the node (see StartAnvilNodeOptions.pruneHistory). */
  pruneHistory?: boolean;
  /**
   * Resolve once the market is deployed (or the kept chain loaded) and write the history while
   * the caller goes on (`historyWritten` tells when it is done): an indexer can read the chain as
   * it grows, on the other core, instead of after it.
   */
  historyInBackground?: boolean;
  /** Aborting it ends the start: the node is killed and the start rejects. */
  signal?: AbortSignal;
  logger: Logger;
};

/** What is kept beside the node's state file, to know the chain it holds. */
type ChainMeta = {
  chainId: number;
  seed: number;
  /** Hash of the deployment plan: a changed market (code or contracts) makes a new chain. */
  plan: string;
  deploymentBlock: number;
  genesisHash: Hex;
};

/**
 * Starts the local devnet in one call: an anvil node whose genesis is dated `historyDays` ago,
 * the Uniswap market deployed on it, `historyDays` of trading up to now, then live trading. With
 * `stateDir` holding the chain of an earlier run, that chain is loaded instead and continued.
 * A failure on the way stops what was started.
 */
export async function startDevnet(options: StartDevnetOptions): Promise<Devnet> {
  const { logger } = options;
  const startedAt = performance.now();
  const now = Date.now();
  const statePath = options.stateDir === undefined ? undefined : join(options.stateDir, "chain.json");
  const metaPath = options.stateDir === undefined ? undefined : join(options.stateDir, "chain-meta.json");
  let meta = metaPath === undefined ? undefined : readMeta(metaPath);
  if (options.stateDir !== undefined && statePath !== undefined) {
    mkdirSync(options.stateDir, { recursive: true });
    if (meta === undefined || meta.chainId !== options.chainId || meta.seed !== options.seed) {
      // A state without its description (or for another chain or seed) is not continued.
      rmSync(statePath, { force: true });
      meta = undefined;
    }
  }
  const nodeOptions = {
    port: options.port,
    chainId: options.chainId,
    initialDate: new Date(now - options.historyDays * 86_400_000),
    ...(statePath === undefined ? {} : { statePath }),
    ...(options.pruneHistory === true ? { pruneHistory: true } : {}),
    logger,
  };
  // The node boots in its child process while this one reads the compiled contracts.
  const starting = startAnvilNode(nodeOptions);
  let contracts: CompiledContracts;
  try {
    contracts = compileDevnetContracts({ logger });
  } catch (error) {
    await (await starting.catch(() => undefined))?.stop();
    throw error;
  }
  let node: DevnetNode = await starting;
  // An abort kills the node: the start's next call to it fails, and the start rejects.
  const abort = () => node.kill();
  options.signal?.addEventListener("abort", abort, { once: true });
  let historyProcess: HistoryProcess | undefined;
  try {
    if (options.signal?.aborted) throw new Error("the devnet's start was aborted");
    let resumed = false;
    let deployment: Deployment | undefined;
    if (meta !== undefined) {
      deployment = await resumeDeployment(node.rpcUrl, options, meta);
      if (deployment === undefined) {
        logger.warn(
          { state: statePath },
          "the kept devnet chain is not the one described beside it: starting a new chain",
        );
        await node.stop();
        if (statePath !== undefined) rmSync(statePath, { force: true });
        node = await startAnvilNode(nodeOptions);
        if (options.signal?.aborted) throw new Error("the devnet's start was aborted");
      } else resumed = true;
    }
    // A new chain's history written while the caller goes on is written by a process of its
    // own (history-child.ts), which loads while the market is deployed.
    if (!resumed && options.historyInBackground === true && options.historyDays > 0)
      historyProcess = spawnHistoryProcess();
    deployment ??= await deployMarket({ rpcUrl: node.rpcUrl, seed: options.seed, logger, contracts });
    if (!resumed && metaPath !== undefined) writeMeta(metaPath, await describeChain(node.rpcUrl, deployment));

    const market = createSimulator({ rpcUrl: node.rpcUrl, deployment, seed: options.seed, logger });
    // Ends a history still being written when the devnet stops.
    const writing = new AbortController();
    const historyWritten = writeHistoryAndTrade(
      { rpcUrl: node.rpcUrl, deploymentBlock: deployment.blockNumber, market, resumed, historyProcess },
      options,
      writing.signal,
    ).then((history) => {
      logger.info(
        {
          rpc_url: node.rpcUrl,
          chain_id: node.chainId,
          resumed,
          swaps: history?.swaps ?? 0,
          elapsed_ms: Math.round(performance.now() - startedAt),
        },
        "devnet ready",
      );
      return history;
    });
    // Marked handled: a caller that awaits it sees the failure; one stopping the devnet does not care.
    historyWritten.catch(() => {});
    const history = options.historyInBackground === true ? null : await historyWritten;
    let stopping: Promise<void> | undefined;
    const running = node;
    return {
      rpcUrl: running.rpcUrl,
      wsUrl: running.wsUrl,
      chainId: running.chainId,
      deployment,
      history,
      historyWritten,
      resumed,
      stop() {
        // An AbortError: a start still waiting for the history ends quietly (cli/start.ts).
        writing.abort();
        stopping ??= historyWritten
          .catch(() => {})
          .then(() => market.stop())
          .finally(() => running.stop());
        return stopping;
      },
      kill: () => running.kill(),
    };
  } catch (error) {
    historyProcess?.kill();
    await node.stop();
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", abort);
  }
}

/**
 * Writes the history (a new chain: `historyDays` up to now, by `historyProcess` when there is
 * one; a kept chain: the time it was stopped, at most `historyDays`), then starts live trading.
 */
async function writeHistoryAndTrade(
  chain: {
    rpcUrl: string;
    deploymentBlock: number;
    market: Simulator;
    resumed: boolean;
    historyProcess: HistoryProcess | undefined;
  },
  options: StartDevnetOptions,
  signal: AbortSignal,
): Promise<HistoryStats | null> {
  const { rpcUrl, market, resumed } = chain;
  let history: HistoryStats | null = null;
  const until = new Date();
  if (!resumed && options.historyDays > 0 && chain.historyProcess !== undefined) {
    const job = {
      rpcUrl,
      chainId: options.chainId,
      seed: options.seed,
      deploymentBlock: chain.deploymentBlock,
      days: options.historyDays,
      until: until.getTime(),
    };
    history = await chain.historyProcess.write(job, signal);
    logHistory(options.logger, options.historyDays, history);
  } else if (!resumed && options.historyDays > 0)
    history = await market.writeHistory({ days: options.historyDays, until, signal });
  if (resumed && options.historyDays > 0) {
    // The market traded while the demo was stopped: its blocks are written as history, so the
    // charts have no hole and the next live block follows the previous run's last one.
    const rpc = createDevnetRpc(rpcUrl);
    const head = await rpc.request<{ timestamp: Hex }>("eth_getBlockByNumber", ["latest", false]);
    const gapDays = Math.min(options.historyDays, (until.getTime() / 1000 - Number(head.timestamp)) / 86_400);
    if (gapDays > 60 / 86_400) {
      // A loaded anvil refuses block times before its own start; its clock goes back to the
      // last block for the catch-up, and to the wall clock after it.
      await rpc.request("anvil_setTime", [Number(head.timestamp)]);
      history = await market.writeHistory({ days: gapDays, until, signal });
      await rpc.request("anvil_setTime", [Math.floor(Date.now() / 1000)]);
    }
  }
  if (options.liveBlockIntervalMs > 0 && !signal.aborted)
    market.startLive({ blockIntervalMs: options.liveBlockIntervalMs });
  return history;
}

function planHash(deployment: Deployment): string {
  const { blockNumber: _, ...plan } = deployment;
  return createHash("sha256")
    .update(
      JSON.stringify(plan, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value)),
    )
    .digest("hex")
    .slice(0, 16);
}

async function describeChain(rpcUrl: string, deployment: Deployment): Promise<ChainMeta> {
  const rpc = createDevnetRpc(rpcUrl);
  const genesis = await rpc.request<{ hash: Hex }>("eth_getBlockByNumber", ["0x0", false]);
  return {
    chainId: deployment.chainId,
    seed: deployment.seed,
    plan: planHash(deployment),
    deploymentBlock: deployment.blockNumber,
    genesisHash: genesis.hash,
  };
}

/** The deployment of a loaded chain, when it is the one `meta` describes; undefined otherwise. */
async function resumeDeployment(
  rpcUrl: string,
  options: StartDevnetOptions,
  meta: ChainMeta,
): Promise<Deployment | undefined> {
  const rpc = createDevnetRpc(rpcUrl);
  const [accounts, genesis, head] = await Promise.all([
    rpc.request<Address[]>("eth_accounts"),
    rpc.request<{ hash: Hex } | null>("eth_getBlockByNumber", ["0x0", false]),
    rpc.request<Hex>("eth_blockNumber"),
  ]);
  const deployment = {
    ...planDeployment({ chainId: options.chainId, seed: options.seed, accounts }),
    blockNumber: meta.deploymentBlock,
  };
  const same =
    genesis?.hash === meta.genesisHash &&
    Number(head) >= meta.deploymentBlock &&
    planHash(deployment) === meta.plan;
  return same ? deployment : undefined;
}

function readMeta(path: string): ChainMeta | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as ChainMeta;
  } catch {
    return undefined;
  }
}

function writeMeta(path: string, meta: ChainMeta): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(meta, null, 2));
  renameSync(`${path}.tmp`, path);
}
