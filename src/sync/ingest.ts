import type { ChainConfig } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import { RangeTooLargeError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { type Checkpoint, nativeCoin } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { BlockHeader } from "../rpc/types.js";
import type { Db, DbClient } from "../store/db.js";
import { analyzeGrowingTables } from "../store/pools.js";
import { commitBatch } from "./commit.js";
import type { DerivedData } from "./derived.js";
import { createFetchAhead, type Fetched } from "./fetch-ahead.js";
import { fetchRange, mergeRanges, type RangeData } from "./fetch-range.js";
import type { KnownPools } from "./known-pools.js";
import type { NodeProbe } from "./node-probe.js";
import type { IndexerOptions } from "./options.js";
import { prepareBatch } from "./prepare-batch.js";
import type { Progress } from "./progress.js";
import type { RangeSizer } from "./ranges.js";
import type { ReorgHandler } from "./reorg.js";
import { readTokens } from "./tokens.js";

/**
 * Known pools from which the planner's statistics of the growing tables are refreshed each time
 * their number has doubled (autovacuum's own first analyze comes too late on a fresh index).
 */
const ANALYZE_FROM_POOLS = 1000;

export type Ingest = {
  /**
   * Takes the next fetched ranges (waiting for the first), builds them and commits them as one
   * batch; a refused range is halved, an unlinked one handed to the reorg handler.
   */
  next(target: number): Promise<void>;
  /** Drops the ranges fetched ahead (at each reload: they may not follow the checkpoint any more). */
  clear(): void;
};

/**
 * A chain's ingestion of ranges: the prefetch queue (fetch-ahead.ts, fetch-range.ts), each
 * batch's preparation (prepare-batch.ts) and commit (commit.ts), the memory updated after it
 * (`committed` gets the new checkpoint).
 */
export function createIngest(args: {
  chain: ChainConfig;
  db: Db;
  derived: DerivedData;
  options: IndexerOptions;
  rpc: RpcClient;
  logger: Logger;
  known: KnownPools;
  node: NodeProbe;
  progress: Progress;
  sizer: RangeSizer;
  fence: (client: DbClient) => Promise<void>;
  checkpoint: () => Checkpoint;
  handleReorg: ReorgHandler["handleReorg"];
  stopped: () => boolean;
  committed: (next: Checkpoint) => void;
}): Ingest {
  const { chain, db, derived, options, rpc, logger, known, node, progress, sizer, fence } = args;
  const { checkpoint, handleReorg, stopped, committed } = args;
  const dexes = chain.dexes;
  /** Known pools when the planner's statistics were last refreshed (analyzeGrowingTables). */
  let analyzedAt = 0;

  /**
   * The backfill's prefetch queue (fetch-ahead.ts): ranges are fetched ahead of the commits, and
   * those already fetched when a commit starts go into it together.
   */
  const ahead = createFetchAhead({
    fetch: async ({ from, to, target, parentHash, newPools, onLogs }) => {
      const data = await fetchRange({
        rpc,
        dexes,
        isKnownPool: (a) => known.pools.has(a) || newPools.has(a),
        knownPools: () => {
          const addresses = [...known.pools.keys()];
          for (const address of newPools) if (!known.pools.has(address)) addresses.push(address);
          return addresses;
        },
        knownPoolCount: known.pools.size + [...newPools].filter((a) => !known.pools.has(a)).length,
        from,
        to,
        target,
        reorgWindow: chain.reorgWindow,
        parentHash,
        addressFilterLimit: options.addressFilterLimit,
        transactionSource: node.source() ?? "transactions",
        onLogs,
      });
      if ("reorg" in data) return data;
      // The new pools' tokens, read here so that the read overlaps the commits before (a token
      // also read by an earlier range in the queue is inserted once: ON CONFLICT DO NOTHING).
      const wanted = new Set<Hex>();
      for (const { creation } of data.creations)
        for (const token of [creation.token0, creation.token1])
          if (!known.tokens.has(token)) wanted.add(token);
      data.tokens = await readTokens(rpc, [...wanted], "latest", { multicall: node.multicall() });
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
    const from = checkpoint().block + 1;
    const taken = await ahead.take(from, target, checkpoint().hash, {
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
      await handleReorg(`block ${from} does not link to the checkpoint ${checkpoint().block}`, {
        block: from,
        parentHash: outcome.data.parentHash,
      });
      return;
    }
    const data = mergeRanges(taken.map((t) => (t as { data: RangeData }).data));
    const { to } = data;
    const fetchedAt = performance.now();

    const { newPools, basedPools, newTokens, overlay, built } = await prepareBatch({
      data,
      pools: known.pools,
      tokens: known.tokens,
      rpc,
      logger,
      multicall: node.multicall(),
      native: nativeCoin(chain.id, chain.nativeSymbol),
    });
    // Stopping now abandons the batch: nothing of it was written.
    if (stopped()) return;

    const builtAt = performance.now();
    const toHeader = data.headers.get(to) as BlockHeader;
    const next: Checkpoint = { block: to, hash: toHeader.hash, time: new Date(toHeader.timestamp * 1000) };
    await commitBatch(db, derived, {
      chainId: chain.id,
      source: "rpc",
      fromBlock: from,
      previous: checkpoint().block,
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
    known.add({ newTokens, overlay, states: built.states });
    if (known.pools.size >= ANALYZE_FROM_POOLS && known.pools.size >= 2 * analyzedAt) {
      // Doubled since the last refresh: a handful of ANALYZEs over a whole creation era.
      analyzedAt = known.pools.size;
      await analyzeGrowingTables(db).catch((error: unknown) =>
        logger.warn(
          { error: (error as Error).message },
          "ANALYZE of the growing tables failed; autovacuum's will do",
        ),
      );
    }
    committed(next);
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

  return { next: ingestNext, clear: () => ahead.clear() };
}
