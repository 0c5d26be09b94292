import type { Hex } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import type { BatchPoolEvent, BatchSwap } from "../sync/derived.js";
import type { Pool, PoolState, Token } from "../sync/pools.js";
import { chunks, type Queryable, toNumeric } from "./db.js";

/** The checkpoint moved under us: another indexer writes this chain. The batch is rolled back. */
export class CheckpointConflictError extends BaseError {
  override name = "CheckpointConflictError";
  constructor(chainId: number, previous: number) {
    super(
      `chain ${chainId}: the checkpoint is no longer block ${previous}; another indexer is writing this chain`,
    );
  }
}

export type Checkpoint = { block: number; hash: Hex | null; time: Date | null };

export type SyncFigures = {
  headBlock: number | null;
  headBlockTime: Date | null;
  blocksPerSecond: number | null;
  swapsPerSecond: number | null;
};

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

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
      iso(args.next.time),
      f?.headBlock ?? null,
      iso(f?.headBlockTime ?? null),
      f?.blocksPerSecond ?? null,
      f?.swapsPerSecond ?? null,
    ],
  );
  if (result.rowCount !== 1) {
    throw new CheckpointConflictError(args.chainId, args.previous);
  }
}

/** Inserts tokens not stored yet (their metadata is read once). */
export async function insertTokens(
  client: Queryable,
  chainId: number,
  tokens: readonly Token[],
): Promise<Hex[]> {
  const inserted: Hex[] = [];
  for (const part of chunks(tokens)) {
    const { rows } = await client.query<{ address: Hex }>(
      `INSERT INTO tokens (chain_id, address, name, symbol, decimals, total_supply, metadata_at, supply_at)
       SELECT $1, t.address, t.name, t.symbol, t.decimals, t.total_supply, now(), now()
       FROM unnest($2::text[], $3::text[], $4::text[], $5::smallint[], $6::numeric[])
         AS t(address, name, symbol, decimals, total_supply)
       ON CONFLICT DO NOTHING RETURNING address`,
      [
        chainId,
        part.map((t) => t.address),
        part.map((t) => t.name),
        part.map((t) => t.symbol),
        part.map((t) => t.decimals),
        part.map((t) => toNumeric(t.totalSupply)),
      ],
    );
    for (const row of rows) inserted.push(row.address);
  }
  return inserted;
}

/** Inserts pools not stored yet, with their base state (which is also their state until their first event). */
export async function insertPools(
  client: Queryable,
  chainId: number,
  pools: readonly Pool[],
): Promise<Hex[]> {
  const inserted: Hex[] = [];
  for (const part of chunks(pools)) {
    const base = part.map((p) => p.base);
    const { rows } = await client.query<{ address: Hex }>(
      `INSERT INTO pools (chain_id, address, dex, protocol, factory, token0, token1, fee, tick_spacing,
         created_block, created_log_index, reserve0, reserve1, sqrt_price_x96, liquidity, tick, state_block,
         base_block, base_reserve0, base_reserve1, base_sqrt_price_x96, base_liquidity, base_tick)
       SELECT $1, p.address, p.dex, p.protocol, p.factory, p.token0, p.token1, p.fee, p.tick_spacing,
         p.created_block, p.created_log_index, p.r0, p.r1, p.sqrt, p.liq, p.tick, p.base_block,
         p.base_block, p.r0, p.r1, p.sqrt, p.liq, p.tick
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[],
         $10::bigint[], $11::int[], $12::bigint[], $13::numeric[], $14::numeric[], $15::numeric[], $16::numeric[], $17::int[])
         AS p(address, dex, protocol, factory, token0, token1, fee, tick_spacing, created_block, created_log_index,
              base_block, r0, r1, sqrt, liq, tick)
       ON CONFLICT DO NOTHING RETURNING address`,
      [
        chainId,
        part.map((p) => p.address),
        part.map((p) => p.dex),
        part.map((p) => p.protocol),
        part.map((p) => p.factory),
        part.map((p) => p.token0),
        part.map((p) => p.token1),
        part.map((p) => p.fee),
        part.map((p) => p.tickSpacing),
        part.map((p) => p.createdBlock),
        part.map((p) => p.createdLogIndex),
        base.map((b) => b?.block ?? null),
        base.map((b) => toNumeric(b?.reserve0 ?? null)),
        base.map((b) => toNumeric(b?.reserve1 ?? null)),
        base.map((b) => toNumeric(b?.sqrtPriceX96 ?? null)),
        base.map((b) => toNumeric(b?.liquidity ?? null)),
        base.map((b) => b?.tick ?? null),
      ],
    );
    for (const row of rows) inserted.push(row.address);
  }
  return inserted;
}

