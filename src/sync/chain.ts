import type { MultiBar } from "cli-progress";
import type { ChainConfig, DexConfig } from "../config/schema.js";
import { InconsistentAnswerError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Checkpoint } from "../model/index.js";
import { createRpcClient, type RpcClient } from "../rpc/client.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { initSyncState, loadCheckpoint } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import type { DerivedData } from "./derived.js";
import { scanFactories } from "./factory-scan.js";
import { checkGenesis } from "./genesis.js";
import { createHeadRounds } from "./head-round.js";
import { createHeadWait } from "./head-wait.js";
import { createInconsistencyBackoff } from "./inconsistency.js";
import { createIngest } from "./ingest.js";
import { createKnownPools } from "./known-pools.js";
import { createNodeProbe } from "./node-probe.js";
import type { IndexerOptions } from "./options.js";
import { type ChainStatus, createProgress } from "./progress.js";
import { createRangeSizer } from "./ranges.js";
import { createReorgHandler } from "./reorg.js";
import { createRestarts } from "./restart-policy.js";
import { createSupplyRefresh } from "./supply-refresh.js";
import { createWriterLock, createWriterSlot } from "./writer-lock.js";

export type ChainSync = {
  /** Runs until stop() (or, without `follow`, until caught up, or until a fatal error). Never rejects. */
  run(): Promise<void>;
  stop(): Promise<void>;
  status(): ChainStatus;
};

/**
 * The indexer of one chain: genesis check, factory scan below the start, backfill in adaptive
 * ranges, head following, reorg handling. Each batch is one transaction with its checkpoint.
 * Failures are logged and the chain restarts from its checkpoint with backoff; a deep reorg or a
 * genesis mismatch stops it loudly. The in-memory pools and tokens mirror the database and are
 * reloaded from it after every restart and rollback.
 */
