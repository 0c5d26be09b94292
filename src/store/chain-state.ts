/**
 * Tables of a chain's ingestion state: `chains` (identity, genesis hash), `sync_state` (the
 * checkpoint and progress figures), `blocks` (canonical hashes of the reorg window), `block_hashes`
 * (older ones, for deep reorgs) and
 * `factory_scans` (the scan for pools created before the start block).
 */
import { CheckpointConflictError } from "../internal/errors.js";
import {
  type BlockRow,
  type ChainSyncStatus,
  type Checkpoint,
  type FactoryScan,
  type Hex,
  lagOf,
  type SyncFigures,
} from "../model/index.js";
import type { Queryable } from "./db.js";
import { columnsOf, writeChunks } from "./unnest.js";

const isoOf = (d: Date | null): string | null => (d === null ? null : d.toISOString());

// ---------------------------------------------------------------------------------------------
// chains

/** The chains row of a chain id, or null. */
export async function getChainRow(
  db: Queryable,
  chainId: number,
): Promise<{ genesisHash: Hex; devnet: boolean; name: string } | null> {
  const { rows } = await db.query<{ genesis_hash: Hex; devnet: boolean; name: string }>(
    "SELECT genesis_hash, devnet, name FROM chains WHERE chain_id = $1",
    [chainId],
  );
  const row = rows[0];
  return row ? { genesisHash: row.genesis_hash, devnet: row.devnet, name: row.name } : null;
}

export async function insertChainRow(
  db: Queryable,
  chain: { chainId: number; name: string; genesisHash: Hex; devnet: boolean },
): Promise<void> {
  await db.query(
    "INSERT INTO chains (chain_id, name, genesis_hash, devnet) VALUES ($1, $2, $3, $4) ON CONFLICT (chain_id) DO NOTHING",
    [chain.chainId, chain.name, chain.genesisHash, chain.devnet],
  );
}

/** Drops a chain and, by cascade, everything ingested for it. */
export async function deleteChainRow(db: Queryable, chainId: number): Promise<void> {
  await db.query("DELETE FROM chains WHERE chain_id = $1", [chainId]);
}

// ---------------------------------------------------------------------------------------------
// sync_state

/** Creates the chain's checkpoint at `startBlock - 1` (nothing indexed) unless it exists. */
export async function initSyncState(db: Queryable, chainId: number, startBlock: number): Promise<void> {
  await db.query(
    "INSERT INTO sync_state (chain_id, indexed_block) VALUES ($1, $2) ON CONFLICT (chain_id) DO NOTHING",
    [chainId, startBlock - 1],
  );
}

export async function loadCheckpoint(db: Queryable, chainId: number): Promise<Checkpoint | null> {
  const { rows } = await db.query<{
    indexed_block: number;
    indexed_block_hash: Hex | null;
    indexed_block_time: Date | null;
  }>("SELECT indexed_block, indexed_block_hash, indexed_block_time FROM sync_state WHERE chain_id = $1", [
    chainId,
  ]);
  const row = rows[0];
  return row
    ? { block: row.indexed_block, hash: row.indexed_block_hash, time: row.indexed_block_time }
    : null;
}

/**
 * Moves the chain's checkpoint from `previous` to `next` (and records the progress figures).
 * Run first in a batch's transaction: it locks the chain's sync_state row, and a checkpoint that
 * is no longer `previous` (another writer got there) throws CheckpointConflictError.
 */
export async function advanceCheckpoint(
  client: Queryable,
  args: { chainId: number; previous: number; next: Checkpoint; figures?: SyncFigures | undefined },
): Promise<void> {
  const f = args.figures;
  const result = await client.query(
    `UPDATE sync_state SET indexed_block = $3, indexed_block_hash = $4, indexed_block_time = $5,
       head_block = COALESCE($6, head_block), head_block_time = COALESCE($7, head_block_time),
       blocks_per_second = COALESCE($8, blocks_per_second), swaps_per_second = COALESCE($9, swaps_per_second),
       updated_at = now()
     WHERE chain_id = $1 AND indexed_block = $2`,
    [
      args.chainId,
      args.previous,
      args.next.block,
      args.next.hash,
      isoOf(args.next.time),
      f?.headBlock ?? null,
      isoOf(f?.headBlockTime ?? null),
      f?.blocksPerSecond ?? null,
      f?.swapsPerSecond ?? null,
    ],
  );
  if (result.rowCount !== 1) {
    throw new CheckpointConflictError(args.chainId, args.previous);
  }
}