/** Records the base state read for pools that predate the start (their first indexed event is in this batch). */
export async function updatePoolBases(
  client: Queryable,
  chainId: number,
  pools: readonly Pool[],
): Promise<void> {
  for (const part of chunks(pools.filter((p) => p.base !== null))) {
    const base = part.map((p) => p.base as PoolState);
    await client.query(
      `UPDATE pools p SET base_block = b.block, base_reserve0 = b.r0, base_reserve1 = b.r1,
         base_sqrt_price_x96 = b.sqrt, base_liquidity = b.liq, base_tick = b.tick
       FROM unnest($2::text[], $3::bigint[], $4::numeric[], $5::numeric[], $6::numeric[], $7::numeric[], $8::int[])
         AS b(address, block, r0, r1, sqrt, liq, tick)
       WHERE p.chain_id = $1 AND p.address = b.address`,
      [
        chainId,
        part.map((p) => p.address),
        base.map((b) => b.block),
        base.map((b) => toNumeric(b.reserve0)),
        base.map((b) => toNumeric(b.reserve1)),
        base.map((b) => toNumeric(b.sqrtPriceX96)),
        base.map((b) => toNumeric(b.liquidity)),
        base.map((b) => b.tick),
      ],
    );
  }
}

/** Sets the latest state of pools that had events in the batch. */
export async function updatePoolStates(
  client: Queryable,
  chainId: number,
  states: ReadonlyMap<Hex, PoolState>,
): Promise<void> {
  for (const part of chunks([...states])) {
    await client.query(
      `UPDATE pools p SET reserve0 = s.r0, reserve1 = s.r1, sqrt_price_x96 = s.sqrt, liquidity = s.liq,
         tick = s.tick, state_block = s.block, state_log_index = s.log_index
       FROM unnest($2::text[], $3::numeric[], $4::numeric[], $5::numeric[], $6::numeric[], $7::int[], $8::bigint[], $9::int[])
         AS s(address, r0, r1, sqrt, liq, tick, block, log_index)
       WHERE p.chain_id = $1 AND p.address = s.address`,
      [
        chainId,
        part.map(([address]) => address),
        part.map(([, s]) => toNumeric(s.reserve0)),
        part.map(([, s]) => toNumeric(s.reserve1)),
        part.map(([, s]) => toNumeric(s.sqrtPriceX96)),
        part.map(([, s]) => toNumeric(s.liquidity)),
        part.map(([, s]) => s.tick),
        part.map(([, s]) => s.block),
        part.map(([, s]) => s.logIndex),
      ],
    );
  }
}

const key = (blockNumber: number, logIndex: number) => `${blockNumber}:${logIndex}`;

/** Inserts swaps (ON CONFLICT DO NOTHING on the natural key); returns those actually inserted. */
export async function insertSwaps(
  client: Queryable,
  chainId: number,
  swaps: readonly BatchSwap[],
): Promise<BatchSwap[]> {
  const inserted = new Set<string>();
  for (const part of chunks(swaps)) {
    const { rows } = await client.query<{ block_number: number; log_index: number }>(
      `INSERT INTO swaps (chain_id, block_number, log_index, block_hash, block_time, tx_hash, tx_index, pool, maker,
         exchange, sender, recipient, amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1,
         sqrt_price_x96, liquidity, tick, price)
       SELECT $1, * FROM unnest($2::bigint[], $3::int[], $4::text[], $5::timestamptz[], $6::text[], $7::int[],
         $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::numeric[], $14::numeric[], $15::numeric[],
         $16::numeric[], $17::numeric[], $18::numeric[], $19::numeric[], $20::numeric[], $21::int[], $22::float8[])
       ON CONFLICT DO NOTHING RETURNING block_number, log_index`,
      [
        chainId,
        part.map((s) => s.blockNumber),
        part.map((s) => s.logIndex),
        part.map((s) => s.blockHash),
        part.map((s) => s.blockTime.toISOString()),
        part.map((s) => s.txHash),
        part.map((s) => s.txIndex),
        part.map((s) => s.pool),
        part.map((s) => s.maker),
        part.map((s) => s.exchange),
        part.map((s) => s.sender),
        part.map((s) => s.recipient),
        part.map((s) => s.amount0In.toString()),
        part.map((s) => s.amount1In.toString()),
        part.map((s) => s.amount0Out.toString()),
        part.map((s) => s.amount1Out.toString()),
        part.map((s) => toNumeric(s.reserve0)),
        part.map((s) => toNumeric(s.reserve1)),
        part.map((s) => toNumeric(s.sqrtPriceX96)),
        part.map((s) => toNumeric(s.liquidity)),
        part.map((s) => s.tick),
        part.map((s) => s.price),
      ],
    );
    for (const row of rows) inserted.add(key(row.block_number, row.log_index));
  }
  return inserted.size === swaps.length
    ? [...swaps]
    : swaps.filter((s) => inserted.has(key(s.blockNumber, s.logIndex)));
}

