import type { MultiBar } from "cli-progress";
import type { ChainConfig, DexConfig } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import { backoffDelayMs } from "../internal/backoff.js";
import {
  type BaseError,
  ChainIdMismatchError,
  DeepReorgError,
  GenesisMismatchError,
  InconsistentAnswerError,
  RangeTooLargeError,
  RetryableRpcError,
  TransactionSourceUnsupportedError,
  WriterLockLostError,
} from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { type Checkpoint, nativeCoin, type PoolState, type Token } from "../model/index.js";
import { createRpcClient, MULTICALL3, type RpcClient } from "../rpc/client.js";
import { MethodNotSupportedError } from "../rpc/errors.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { sleep } from "../rpc/retry.js";
import type { BlockHeader, TransactionSource } from "../rpc/types.js";
import {
  initSyncState,
  loadCheckpoint,
  loadFactoryScans,
  loadKeptBlocks,
  loadOffCanonical,
  recordHead,
  setOffCanonical,
} from "../store/chain-state.js";
import { notifyCommit } from "../store/commit-notify.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { analyzeGrowingTables, loadPools } from "../store/pools.js";
import { rollbackAbove } from "../store/rollback.js";
import { loadTokens, tokensDueForSupply, updateTokenSupplies } from "../store/tokens.js";
import { readBaseStates } from "./base-state.js";
import { buildBatch, poolOfLog } from "./batch.js";
import { commitBatch } from "./commit.js";
import type { DerivedData } from "./derived.js";
import { scanFactories } from "./factory-scan.js";
import { createFetchAhead, type Fetched } from "./fetch-ahead.js";
import { fetchRange, mergeRanges, type RangeData } from "./fetch-range.js";
import { checkGenesis } from "./genesis.js";
import type { IndexerOptions } from "./options.js";
import { type Pool, poolFromCreation, unknownState } from "./pools.js";
import { type ChainStatus, createProgress } from "./progress.js";
import { createRangeSizer } from "./ranges.js";
import { findCommonAncestor } from "./reorg.js";
import { readSupplies, readTokens } from "./tokens.js";
import { checkTransactionSource, probeTransactionSource, sourceMethod } from "./transaction-source.js";
import { createWriterLock, type Writer } from "./writer-lock.js";

export type ChainSync = {
  /** Runs until stop() (or, without `follow`, until caught up, or until a fatal error). Never rejects. */
  run(): Promise<void>;
  stop(): Promise<void>;
  status(): ChainStatus;
};

/**
 * Known pools from which the planner's statistics of the growing tables are refreshed each time
 * their number has doubled (autovacuum's own first analyze comes too late on a fresh index).
 */
