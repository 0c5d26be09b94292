import type { Hex, Protocol } from "../decode/types.js";
import type { PoolInfo, PoolState, Token } from "../sync/pools.js";
import { fromNumeric, type Queryable, toNumeric } from "./db.js";
import { type Checkpoint, CheckpointConflictError } from "./ingest.js";

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

/** A stored pool with its base and latest state. */
export type StoredPool = PoolInfo & { base: PoolState | null; state: PoolState };

/** Every stored pool of a chain with its base and latest state. */
export async function loadPools(db: Queryable, chainId: number): Promise<StoredPool[]> {
  const { rows } = await db.query<Record<string, unknown>>("SELECT * FROM pools WHERE chain_id = $1", [
    chainId,
  ]);
  return rows.map((r) => ({
    address: r.address as Hex,
    dex: r.dex as string,
    protocol: r.protocol as Protocol,
    factory: r.factory as Hex,
    token0: r.token0 as Hex,
    token1: r.token1 as Hex,
    fee: r.fee as number | null,
    tickSpacing: r.tick_spacing as number | null,
    createdBlock: r.created_block as number,
    createdLogIndex: r.created_log_index as number,
    base:
      r.base_block === null
        ? null
        : {
            reserve0: fromNumeric(r.base_reserve0 as string | null),
            reserve1: fromNumeric(r.base_reserve1 as string | null),
            sqrtPriceX96: fromNumeric(r.base_sqrt_price_x96 as string | null),
            liquidity: fromNumeric(r.base_liquidity as string | null),
            tick: r.base_tick as number | null,
            block: r.base_block as number,
            logIndex: null,
          },
    state: {
      reserve0: fromNumeric(r.reserve0 as string | null),
      reserve1: fromNumeric(r.reserve1 as string | null),
      sqrtPriceX96: fromNumeric(r.sqrt_price_x96 as string | null),
      liquidity: fromNumeric(r.liquidity as string | null),
      tick: r.tick as number | null,
      block: r.state_block as number | null,
      logIndex: r.state_log_index as number | null,
    },
  }));
}

export type StoredToken = Token;

export async function loadTokens(db: Queryable, chainId: number): Promise<StoredToken[]> {
  const { rows } = await db.query<{
    address: Hex;
    name: string | null;
    symbol: string | null;
    decimals: number | null;
    total_supply: string | null;
  }>("SELECT address, name, symbol, decimals, total_supply FROM tokens WHERE chain_id = $1", [chainId]);
  return rows.map((r) => ({
    address: r.address,
    name: r.name,
    symbol: r.symbol,
    decimals: r.decimals,
    totalSupply: fromNumeric(r.total_supply),
  }));
}

/** Stored canonical blocks of a chain, highest first. */
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

export type FactoryScan = { scannedBlock: number; targetBlock: number };

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

/** Tokens whose totalSupply was read longer ago than `olderThanMs`, oldest first. */
export async function tokensDueForSupply(
  db: Queryable,
  chainId: number,
  olderThanMs: number,
  limit: number,
): Promise<Hex[]> {
  const { rows } = await db.query<{ address: Hex }>(
    `SELECT address FROM tokens WHERE chain_id = $1 AND (supply_at IS NULL OR supply_at < now() - make_interval(secs => $2))
     ORDER BY supply_at NULLS FIRST LIMIT $3`,
    [chainId, olderThanMs / 1000, limit],
  );
  return rows.map((r) => r.address);
}

export async function updateTokenSupplies(
  db: Queryable,
  chainId: number,
  supplies: readonly { address: Hex; totalSupply: bigint | null }[],
): Promise<void> {
  if (supplies.length === 0) return;
  await db.query(
    `UPDATE tokens t SET total_supply = COALESCE(s.supply, t.total_supply), supply_at = now()
     FROM unnest($2::text[], $3::numeric[]) AS s(address, supply)
     WHERE t.chain_id = $1 AND t.address = s.address`,
    [chainId, supplies.map((s) => s.address), supplies.map((s) => toNumeric(s.totalSupply))],
  );
}

/**
 * Deletes everything ingested above `ancestor` (swaps, pool events, blocks, pools created above
 * it and tokens no pool refers to any more), recomputes the latest state of the pools that lost
 * events from their latest remaining swap or pool event (their base state when none is left) and
 * lowers the checkpoint from `previous` to the ancestor. Run inside one transaction with the derived-data rollback.
 * Returns the pools whose state was recomputed.
 */
