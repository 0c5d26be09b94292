import type { MultiBar } from "cli-progress";
import type { ChainConfig, DexConfig } from "../config/schema.js";
import { backoffDelayMs } from "../internal/backoff.js";
import {
  type BaseError,
  ChainIdMismatchError,
  DeepReorgError,
  GenesisMismatchError,
  InconsistentAnswerError,
  RetryableRpcError,
  TransactionSourceUnsupportedError,
  WriterLockLostError,
} from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Checkpoint } from "../model/index.js";
import { createRpcClient, type RpcClient } from "../rpc/client.js";
import { MethodNotSupportedError } from "../rpc/errors.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { sleep } from "../rpc/retry.js";
import type { TransactionSource } from "../rpc/types.js";
import { initSyncState, loadCheckpoint, recordHead } from "../store/chain-state.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { tokensDueForSupply, updateTokenSupplies } from "../store/tokens.js";
import type { DerivedData } from "./derived.js";
import { scanFactories } from "./factory-scan.js";
import { checkGenesis } from "./genesis.js";
import { createInconsistencyBackoff } from "./inconsistency.js";
import { createIngest } from "./ingest.js";
import { createKnownPools } from "./known-pools.js";
import { createNodeProbe } from "./node-probe.js";
import type { IndexerOptions } from "./options.js";
import { type ChainStatus, createProgress } from "./progress.js";
import { createRangeSizer } from "./ranges.js";
import { createReorgHandler } from "./reorg.js";
import { readSupplies } from "./tokens.js";
import { sourceMethod } from "./transaction-source.js";
import { createWriterLock, type Writer } from "./writer-lock.js";

export type ChainSync = {
  /** Runs until stop() (or, without `follow`, until caught up, or until a fatal error). Never rejects. */
  run(): Promise<void>;
  stop(): Promise<void>;
  status(): ChainStatus;
};

