/**
 * Tables of the pricing's own state: `pool_price_state` (the pool states the pricing reads) and
 * `pricing_sync` (how far pricing has got per chain).
 */
import type { Hex, MarketPool, PoolPriceState, ProtocolName } from "../model/index.js";
import { fromNumeric, type Queryable } from "./db.js";
import { bulkInsert, columnsOf } from "./unnest.js";

// ---------------------------------------------------------------------------------------------
// pricing_sync

/** The last block the pricing processed for a chain; null before the first. */
export async function getPricedBlock(db: Queryable, chainId: number): Promise<number | null> {
  const { rows } = await db.query<{ priced_block: number }>(
    "SELECT priced_block FROM pricing_sync WHERE chain_id = $1",
    [chainId],
  );
  return rows[0]?.priced_block ?? null;
}

/** A chain's pricing_sync row: the priced block, the transaction that wrote it, how far the figures are. */
export type PricingSync = { block: number; writer: string; figuresBlock: number };

/**
 * The last priced block and the id of the transaction that wrote it (the row's `xmin`): the
 * in-memory market state is current only while both are what it last wrote itself, so a batch
 * whose transaction rolled back (or another writer's) is noticed at the next read.
 */
export async function getPricingSync(db: Queryable, chainId: number): Promise<PricingSync | null> {
  const { rows } = await db.query<{ priced_block: number; writer: string; figures_block: number }>(
    "SELECT priced_block, xmin::text AS writer, figures_block FROM pricing_sync WHERE chain_id = $1",
    [chainId],
  );
  const row = rows[0];
  return row ? { block: row.priced_block, writer: row.writer, figuresBlock: row.figures_block } : null;
}

/**
 * Sets the last priced block and the block as of which the market-wide figures are current
 * (`figuresBlock`: the same block when the batch refreshed them, else the one before; a new row
 * with figures left behind starts at -1); returns the writing transaction's id (see getPricingSync).
 */
export async function setPricedBlock(
  db: Queryable,
  chainId: number,
  block: number,
  figuresBlock: number | "unchanged" = block,
): Promise<string> {
  const { rows } = await db.query<{ writer: string }>(
    `INSERT INTO pricing_sync (chain_id, priced_block, figures_block) VALUES ($1, $2, coalesce($3::bigint, -1))
     ON CONFLICT (chain_id) DO UPDATE SET priced_block = EXCLUDED.priced_block,
       figures_block = coalesce($3::bigint, least(pricing_sync.figures_block, EXCLUDED.priced_block)),
       updated_at = now()
     RETURNING xmin::text AS writer`,
    [chainId, block, figuresBlock === "unchanged" ? null : figuresBlock],
  );
  return (rows[0] as { writer: string }).writer;
}

// ---------------------------------------------------------------------------------------------
// pool_price_state

const emptyState = (): PoolPriceState => ({
  reserve0: null,
  reserve1: null,
  sqrtPriceX96: null,
  swapBlock: null,
  preSwapReserve0: null,
  preSwapReserve1: null,
  stateBlock: null,
  stateLogIndex: null,
  stateTime: null,
});

/**
 * The pool_price_state row of each `p` (a pools row), looked up by its key row by row: OFFSET 0
 * keeps the planner from joining the whole table instead. With statistics that lagged the table
 * (332 rows estimated, 100,000 there), it read and sorted every row to merge-join 150 pools: 112 of
 * a batch's 150 ms at 100,000 pools (BENCHMARKS.md).
 */
export const poolStateJoin = `LEFT JOIN LATERAL (
       SELECT * FROM pool_price_state ps WHERE ps.chain_id = p.chain_id AND ps.pool = p.address OFFSET 0
     ) s ON true`;

/** The pool_price_state columns (table alias `s`) that make a pool's pricing state. */
export const poolStateColumns = `s.reserve0, s.reserve1, s.sqrt_price_x96, s.swap_block, s.pre_swap_reserve0, s.pre_swap_reserve1,
  s.state_block, s.state_log_index, s.state_time`;

/** The pool_price_state columns as the SQL row comes (numerics as text): parsed by poolStateOf. */
export type PoolStateDbRow = {
  reserve0: string | null;
  reserve1: string | null;
  sqrt_price_x96: string | null;
  swap_block: number | null;
  pre_swap_reserve0: string | null;
  pre_swap_reserve1: string | null;
  state_block: number | null;
  state_log_index: number | null;
  state_time: Date | null;
};

