import { lagOf } from "../sync/progress.js";
import type { Queryable } from "./db.js";

/** Indexing progress of one chain, as the indexer last recorded it. */
export type ChainSyncStatus = {
  chainId: number;
  name: string;
  /** Every block up to this one is fully ingested. */
  indexedBlock: number;
  indexedBlockHash: string | null;
  indexedBlockTime: Date | null;
  headBlock: number | null;
  headBlockTime: Date | null;
  /** headBlock − indexedBlock (null while the head is unknown). */
  lagBlocks: number | null;
  /** Seconds between the head's and the indexed block's timestamps. */
  lagSeconds: number | null;
  blocksPerSecond: number | null;
  swapsPerSecond: number | null;
  updatedAt: Date;
};

/**
 * The freshness of every indexed chain (or of the given ones), for the API's freshness headers
 * and readiness: indexed block and time, head, lag and backfill speed.
 */
export async function getSyncStatus(db: Queryable, chainIds?: readonly number[]): Promise<ChainSyncStatus[]> {
  const { rows } = await db.query<{
    chain_id: number;
    name: string;
    indexed_block: number;
    indexed_block_hash: string | null;
    indexed_block_time: Date | null;
    head_block: number | null;
    head_block_time: Date | null;
    blocks_per_second: number | null;
    swaps_per_second: number | null;
    updated_at: Date;
  }>(
    `SELECT s.chain_id, c.name, s.indexed_block, s.indexed_block_hash, s.indexed_block_time, s.head_block,
       s.head_block_time, s.blocks_per_second, s.swaps_per_second, s.updated_at
     FROM sync_state s JOIN chains c USING (chain_id)
     WHERE $1::int[] IS NULL OR s.chain_id = ANY($1::int[])
     ORDER BY s.chain_id`,
    [chainIds ? [...chainIds] : null],
  );
  return rows.map((r) => {
    const position = {
      indexedBlock: r.indexed_block,
      indexedBlockHash: r.indexed_block_hash,
      indexedBlockTime: r.indexed_block_time,
      headBlock: r.head_block,
      headBlockTime: r.head_block_time,
    };
    return {
      chainId: r.chain_id,
      name: r.name,
      ...position,
      ...lagOf(position),
      blocksPerSecond: r.blocks_per_second,
      swapsPerSecond: r.swaps_per_second,
      updatedAt: r.updated_at,
    };
  });
}