/** Errors after which indexing of the chain stops instead of retrying. */
const isFatal = (error: unknown) =>
  error instanceof DeepReorgError ||
  error instanceof GenesisMismatchError ||
  error instanceof ChainIdMismatchError ||
  error instanceof TransactionSourceUnsupportedError;

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
  // The chain's pools and tokens, as the database holds them: known-known.pools.ts.
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
  let caughtUp = false;
  let wake: (() => void) | null = null;
  let unwatch: (() => void) | null = null;
  let lastSupplyRefresh = Date.now();
  let recordedHead = -1;
  let failures = 0;
  // One writer per chain: this process writes only while it holds the chain's lock (writer-lock.ts).
  const lock = createWriterLock({ db, chainId: chain.id, logger, options: options.writerLock });
  let writer: Writer | null = null;
  const fence = (client: DbClient) =>
    writer
      ? writer.fence(client)
      : Promise.reject(new WriterLockLostError(`chain ${chain.id}: no writer lock`));
  const throwIfLost = () => {
    if (!writer || writer.lost.aborted) throw new WriterLockLostError(`chain ${chain.id}: writer lock lost`);
  };
  /** The highest head the node has answered in this run (a lower one later is inconsistent). */
  let highestHead = -1;
  // What the node serves (Multicall3, the transaction source): node-probe.ts.
  const node = createNodeProbe({ rpc, chain, logger, metrics });

  // Answers that contradict the node's others, waited out with a backoff: inconsistency.ts.
  const {
    onInconsistent,
    consistent,
    streak: inconsistentStreak,
  } = createInconsistencyBackoff({
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
    writer = null;
    const held = await lock.acquire(abort.signal, () => progress.phase("standby"));
    if (!held) return false;
    held.lost.addEventListener("abort", () => wake?.(), { once: true });
    progress.phase("starting");
    const genesis = await checkGenesis({ db, rpc, chain, logger });
    await initSyncState(db, chain.id, chain.startBlock);
    // After the claim, commits of any earlier writer are refused; one in flight has finished.
    writer = await lock.claim(db);
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
      isStopped: () => stopped || writer?.lost.aborted !== false,
      fence,
    });
    progress.factoryScan(null);
    if (poolsFound > 0) logger.info({ pools: poolsFound }, "pools created before the start block found");
    unwatch ??= rpc.watchHeads(() => wake?.());
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
      failures = 0;
      consistent();
    },
  });

  const refreshSupplies = async () => {
    if (Date.now() - lastSupplyRefresh < options.supplyRefreshMs) return;
    lastSupplyRefresh = Date.now();
    try {
      const due = await tokensDueForSupply(db, chain.id, options.supplyRefreshMs, options.supplyRefreshBatch);
      if (due.length === 0) return;
      const supplies = await readSupplies(rpc, due);
      await withTransaction(db, async (client) => {
        await fence(client);
        await updateTokenSupplies(client, chain.id, supplies);
      });
      logger.debug({ tokens: due.length }, "token supplies refreshed");
    } catch (error) {
      logger.warn(
        { error: (error as Error).message, rpc_host: rpc.host() },
        "token supply refresh failed; trying again later",
      );
    }
  };

  /** Waits for a new-head notification, the poll interval, or the next supply refresh, whichever comes first. */
  const waitForHead = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abort.signal.removeEventListener("abort", done);
        wake = null;
        resolve();
      };
      const untilRefresh = Math.max(10, lastSupplyRefresh + options.supplyRefreshMs - Date.now());
      const timer = setTimeout(done, Math.min(chain.pollIntervalMs, untilRefresh));
      abort.signal.addEventListener("abort", done, { once: true });
      wake = done;
    });

  const loop = async () => {
    while (!stopped) {
      throwIfLost();
      try {
        if ((await round()) === "done") return;
      } catch (error) {
        if (!(error instanceof InconsistentAnswerError) || stopped) throw error;
        await onInconsistent(error);
      }
    }
  };

  /** One round of the loop: the head, then a range to ingest, or the check and wait at the head. */
  const round = async (): Promise<"done" | "again"> => {
    const head = await rpc.getBlock("latest");
    if (!head) throw new RetryableRpcError("the node has no latest block");
    if (head.number < highestHead) {
      // A head lower than one the node gave before: a backend behind the others, or a real
      // shorter reorg (a devnet reverted). Waited out like any inconsistency; when the node
      // still says so after the bound, it is believed.
      if (inconsistentStreak() < options.inconsistentFailoverAfter) {
        throw new InconsistentAnswerError(
          "head_backwards",
          [head.number, highestHead],
          `the head went back from block ${highestHead} to block ${head.number}`,
        );
      }
      logger.warn(
        { head_block: head.number, highest_head_block: highestHead, rpc_host: rpc.host() },
        "the node keeps answering a lower head; following it",
      );
    }
    highestHead = head.number;
    progress.head(head.number, head.timestamp);
    const target = head.number - chain.confirmations;
    if (target > checkpoint.block) {
      if (!caughtUp) progress.phase("backfill");
      await ingest.next(target);
      return "again";
    }
    if (!(await verifyCheckpoint(head))) return "again";
    if (!caughtUp) {
      caughtUp = true;
      logger.info({ indexed_block: checkpoint.block, head_block: head.number }, "caught up with the head");
    }
    progress.phase("following");
    if (head.number !== recordedHead) {
      const at = { block: head.number, time: new Date(head.timestamp * 1000) };
      await withTransaction(db, async (client) => {
        await fence(client);
        await recordHead(client, chain.id, at);
      });
      recordedHead = head.number;
    }
    if (!options.follow) return "done";
    // A whole round worked: the next failure starts its backoff from the first delay again.
    failures = 0;
    consistent();
    await refreshSupplies();
    await waitForHead();
    return "again";
  };

  const run = async () => {
    while (!stopped) {
      try {
        if (!(await initialize())) break;
        await loop();
        break;
      } catch (error) {
        if (stopped) break;
        if (error instanceof WriterLockLostError) {
          // Not a failure of this chain: another process writes it now. Back to standby.
          logger.warn({ error: error.message }, "no longer the chain's writer; standing by");
          writer = null;
          await lock.release();
          continue;
        }
        if (error instanceof InconsistentAnswerError) {
          // At start (the checkpoint's check): backed off like in the loop, then started again.
          await onInconsistent(error);
          continue;
        }
        if (
          error instanceof MethodNotSupportedError &&
          node.source() !== null &&
          error.method === sourceMethod[node.source() as TransactionSource] &&
          chain.transactionSource === "auto"
        ) {
          // The node no longer serves the chosen method (a failover to another node): probe again.
          logger.warn(
            { transaction_source: node.source(), error: error.message, rpc_host: rpc.host() },
            "the node does not serve the transaction source's method; probing again at the restart",
          );
          node.forget();
        }
        const message = error instanceof Error ? error.message : String(error);
        if (isFatal(error)) {
          progress.phase("failed", message);
          logger.fatal(
            { error: message, error_name: (error as BaseError).name },
            "indexing of this chain stops",
          );
          return;
        }
        failures++;
        const delayMs = backoffDelayMs(failures, options.restartDelayMs);
        progress.phase(progress.status().phase, message);
        logger.error(
          {
            error: message,
            error_name: (error as Error).name,
            rpc_host: rpc.host(),
            failures,
            retry_in_ms: delayMs,
          },
          "chain indexing failed; restarting from the checkpoint",
        );
        await sleep(delayMs, abort.signal).catch(() => {});
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
      wake?.();
      await running;
      await rpc.close();
      progress.stop();
    },
    status: () => progress.status(),
  };
}
