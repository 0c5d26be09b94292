import type { Hex } from "../decode/types.js";
import type { BlockRow, Checkpoint, IngestBatch, SyncFigures, Token } from "../model/index.js";
import { advanceCheckpoint, storeBlocks } from "../store/chain-state.js";
import { notifyCommit } from "../store/commit-notify.js";
import { type Db, type DbClient, maxOf, minOf, withTransaction } from "../store/db.js";
import { insertPoolEvents } from "../store/pool-events.js";
import { insertPools, updatePoolBases, updatePoolStates } from "../store/pools.js";
import { insertSwaps } from "../store/swaps.js";
import { insertTokens } from "../store/tokens.js";
import type { BuiltBatch } from "./batch.js";
import type { DerivedData } from "./derived.js";
import type { Pool } from "./pools.js";
import { ensureBatchPartitions } from "./storage-upkeep.js";

export type BatchWrite = {
  chainId: number;
  source: IngestBatch["source"];
  fromBlock: number;
  /** The checkpoint this batch continues (block fromBlock − 1). */
  previous: number;
  /** The new checkpoint: toBlock, its hash and time. */
  checkpoint: Checkpoint;
  figures?: SyncFigures | undefined;
  /** The block the indexer is heading for (IngestBatch `headBlock`). */
  headBlock?: number | undefined;
  newPools: readonly Pool[];
  /** Pools older than the range whose base state was read for this batch. */
  basedPools: readonly Pool[];
  newTokens: readonly Token[];
  built: BuiltBatch;
  /** Canonical headers to keep for reorg detection, and the number at or below which stored ones are dropped. */
  blocks: readonly BlockRow[];
  keepBlocksAbove: number | null;
  /** Hashes of blocks leaving the window are kept above this number (none when absent). */
  keepHashesAbove?: number | undefined;
  /** The writer's fence (writer-lock.ts), run first: a writer that lost the chain commits nothing. */
  fence?: ((client: DbClient) => Promise<void>) | undefined;
};

/**
 * Writes one batch in one transaction: the checkpoint first (it locks the chain's row and
 * fails if another writer moved it), then tokens, pools, swaps and pool events with
 * ON CONFLICT DO NOTHING on their natural keys, the pools' latest state, the window's block
 * hashes, and the derived data. A crash at any point leaves all of it or none of it. The
 * partitions of the batch's days are made first, in their own transaction (storage-upkeep.ts).
 */
export async function commitBatch(db: Db, derived: DerivedData, write: BatchWrite): Promise<IngestBatch> {
  const times = write.built.swaps.map((s) => s.blockTime.getTime());
  if (times.length > 0) await ensureBatchPartitions(db, { from: minOf(times), to: maxOf(times) });
  return withTransaction(db, async (client) => {
    const { chainId } = write;
    await write.fence?.(client);
    await advanceCheckpoint(client, {
      chainId,
      previous: write.previous,
      next: write.checkpoint,
      figures: write.figures,
    });
    const insertedTokens = new Set<Hex>(await insertTokens(client, chainId, write.newTokens));
    const newTokens = write.newTokens.filter((t) => insertedTokens.has(t.address));
    const insertedPools = new Set<Hex>(await insertPools(client, chainId, write.newPools));
    await updatePoolBases(client, chainId, write.basedPools);
    // Priced once, before the swaps are inserted: each row is written once, with its USD figures.
    const priced = await derived.priceBatch(client, {
      chainId,
      fromBlock: write.fromBlock,
      toBlock: write.checkpoint.block,
      headBlock: write.headBlock,
      swaps: write.built.swaps,
      poolEvents: write.built.poolEvents,
      newTokens,
    });
    const swaps = await insertSwaps(client, chainId, write.built.swaps, priced.usdOf);
    const poolEvents = await insertPoolEvents(client, chainId, write.built.poolEvents);
    await updatePoolStates(client, chainId, write.built.states);
    if (write.blocks.length > 0 || write.keepBlocksAbove !== null) {
      const keepFrom = write.keepBlocksAbove ?? -1;
      await storeBlocks(client, chainId, write.blocks, keepFrom, write.keepHashesAbove ?? keepFrom);
    }
    const batch: IngestBatch = {
      chainId,
      fromBlock: write.fromBlock,
      toBlock: write.checkpoint.block,
      toBlockTime: write.checkpoint.time,
      headBlock: write.headBlock,
      source: write.source,
      newPools: write.newPools.filter((p) => insertedPools.has(p.address)),
      newTokens,
      swaps,
      poolEvents,
      poolStates: [...write.built.states].map(([pool, s]) => ({ pool, ...s })),
    };
    await priced.write(client, batch);
    // Delivered at COMMIT: API processes LISTENing on the primary drop their cached answers at once.
    await notifyCommit(client, { chainId, block: write.checkpoint.block });
    return batch;
  });
}