/** Inserts pool events (ON CONFLICT DO NOTHING); returns those actually inserted. */
export async function insertPoolEvents(
  client: Queryable,
  chainId: number,
  events: readonly BatchPoolEvent[],
): Promise<BatchPoolEvent[]> {
  const inserted = new Set<string>();
  for (const part of chunks(events)) {
    const { rows } = await client.query<{ block_number: number; log_index: number }>(
      `INSERT INTO pool_events (chain_id, block_number, log_index, block_time, tx_hash, pool, kind, amount0, amount1,
         liquidity_delta, tick_lower, tick_upper, reserve0, reserve1, liquidity, sqrt_price_x96, tick)
       SELECT $1, * FROM unnest($2::bigint[], $3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::text[],
         $8::numeric[], $9::numeric[], $10::numeric[], $11::int[], $12::int[], $13::numeric[], $14::numeric[],
         $15::numeric[], $16::numeric[], $17::int[])
       ON CONFLICT DO NOTHING RETURNING block_number, log_index`,
      [
        chainId,
        part.map((e) => e.blockNumber),
        part.map((e) => e.logIndex),
        part.map((e) => e.blockTime.toISOString()),
        part.map((e) => e.txHash),
        part.map((e) => e.pool),
        part.map((e) => e.kind),
        part.map((e) => toNumeric(e.amount0)),
        part.map((e) => toNumeric(e.amount1)),
        part.map((e) => toNumeric(e.liquidityDelta)),
        part.map((e) => e.tickLower),
        part.map((e) => e.tickUpper),
        part.map((e) => toNumeric(e.reserve0)),
        part.map((e) => toNumeric(e.reserve1)),
        part.map((e) => toNumeric(e.liquidity)),
        part.map((e) => toNumeric(e.sqrtPriceX96)),
        part.map((e) => e.tick),
      ],
    );
    for (const row of rows) inserted.add(key(row.block_number, row.log_index));
  }
  return inserted.size === events.length
    ? [...events]
    : events.filter((e) => inserted.has(key(e.blockNumber, e.logIndex)));
}

export type BlockRow = { number: number; hash: Hex; parentHash: Hex; timestamp: number };

/**
 * Stores canonical block hashes and drops those below the kept window: after it, the chain's
 * stored blocks are the window (keepFrom, …] plus whatever is above.
 */
export async function storeBlocks(
  client: Queryable,
  chainId: number,
  blocks: readonly BlockRow[],
  keepFrom: number,
): Promise<void> {
  for (const part of chunks(blocks)) {
    await client.query(
      `INSERT INTO blocks (chain_id, number, hash, parent_hash, time)
       SELECT $1, b.number, b.hash, b.parent_hash, to_timestamp(b.ts)
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::float8[]) AS b(number, hash, parent_hash, ts)
       ON CONFLICT (chain_id, number) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, time = EXCLUDED.time`,
      [
        chainId,
        part.map((b) => b.number),
        part.map((b) => b.hash),
        part.map((b) => b.parentHash),
        part.map((b) => b.timestamp),
      ],
    );
  }
  await client.query("DELETE FROM blocks WHERE chain_id = $1 AND number <= $2", [chainId, keepFrom]);
}