const ANALYZE_FROM_POOLS = 1000;

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
  const dexByFactory = new Map<Hex, DexConfig>(dexes.map((d) => [d.factory, d]));
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
  let pools = new Map<Hex, Pool>();
  let tokens = new Map<Hex, Token>();
  let checkpoint: Checkpoint = { block: chain.startBlock - 1, hash: null, time: null };
  let caughtUp = false;
  let wake: (() => void) | null = null;
  let unwatch: (() => void) | null = null;
  let lastSupplyRefresh = Date.now();
  /** Known pools when the planner's statistics were last refreshed (analyzeGrowingTables). */
  let analyzedAt = 0;
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
  /** Inconsistent answers in a row. */
  let inconsistentStreak = 0;
  /** Where swaps' senders and targets are read; null until the probe has run (transactionSource "auto"). */
  let transactionSource: TransactionSource | null = null;
  /** The configured source has been checked against the node (once, at the first start). */
  let configuredChecked = false;
  /** Multicall3 is deployed on the chain: token metadata is read through it (null: not asked yet). */
  let hasMulticall: boolean | null = null;

  /**
   * What the node serves, asked once at start: Multicall3 (token metadata is read through it),
   * and the transaction source. "auto" probes the node (again only after the node stopped serving
   * the chosen method); a configured source is checked once, and a node that does not serve it
   * stops the chain with a message naming the setting.
   */
  const probeNode = async () => {
    hasMulticall ??= (await rpc.getCode(MULTICALL3, "latest")) !== "0x";
    if (transactionSource !== null) return;
    const head = await rpc.getBlockNumber();
    const configured = chain.transactionSource;
    let reason = "configured";
    if (configured === "auto") {
      const probed = await probeTransactionSource(rpc, head);
      transactionSource = probed.source;
      reason = probed.reason;
    } else {
      const refused = configuredChecked ? null : await checkTransactionSource(rpc, head, configured);
      if (refused !== null) {
        throw new TransactionSourceUnsupportedError(
          `chain ${chain.id} (${chain.name}): chains[].transactionSource is "${configured}" but the node does not serve it (${refused}); set it to "auto"`,
        );
      }
      configuredChecked = true;
      transactionSource = configured;
    }
    metrics.transactionSource(chain.id, transactionSource);
    logger.info(
      {
        transaction_source: transactionSource,
        configured,
        probe_block: head,
        reason,
        multicall3: hasMulticall,
      },
      "transaction source chosen",
    );
  };

  /**
   * An answer contradicted the node's others: counted, logged at warn with the blocks and the
   * URL's host, shown to readiness, and waited out with a doubling, jittered, capped backoff;
   * every `inconsistentFailoverAfter` in a row, the next URL of the chain is tried.
   */
  const onInconsistent = async (error: InconsistentAnswerError) => {
    inconsistentStreak++;
    const host = rpc.host();
    const delayMs = backoffDelayMs(inconsistentStreak, options.inconsistentDelayMs);
    metrics.inconsistent(chain.id, error.kind);
    progress.inconsistent(`${error.message} (node ${host})`);
    const failOver =
      inconsistentStreak % options.inconsistentFailoverAfter === 0 && rpc.failOver() ? rpc.host() : null;
    logger.warn(
      {
        kind: error.kind,
        blocks: error.blocks,
        rpc_host: host,
        attempt: inconsistentStreak,
        retry_in_ms: delayMs,
        ...(failOver ? { next_rpc_host: failOver } : {}),
        error: error.message,
      },
      failOver
        ? "the node keeps answering inconsistently; trying the next RPC URL"
        : "inconsistent answer from the node; retrying after a backoff",
    );
    await sleep(delayMs, abort.signal).catch(() => {});
  };
  /** An answer was consistent: the next inconsistency starts its backoff from the first delay. */
  const consistent = () => {
    if (inconsistentStreak === 0) return;
    logger.info(
      { after: inconsistentStreak, rpc_host: rpc.host() },
      "the node's answers are consistent again",
    );
    inconsistentStreak = 0;
    progress.consistent();
  };

  /**
   * The pool as kept in the map of known pools (every pool of the chain: 300,000 and more at
   * mainnet scale), sharing its strings with what is kept anyway: the factory's and DEX's of the
   * configuration, the token addresses of the token map (a reference token is paired with
   * thousands of pools; decoded from logs or read from rows, each would be a copy of its own).
   */
  const slim = (pool: Pool): Pool => {
    const dex = dexByFactory.get(pool.factory);
    return {
      ...pool,
      factory: dex?.factory ?? pool.factory,
      dex: dex?.name === pool.dex ? dex.name : pool.dex,
      token0: tokens.get(pool.token0)?.address ?? pool.token0,
      token1: tokens.get(pool.token1)?.address ?? pool.token1,
    };
  };

  /** Loads the chain's checkpoint, pools and tokens from the database. */
  const reload = async () => {
    ahead.clear();
    checkpoint = (await loadCheckpoint(db, chain.id)) ?? checkpoint;
    markedOffCanonical = (await loadOffCanonical(db, chain.id)) !== null;
    const scans = await loadFactoryScans(db, chain.id);
    tokens = new Map((await loadTokens(db, chain.id)).map((t) => [t.address, t]));
    pools = new Map();
    let unconfigured = 0;
    for (const row of await loadPools(db, chain.id)) {
      const dex = dexByFactory.get(row.factory);
      if (!dex) {
        unconfigured++;
        continue;
      }
      const baseBlock = row.base?.block ?? scans.get(row.factory)?.targetBlock ?? row.createdBlock;
      pools.set(row.address, slim({ ...row, swapEvent: dex.swapEvent, baseBlock }));
    }
    if (unconfigured > 0)
      logger.warn({ pools: unconfigured }, "stored pools of factories no longer configured are ignored");
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
        pools: pools.size,
        tokens: tokens.size,
        start_block: chain.startBlock,
      },
      "chain indexer starting",
    );
    await verifyCheckpoint();
    await probeNode();
    progress.phase("scanning-factories");
    const { poolsFound } = await scanFactories({
      db,
      rpc,
      chainId: chain.id,
      dexes,
      checkpoint: checkpoint.block,
      isKnownPool: (a) => pools.has(a),
      onPools: (found) => {
        for (const pool of found) pools.set(pool.address, slim(pool));
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

  /** The chain's data is marked off the canonical chain in `sync_state` (setOffCanonical). */
  let markedOffCanonical = false;
  /**
   * Sets (or clears: null) the mark that makes the API answer this chain's data with a 503, in a
   * fenced transaction of its own, announced like a commit so the API reads it at once.
   */
  const markOffCanonical = async (reason: string | null) => {
    await withTransaction(db, async (client) => {
      await fence(client);
      await setOffCanonical(client, chain.id, reason);
      await notifyCommit(client, { chainId: chain.id, block: checkpoint.block });
    });
    markedOffCanonical = reason !== null;
  };

  /**
   * Is the stored checkpoint still on the node's chain? Rolls back when the node has another
   * block at that height, or when the node is below the checkpoint and its head is another block
   * than the one stored at that height (a chain that went back to a shorter branch). A node
   * without the checkpoint's block whose head is the stored one (a backend behind the others) is
   * no evidence of a reorg: the indexer waits for the chain to get there.
   */
  const verifyCheckpoint = async (head?: BlockHeader): Promise<boolean> => {
    if (checkpoint.hash === null) return true;
    const block = head?.number === checkpoint.block ? head : await rpc.getBlock(checkpoint.block);
    if (block === null) {
      const top = head ?? (await rpc.getBlock("latest"));
      const mine = top ? (await loadKeptBlocks(db, chain.id, top.number)).at(-1) : undefined;
      if (top && mine?.number === top.number && mine.hash !== top.hash) {
        await handleReorg(
          `the node's head block ${top.number} is not the stored one and the node has no block ${checkpoint.block}`,
        );
        return false;
      }
      logger.debug(
        { indexed_block: checkpoint.block, head_block: top?.number },
        "the node is behind the checkpoint",
      );
      return true;
    }
    if (block.hash === checkpoint.hash) {
      // A mark left by a process that stopped before its rollback, on a chain that came back.
      if (markedOffCanonical) await markOffCanonical(null);
      return true;
    }
    await handleReorg(`checkpoint block ${checkpoint.block} is no longer canonical`);
    return false;
  };

  /**
   * Walks back through the stored blocks against the node's hashes to the highest one it still
   * has (the common ancestor: findCommonAncestor) and, in one transaction, deletes everything
   * above it, recomputes the touched pools' state, lets the derived data roll back and lowers the
   * checkpoint. From the moment the reorg is known until that transaction, the chain is marked
   * off the canonical chain (the API answers its data with a 503); a reorg deeper than every
   * kept hash leaves the mark and stops the chain.
   */
  const handleReorg = async (reason: string, unlinked?: { block: number; parentHash: Hex }) => {
    const unlinkedMessage = () =>
      unlinked
        ? `block ${unlinked.block}'s parent hash ${unlinked.parentHash} is not block ${checkpoint.block}'s hash ${checkpoint.hash}, which the node still has`
        : `block ${checkpoint.block}'s hash changed and changed back (${reason})`;
    if (unlinked) {
      // The node still has our checkpoint: what looked like a reorg was a header that does not
      // link to its parent (hardhat_mine's blocks, two backends behind one URL). No reorg to undo;
      // asking again at once would only get the same answer, so it is an inconsistency.
      const [atCheckpoint] = await rpc.getBlocksOrNull([checkpoint.block]);
      if (checkpoint.hash !== null && atCheckpoint?.hash === checkpoint.hash) {
        throw new InconsistentAnswerError(
          "unlinked_header",
          [checkpoint.block, unlinked.block],
          unlinkedMessage(),
        );
      }
    }
    await markOffCanonical(`chain ${chain.id}: a reorg is being rolled back (${reason})`);
    logger.warn(
      { reason, indexed_block: checkpoint.block, rpc_host: rpc.host() },
      "reorg found; the chain's data is marked off the canonical chain until it is rolled back",
    );
    const stored = await loadKeptBlocks(db, chain.id);
    const { ancestor, asked } = await findCommonAncestor(
      stored,
      async (numbers) => (await rpc.getBlocksOrNull(numbers)).map((b) => b?.hash ?? null),
      chain.reorgWindow,
    );
    if (!ancestor) {
      const lowest = stored[stored.length - 1]?.number;
      const message = `chain ${chain.id} (${chain.name}): reorg deeper than the kept block hashes (no stored block from ${lowest ?? "none"} to ${checkpoint.block} is canonical); indexing of this chain stops`;
      await markOffCanonical(message);
      throw new DeepReorgError(message);
    }
    if (ancestor.number === checkpoint.block) {
      await markOffCanonical(null);
      throw new InconsistentAnswerError(
        "unlinked_header",
        [checkpoint.block, unlinked?.block ?? checkpoint.block],
        unlinkedMessage(),
      );
    }
    const previous = checkpoint.block;
    const result = await withTransaction(db, async (client) => {
      await fence(client);
      // Also clears the off-canonical mark: the data is on the node's chain again.
      const r = await rollbackAbove(client, chain.id, previous, {
        block: ancestor.number,
        hash: ancestor.hash,
        time: ancestor.time,
      });
      await derived.afterRollback(client, { chainId: chain.id, ancestorBlock: ancestor.number });
      await notifyCommit(client, { chainId: chain.id, block: ancestor.number });
      return r;
    });
    markedOffCanonical = false;
    const depth = previous - ancestor.number;
    logger.warn(
      {
        reason,
        ancestor_block: ancestor.number,
        previous_block: previous,
        depth,
        reorg_window: chain.reorgWindow,
        hashes_asked: asked,
        deleted_swaps: result.deletedSwaps,
        deleted_pool_events: result.deletedEvents,
        recomputed_pools: result.affectedPools.length,
      },
      "reorg: rolled back to the common ancestor",
    );
    await reload();
  };

  /**
   * The backfill's prefetch queue (fetch-ahead.ts): ranges are fetched ahead of the commits, and
   * those already fetched when a commit starts go into it together.
   */
  const ahead = createFetchAhead({
    fetch: async ({ from, to, target, parentHash, newPools, onLogs }) => {
      const data = await fetchRange({
        rpc,
        dexes,
        isKnownPool: (a) => pools.has(a) || newPools.has(a),
        knownPools: () => {
          const known = [...pools.keys()];
          for (const address of newPools) if (!pools.has(address)) known.push(address);
          return known;
        },
        knownPoolCount: pools.size + [...newPools].filter((a) => !pools.has(a)).length,
        from,
        to,
        target,
        reorgWindow: chain.reorgWindow,
        parentHash,
        addressFilterLimit: options.addressFilterLimit,
        transactionSource: transactionSource ?? "transactions",
        onLogs,
      });
      if ("reorg" in data) return data;
      // The new pools' tokens, read here so that the read overlaps the commits before (a token
      // also read by an earlier range in the queue is inserted once: ON CONFLICT DO NOTHING).
      const wanted = new Set<Hex>();
      for (const { creation } of data.creations)
        for (const token of [creation.token0, creation.token1]) if (!tokens.has(token)) wanted.add(token);
      data.tokens = await readTokens(rpc, [...wanted], "latest", { multicall: hasMulticall === true });
      return data;
    },
    size: () => sizer.size(),
    succeeded: (blocks, logs, clipped) => sizer.succeeded(blocks, logs, clipped),
    maxRanges: options.fetchAheadRanges,
    maxLogs: options.targetLogsPerBatch,
  });

  /** Takes the next fetched ranges (waiting for the first), builds them and commits them as one batch. */
  const ingestNext = async (target: number) => {
    const startedAt = performance.now();
    const from = checkpoint.block + 1;
    const taken = await ahead.take(from, target, checkpoint.hash, {
      maxLogs: options.targetLogsPerBatch,
      maxRanges: options.rangesPerCommit,
    });
    const outcome = taken[0] as Fetched;
    if (!outcome.ok) {
      const { error } = outcome;
      if (error instanceof RangeTooLargeError) {
        if (!sizer.tooLarge(outcome.to - outcome.from + 1)) {
          throw new RetryableRpcError(`a one-block range is refused: ${error.message}`, { cause: error });
        }
        logger.debug(
          { from_block: from, to_block: outcome.to, next_range: sizer.size() },
          "range too large; halving",
        );
        return;
      }
      throw error;
    }
    if ("reorg" in outcome.data) {
      await handleReorg(`block ${from} does not link to the checkpoint ${checkpoint.block}`, {
        block: from,
        parentHash: outcome.data.parentHash,
      });
      return;
    }
    const data = mergeRanges(taken.map((t) => (t as { data: RangeData }).data));
    const { to } = data;
    const fetchedAt = performance.now();

    // Pools created in the range, and pools older than the range touched for the first time.
    const overlay = new Map<Hex, Pool>();
    const newPools = data.creations.map(({ creation, dex }) => poolFromCreation(creation, dex, null));
    for (const pool of newPools) overlay.set(pool.address, pool);
    const lookup = { get: (a: Hex) => overlay.get(a) ?? pools.get(a) };
    const touched = new Map<Hex, Pool>();
    for (const log of data.logs) {
      // A pool inside a manager (V4) is named by its id in the log's first topic.
      const pool = poolOfLog(lookup, log);
      if (pool) touched.set(pool.address, pool);
    }
    const needBase = [...touched.values()].filter((p) => p.base === null);
    const basedPools: Pool[] = [];
    if (needBase.length > 0) {
      let bases = new Map<Hex, PoolState>();
      try {
        bases = await readBaseStates(rpc, needBase);
      } catch (error) {
        // A node without the history (not an archive node) cannot answer at startBlock − 1:
        // the balances stay unknown (null) rather than stopping the chain.
        if (error instanceof RetryableRpcError) throw error;
        logger.warn(
          {
            pools: needBase.length,
            block: needBase[0]?.baseBlock,
            error: (error as Error).message,
            rpc_host: rpc.host(),
          },
          "cannot read the state of older pools at the start block; their balances stay unknown",
        );
      }
      for (const pool of needBase) {
        const base = bases.get(pool.address) ?? { ...unknownState, block: pool.baseBlock };
        const based = { ...pool, base, state: base };
        overlay.set(pool.address, based);
        basedPools.push(based);
      }
    }
    const readAhead = new Map((data.tokens ?? []).map((t) => [t.address, t]));
    const wantedTokens = new Set<Hex>();
    for (const pool of [...newPools, ...touched.values()]) {
      for (const token of [pool.token0, pool.token1]) if (!tokens.has(token)) wantedTokens.add(token);
    }
    // At the head: metadata does not change, and any node (not only an archive) answers there.
    const read = await readTokens(
      rpc,
      [...wantedTokens].filter((t) => !readAhead.has(t)),
      "latest",
      { multicall: hasMulticall === true, native: nativeCoin(chain.id, chain.nativeSymbol) },
    );
    for (const token of read) readAhead.set(token.address, token);
    // In the order they were wanted, read ahead or now.
    const newTokens = [...wantedTokens].map((t) => readAhead.get(t) as Token);
    const newTokenMap = new Map(newTokens.map((t) => [t.address, t]));
    const built = buildBatch({
      logs: data.logs,
      pools: lookup,
      tokens: { get: (a: Hex) => newTokenMap.get(a) ?? tokens.get(a) },
      blocks: data.blocks,
      transactions: data.transactions,
    });
    // Stopping now abandons the batch: nothing of it was written.
    if (stopped) return;

    const builtAt = performance.now();
    const toHeader = data.headers.get(to) as BlockHeader;
    const next: Checkpoint = { block: to, hash: toHeader.hash, time: new Date(toHeader.timestamp * 1000) };
    await commitBatch(db, derived, {
      chainId: chain.id,
      source: "rpc",
      fromBlock: from,
      previous: checkpoint.block,
      checkpoint: next,
      figures: progress.figures(),
      headBlock: target,
      newPools,
      basedPools,
      newTokens,
      built,
      blocks: data.canonical,
      keepBlocksAbove: to - chain.reorgWindow,
      keepHashesAbove: to - Math.max(chain.reorgWindow, options.keptBlockHashes),
      fence,
    });
    for (const token of newTokens) tokens.set(token.address, token);
    for (const [address, pool] of overlay) pools.set(address, slim(pool));
    if (pools.size >= ANALYZE_FROM_POOLS && pools.size >= 2 * analyzedAt) {
      // Doubled since the last refresh: a handful of ANALYZEs over a whole creation era.
      analyzedAt = pools.size;
      await analyzeGrowingTables(db).catch((error: unknown) =>
        logger.warn(
          { error: (error as Error).message },
          "ANALYZE of the growing tables failed; autovacuum's will do",
        ),
      );
    }
    for (const [address, state] of built.states) {
      const pool = pools.get(address);
      if (pool) pools.set(address, { ...pool, state });
    }
    checkpoint = next;
    failures = 0;
    consistent();
    const elapsedMs = performance.now() - startedAt;
    progress.checkpoint(next);
    progress.batch({
      blocks: to - from + 1,
      swaps: built.swaps.length,
      events: built.poolEvents.length,
      elapsedMs,
    });
    logger.debug(
      {
        from_block: from,
        to_block: to,
        logs: data.logs.length,
        swaps: built.swaps.length,
        pool_events: built.poolEvents.length,
        new_pools: newPools.length,
        fetch_ms: Math.round(fetchedAt - startedAt),
        prepare_ms: Math.round(builtAt - fetchedAt),
        commit_ms: Math.round(performance.now() - builtAt),
        ranges: taken.length,
        elapsed_ms: Math.round(elapsedMs),
      },
      "batch committed",
    );
  };

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
      if (inconsistentStreak < options.inconsistentFailoverAfter) {
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
      await ingestNext(target);
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
          transactionSource !== null &&
          error.method === sourceMethod[transactionSource] &&
          chain.transactionSource === "auto"
        ) {
          // The node no longer serves the chosen method (a failover to another node): probe again.
          logger.warn(
            { transaction_source: transactionSource, error: error.message, rpc_host: rpc.host() },
            "the node does not serve the transaction source's method; probing again at the restart",
          );
          transactionSource = null;
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