export async function rollbackAbove(
  client: Queryable,
  chainId: number,
  previous: number,
  ancestor: { block: number; hash: Hex; time: Date },
): Promise<{ affectedPools: Hex[]; deletedSwaps: number; deletedEvents: number }> {
  // First, to lock the chain's checkpoint row against a concurrent writer.
  const moved = await client.query(
    `UPDATE sync_state SET indexed_block = $3, indexed_block_hash = $4, indexed_block_time = $5, updated_at = now()
     WHERE chain_id = $1 AND indexed_block = $2`,
    [chainId, previous, ancestor.block, ancestor.hash, ancestor.time.toISOString()],
  );
  if (moved.rowCount !== 1) {
    throw new CheckpointConflictError(chainId, previous);
  }
  const swaps = await client.query<{ pool: Hex }>(
    "DELETE FROM swaps WHERE chain_id = $1 AND block_number > $2 RETURNING pool",
    [chainId, ancestor.block],
  );
  const events = await client.query<{ pool: Hex }>(
    "DELETE FROM pool_events WHERE chain_id = $1 AND block_number > $2 RETURNING pool",
    [chainId, ancestor.block],
  );
  await client.query("DELETE FROM pools WHERE chain_id = $1 AND created_block > $2", [
    chainId,
    ancestor.block,
  ]);
  await client.query(
    `DELETE FROM tokens t WHERE t.chain_id = $1 AND NOT EXISTS (
       SELECT 1 FROM pools p WHERE p.chain_id = t.chain_id AND (p.token0 = t.address OR p.token1 = t.address))`,
    [chainId],
  );
  const affected = [...new Set([...swaps.rows, ...events.rows].map((r) => r.pool))];
  if (affected.length > 0) {
    await client.query(
      `UPDATE pools p SET
         reserve0 = CASE WHEN l.block_number IS NULL THEN p.base_reserve0 ELSE l.reserve0 END,
         reserve1 = CASE WHEN l.block_number IS NULL THEN p.base_reserve1 ELSE l.reserve1 END,
         sqrt_price_x96 = CASE WHEN l.block_number IS NULL THEN p.base_sqrt_price_x96 ELSE l.sqrt_price_x96 END,
         liquidity = CASE WHEN l.block_number IS NULL THEN p.base_liquidity ELSE l.liquidity END,
         tick = CASE WHEN l.block_number IS NULL THEN p.base_tick ELSE l.tick END,
         state_block = CASE WHEN l.block_number IS NULL THEN p.base_block ELSE l.block_number END,
         state_log_index = l.log_index
       FROM unnest($2::text[]) AS a(address)
       LEFT JOIN LATERAL (
         SELECT * FROM (
           (SELECT block_number, log_index, reserve0, reserve1, sqrt_price_x96, liquidity, tick FROM swaps
             WHERE chain_id = $1 AND pool = a.address ORDER BY block_number DESC, log_index DESC LIMIT 1)
           UNION ALL
           (SELECT block_number, log_index, reserve0, reserve1, sqrt_price_x96, liquidity, tick FROM pool_events
             WHERE chain_id = $1 AND pool = a.address ORDER BY block_number DESC, log_index DESC LIMIT 1)
         ) latest ORDER BY block_number DESC, log_index DESC LIMIT 1
       ) l ON true
       WHERE p.chain_id = $1 AND p.address = a.address`,
      [chainId, affected],
    );
  }
  await client.query("DELETE FROM blocks WHERE chain_id = $1 AND number > $2", [chainId, ancestor.block]);
  return { affectedPools: affected, deletedSwaps: swaps.rowCount ?? 0, deletedEvents: events.rowCount ?? 0 };
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

/** The block of a pool's earliest stored swap or pool event; null when it has none. */
export async function firstStoredEventBlock(
  db: Queryable,
  chainId: number,
  pool: Hex,
): Promise<number | null> {
  const { rows } = await db.query<{ block: string | null }>(
    `SELECT least((SELECT min(block_number) FROM swaps WHERE chain_id = $1 AND pool = $2),
                  (SELECT min(block_number) FROM pool_events WHERE chain_id = $1 AND pool = $2)) AS block`,
    [chainId, pool],
  );
  const block = rows[0]?.block;
  return block === null || block === undefined ? null : Number(block);
}