/** The pricing state of a pool_price_state row; null when the pool has none (no event yet). */
export function poolStateOf(r: PoolStateDbRow): PoolPriceState | null {
  if (r.state_block === null) return null;
  return {
    reserve0: fromNumeric(r.reserve0),
    reserve1: fromNumeric(r.reserve1),
    sqrtPriceX96: fromNumeric(r.sqrt_price_x96),
    swapBlock: r.swap_block,
    preSwapReserve0: fromNumeric(r.pre_swap_reserve0),
    preSwapReserve1: fromNumeric(r.pre_swap_reserve1),
    stateBlock: r.state_block,
    stateLogIndex: r.state_log_index,
    stateTime: r.state_time?.getTime() ?? null,
  };
}

export type MarketPoolsAndTokens = {
  pools: Map<string, MarketPool>;
  /** Decimals of every token of a pool (null: unknown). */
  decimals: Map<string, number | null>;
};

/**
 * Every pool of a chain (or those of `addresses`) with its pricing state (empty before its first
 * event), and their tokens' decimals.
 */
export async function loadMarketPools(
  db: Queryable,
  chainId: number,
  addresses?: readonly string[],
): Promise<MarketPoolsAndTokens> {
  const { rows } = await db.query<
    PoolStateDbRow & {
      address: Hex;
      dex: string;
      protocol: ProtocolName;
      hooks: Hex | null;
      parameters: Hex | null;
      token0: Hex;
      token1: Hex;
      decimals0: number | null;
      decimals1: number | null;
    }
  >(
    `SELECT p.address, p.dex, p.protocol, p.hooks, p.parameters, p.token0, p.token1, t0.decimals AS decimals0, t1.decimals AS decimals1,
       ${poolStateColumns}
     FROM pools p
     LEFT JOIN pool_price_state s ON s.chain_id = p.chain_id AND s.pool = p.address
     LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
     LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
     WHERE p.chain_id = $1 ${addresses ? "AND p.address = ANY($2::text[])" : ""}
     ORDER BY p.address`,
    addresses ? [chainId, addresses] : [chainId],
  );
  const pools = new Map<string, MarketPool>();
  const decimals = new Map<string, number | null>();
  for (const r of rows) {
    decimals.set(r.token0, r.decimals0);
    decimals.set(r.token1, r.decimals1);
    pools.set(r.address, {
      address: r.address,
      dex: r.dex,
      protocol: r.protocol,
      token0: r.token0,
      token1: r.token1,
      hooks: r.hooks,
      parameters: r.parameters,
      state: poolStateOf(r) ?? emptyState(),
    });
  }
  return { pools, decimals };
}

const POOL_STATE_COLUMNS = columnsOf<MarketPool>({
  pool: ["text", (p) => p.address],
  token0: ["text", (p) => p.token0],
  token1: ["text", (p) => p.token1],
  reserve0: ["numeric", (p) => p.state.reserve0],
  reserve1: ["numeric", (p) => p.state.reserve1],
  sqrt_price_x96: ["numeric", (p) => p.state.sqrtPriceX96],
  swap_block: ["bigint", (p) => p.state.swapBlock],
  pre_swap_reserve0: ["numeric", (p) => p.state.preSwapReserve0],
  pre_swap_reserve1: ["numeric", (p) => p.state.preSwapReserve1],
  state_block: ["bigint", (p) => p.state.stateBlock],
  state_log_index: ["int", (p) => p.state.stateLogIndex],
  // Only pools with a state are saved, and a state always has its time.
  state_time: ["timestamptz", (p) => new Date(p.state.stateTime as number)],
});

/** Saves the pricing state of pools (those with a state: after at least one event). */
export async function savePoolStates(
  db: Queryable,
  chainId: number,
  pools: readonly MarketPool[],
): Promise<void> {
  // A pool's tokens never change: rewriting them with the rest of the row leaves them as they were.
  await bulkInsert(
    db,
    { table: "pool_price_state", chainId, columns: POOL_STATE_COLUMNS, replaceOn: ["pool"] },
    pools.filter((p) => p.state.stateBlock !== null),
  );
}

/** Pools whose pricing state lies above `block` (they had events above it), with their tokens. */
export async function poolsWithStateAbove(
  db: Queryable,
  chainId: number,
  block: number,
): Promise<{ pool: string; token0: string; token1: string }[]> {
  const { rows } = await db.query<{ pool: string; token0: string; token1: string }>(
    "SELECT pool, token0, token1 FROM pool_price_state WHERE chain_id = $1 AND state_block > $2 ORDER BY pool",
    [chainId, block],
  );
  return rows;
}

export async function deletePoolStates(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<void> {
  if (pools.length === 0) return;
  await db.query("DELETE FROM pool_price_state WHERE chain_id = $1 AND pool = ANY($2::text[])", [
    chainId,
    pools,
  ]);
}