/**
 * Lowers the chain's checkpoint from `previous` to the reorg's common ancestor, and clears the
 * off-canonical mark (the data is on the node's chain again). Run first in the rollback's
 * transaction, to lock the checkpoint row against a concurrent writer.
 */
export async function lowerCheckpoint(
  client: Queryable,
  chainId: number,
  previous: number,
  ancestor: { block: number; hash: Hex; time: Date },
): Promise<void> {
  const moved = await client.query(
    `UPDATE sync_state SET indexed_block = $3, indexed_block_hash = $4, indexed_block_time = $5,
       off_canonical = NULL, updated_at = now()
     WHERE chain_id = $1 AND indexed_block = $2`,
    [chainId, previous, ancestor.block, ancestor.hash, ancestor.time.toISOString()],
  );
  if (moved.rowCount !== 1) {
    throw new CheckpointConflictError(chainId, previous);
  }
}

/**
 * Marks the chain's indexed data as off the node's canonical chain (`reason`), or clears the mark
 * (null). While it is set, the API answers the chain's data endpoints with a 503 naming it.
 */
export async function setOffCanonical(
  client: Queryable,
  chainId: number,
  reason: string | null,
): Promise<void> {
  await client.query(
    "UPDATE sync_state SET off_canonical = $2, updated_at = now() WHERE chain_id = $1 AND off_canonical IS DISTINCT FROM $2",
    [chainId, reason],
  );
}

/** The chain's off-canonical mark (see setOffCanonical), or null. */
export async function loadOffCanonical(db: Queryable, chainId: number): Promise<string | null> {
  const { rows } = await db.query<{ off_canonical: string | null }>(
    "SELECT off_canonical FROM sync_state WHERE chain_id = $1",
    [chainId],
  );
  return rows[0]?.off_canonical ?? null;
}

/** Records the chain's head while the indexer has nothing new to ingest. */
export async function recordHead(
  db: Queryable,
  chainId: number,
  head: { block: number; time: Date },
): Promise<void> {
  await db.query(
    "UPDATE sync_state SET head_block = $2, head_block_time = $3, updated_at = now() WHERE chain_id = $1",
    [chainId, head.block, head.time.toISOString()],
  );
}

/**
 * The freshness of every indexed chain (or of the given ones), for the API's freshness headers
 * and readiness: indexed block and time, head, lag and backfill speed.
 */