export function createChainSync(args: {
  chain: ChainConfig;
  db: Db;
  logger: Logger;
  derived: DerivedData;
  options: IndexerOptions;
  bars: MultiBar | null;
  rpcMetrics?: RpcMetrics | undefined;
}): ChainSync {
  const { chain, db, derived, options } = args;
  const logger = args.logger.child({ chain_id: chain.id });
  const abort = new AbortController();
  const metrics = args.rpcMetrics ?? createRpcMetrics();
  const rpc: RpcClient = createRpcClient({
    chain,
    logger,
    options: options.rpc,
    signal: abort.signal,
    metrics,
  });
  const dexes: DexConfig[] = chain.dexes;
  // The chain's pools and tokens, as the database holds them: known-pools.ts.
  const known = createKnownPools({ dexes, logger });
  const progress = createProgress({
    chainId: chain.id,
    name: chain.name,
    startBlock: chain.startBlock,
    logger,
    logIntervalMs: options.progressLogIntervalMs,
    bars: args.bars,
  });
  const sizer = createRangeSizer({
    initial: Math.min(options.initialBlockRange, chain.maxBlockRange),
    max: chain.maxBlockRange,
    targetLogs: options.targetLogsPerBatch,
  });

  let stopped = false;
  let running: Promise<void> | undefined;
  let checkpoint: Checkpoint = { block: chain.startBlock - 1, hash: null, time: null };
  const heads = createHeadWait(abort.signal);
  let unwatch: (() => void) | null = null;
  // One writer per chain: this process writes only while it holds the chain's lock (writer-lock.ts).
  const lock = createWriterLock({ db, chainId: chain.id, logger, options: options.writerLock });
  const writer = createWriterSlot(chain.id);
  const { fence } = writer;
  // What the node serves (Multicall3, the transaction source): node-probe.ts.
  const node = createNodeProbe({ rpc, chain, logger, metrics });

  // Answers that contradict the node's others, waited out with a backoff: inconsistency.ts.
  const inconsistency = createInconsistencyBackoff({
    rpc,
    chainId: chain.id,
    logger,
    metrics,
    progress,
    delayMs: options.inconsistentDelayMs,
    failoverAfter: options.inconsistentFailoverAfter,
    signal: abort.signal,
  });

  /** Loads the chain's checkpoint, pools and tokens from the database. */
  const reload = async () => {
    ingest.clear();
    checkpoint = (await loadCheckpoint(db, chain.id)) ?? checkpoint;
    await loadMark();
    await known.load(db, chain.id);
    progress.checkpoint(checkpoint);
  };

  const initialize = async () => {
    writer.current = null;
    const held = await lock.acquire(abort.signal, () => progress.phase("standby"));
    if (!held) return false;
    held.lost.addEventListener("abort", () => heads.wake(), { once: true });
    progress.phase("starting");
    const genesis = await checkGenesis({ db, rpc, chain, logger });
    await initSyncState(db, chain.id, chain.startBlock);
    // After the claim, commits of any earlier writer are refused; one in flight has finished.
    writer.current = await lock.claim(db);
    await reload();
    logger.info(
      {
        genesis,
        indexed_block: checkpoint.block,
        pools: known.pools.size,
        tokens: known.tokens.size,
        start_block: chain.startBlock,
      },
      "chain indexer starting",
    );
    await verifyCheckpoint();
    await node.probe();
    progress.phase("scanning-factories");
    const { poolsFound } = await scanFactories({
      db,
      rpc,
      chainId: chain.id,
      dexes,
      checkpoint: checkpoint.block,
      isKnownPool: (a) => known.pools.has(a),
      onPools: (found) => {
        for (const pool of found) known.addScanned(pool);
      },
      onProgress: (p) => progress.factoryScan(p),
      maxRange: Math.max(options.factoryScanMaxRange, chain.maxBlockRange),
      logger,
      logIntervalMs: options.progressLogIntervalMs,
      isStopped: () => stopped || writer.lost(),
      fence,
    });
    progress.factoryScan(null);
    if (poolsFound > 0) logger.info({ pools: poolsFound }, "pools created before the start block found");
    unwatch ??= rpc.watchHeads(() => heads.wake());
    return true;
  };

  // Reorgs: the checkpoint's check, the walk back, the rollback and the off-canonical mark (reorg.ts).
  const { verifyCheckpoint, handleReorg, loadMark } = createReorgHandler({
    db,
    rpc,
    chain,
    logger,
    derived,
    fence,
    checkpoint: () => checkpoint,
    reload: () => reload(),
  });

  /** Some work succeeded: the next failure starts its backoff from the first delay again. */
  const worked = () => {
    restarts.reset();
    inconsistency.consistent();
  };

  // The backfill's prefetch queue and the batches' commits (ingest.ts).
  const ingest = createIngest({
    chain,
    db,
    derived,
    options,
    rpc,
    logger,
    known,
    node,
    progress,
    sizer,
    fence,
    checkpoint: () => checkpoint,
    handleReorg,
    stopped: () => stopped,
    committed: (next) => {
      checkpoint = next;
      worked();
    },
  });

  const supplies = createSupplyRefresh({
    db,
    rpc,
    chainId: chain.id,
    intervalMs: options.supplyRefreshMs,
    batch: options.supplyRefreshBatch,
    fence,
    logger,
  });

  // The loop's rounds: backfill, then following the head (head-round.ts).
  const rounds = createHeadRounds({
    chain,
    db,
    rpc,
    logger,
    progress,
    ingest,
    supplies,
    heads,
    options,
    checkpoint: () => checkpoint,
    verifyCheckpoint,
    fence,
    inconsistentStreak: inconsistency.streak,
    worked,
  });

  const loop = async () => {
    while (!stopped) {
      writer.throwIfLost();
      try {
        if ((await rounds.round()) === "done") return;
      } catch (error) {
        if (!(error instanceof InconsistentAnswerError) || stopped) throw error;
        await inconsistency.onInconsistent(error);
      }
    }
  };

  // After a failure: standby, the inconsistency's wait, a stop, or a restart after a backoff (restart-policy.ts).
  const restarts = createRestarts({
    logger,
    progress,
    node,
    rpcHost: () => rpc.host(),
    configured: chain.transactionSource,
    restartDelayMs: options.restartDelayMs,
    signal: abort.signal,
    standby: async () => {
      writer.current = null;
      await lock.release();
    },
    onInconsistent: inconsistency.onInconsistent,
  });

  const run = async () => {
    while (!stopped) {
      try {
        if (!(await initialize())) break;
        await loop();
        break;
      } catch (error) {
        if (stopped) break;
        if (!(await restarts.after(error))) return;
      }
    }
    progress.phase(progress.status().phase === "failed" ? "failed" : "stopped");
  };

  return {
    run: () => {
      running ??= run().finally(async () => {
        unwatch?.();
        progress.stop();
        await lock.release();
      });
      return running;
    },
    stop: async () => {
      stopped = true;
      abort.abort();
      heads.wake();
      await running;
      await rpc.close();
      progress.stop();
    },
    status: () => progress.status(),
  };
}