export async function getSyncStatus(
  db: Queryable,
  chainIds?: readonly number[],
): Promise<(ChainSyncStatus & { offCanonical: string | null })[]> {
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
    off_canonical: string | null;
  }>(
    `SELECT s.chain_id, c.name, s.indexed_block, s.indexed_block_hash, s.indexed_block_time, s.head_block,
       s.head_block_time, s.blocks_per_second, s.swaps_per_second, s.updated_at, s.off_canonical
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
      offCanonical: r.off_canonical,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// blocks

const BLOCK_COLUMNS = columnsOf<BlockRow>({
  number: ["bigint", (b) => b.number],
  hash: ["text", (b) => b.hash],
  parent_hash: ["text", (b) => b.parentHash],
  ts: ["float8", (b) => b.timestamp],
});

/**
 * Stores canonical block hashes and moves those below the kept window to `block_hashes`: after
 * it, the chain's stored blocks are the window (keepFrom, …] plus whatever is above, and its kept
 * hashes those of (hashesFrom, keepFrom] (none with hashesFrom = keepFrom).
 */
export async function storeBlocks(
  client: Queryable,
  chainId: number,
  blocks: readonly BlockRow[],
  keepFrom: number,
  hashesFrom: number = keepFrom,
): Promise<void> {
  await writeChunks(
    client,
    chainId,
    BLOCK_COLUMNS,
    blocks,
    (r) => `INSERT INTO blocks (chain_id, number, hash, parent_hash, time)
       SELECT $1, r.number, r.hash, r.parent_hash, to_timestamp(r.ts)
       FROM ${r}
       ON CONFLICT (chain_id, number) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time`,
  );
  // One round trip, as the plain DELETE it replaces: the main DELETE does not see the rows the
  // INSERT adds (one snapshot), which are all above hashesFrom.
  await client.query(
    `WITH moved AS (DELETE FROM blocks WHERE chain_id = $1 AND number <= $2 RETURNING number, hash, time),
     kept AS (
       INSERT INTO block_hashes (chain_id, number, hash, time)
       SELECT $1, number, hash, time FROM moved WHERE number > $3
       ON CONFLICT (chain_id, number) DO UPDATE SET hash = EXCLUDED.hash, time = EXCLUDED.time)
     DELETE FROM block_hashes WHERE chain_id = $1 AND number <= $3`,
    [chainId, keepFrom, Math.min(hashesFrom, keepFrom)],
  );
}

/**
 * Every kept canonical block of a chain, the window's and the older kept hashes (at or above
 * `fromBlock` when given), highest first: what a reorg's walk back compares with the node.
 */
export async function loadKeptBlocks(
  db: Queryable,
  chainId: number,
  fromBlock?: number,
): Promise<{ number: number; hash: Hex; time: Date }[]> {
  const { rows } = await db.query<{ number: number; hash: Hex; time: Date }>(
    `SELECT DISTINCT ON (number) number, hash, time FROM (
       SELECT number, hash, time, 0 AS pick FROM blocks WHERE chain_id = $1 AND number >= $2
       UNION ALL
       SELECT number, hash, time, 1 AS pick FROM block_hashes WHERE chain_id = $1 AND number >= $2) k
     ORDER BY number DESC, pick`,
    [chainId, fromBlock ?? -1],
  );
  return rows;
}

/** Stored canonical blocks of a chain's window, highest first. */
export async function loadStoredBlocks(
  db: Queryable,
  chainId: number,
): Promise<{ number: number; hash: Hex; time: Date }[]> {
  const { rows } = await db.query<{ number: number; hash: Hex; time: Date }>(
    "SELECT number, hash, time FROM blocks WHERE chain_id = $1 ORDER BY number DESC",
    [chainId],
  );
  return rows;
}

export async function deleteBlocksAbove(client: Queryable, chainId: number, block: number): Promise<void> {
  await client.query("DELETE FROM blocks WHERE chain_id = $1 AND number > $2", [chainId, block]);
  await client.query("DELETE FROM block_hashes WHERE chain_id = $1 AND number > $2", [chainId, block]);
}

// ---------------------------------------------------------------------------------------------
// factory_scans

/** How far each factory's creation events were scanned below the indexed range, and up to where they must be. */
export async function loadFactoryScans(db: Queryable, chainId: number): Promise<Map<Hex, FactoryScan>> {
  const { rows } = await db.query<{ factory: Hex; scanned_block: number; target_block: number }>(
    "SELECT factory, scanned_block, target_block FROM factory_scans WHERE chain_id = $1",
    [chainId],
  );
  return new Map(
    rows.map((r) => [r.factory, { scannedBlock: r.scanned_block, targetBlock: r.target_block }]),
  );
}

export async function saveFactoryScan(
  db: Queryable,
  chainId: number,
  factory: Hex,
  scan: FactoryScan,
): Promise<void> {
  await db.query(
    `INSERT INTO factory_scans (chain_id, factory, scanned_block, target_block) VALUES ($1, $2, $3, $4)
     ON CONFLICT (chain_id, factory) DO UPDATE SET scanned_block = EXCLUDED.scanned_block`,
    [chainId, factory, scan.scannedBlock, scan.targetBlock],
  );
}
