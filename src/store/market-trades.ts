/**
 * Reads of table `swaps` for the market windows: the priced trades to fold into the buckets and
 * maker rows, the rebuilds after a rollback, and the pools that traded in given time ranges.
 */
import type { WindowTrade } from "../model/index.js";
import { iso, type Queryable } from "./db.js";
import { type RawAmountsRow, swapAmountsOf } from "./swaps.js";
import { columnsOf, unnest } from "./unnest.js";

type Row = RawAmountsRow & {
  pool: string;
  token0: string;
  token1: string;
  block_number: number;
  log_index: number;
  block_time: Date;
  maker: string | null;
  price: number | null;
  volume_usd: number | null;
  token0_series_usd: number | null;
  token1_series_usd: number | null;
};

const COLUMNS = `s.pool, p.token0, p.token1, s.block_number, s.log_index, s.block_time, s.maker, s.price,
  s.volume_usd, s.token0_series_usd, s.token1_series_usd, s.amount0_in, s.amount1_in, s.amount0_out, s.amount1_out`;

const toTrade = (r: Row): WindowTrade => ({
  pool: r.pool,
  token0: r.token0,
  token1: r.token1,
  blockNumber: r.block_number,
  logIndex: r.log_index,
  time: r.block_time.getTime(),
  maker: r.maker,
  price: r.price,
  volumeUsd: r.volume_usd,
  series0Usd: r.token0_series_usd,
  series1Usd: r.token1_series_usd,
  ...swapAmountsOf(r),
});

/** The swaps of blocks (fromExclusive, toBlock], ascending by block and log index. */
export async function loadWindowTrades(
  db: Queryable,
  chainId: number,
  fromExclusive: number,
  toBlock: number,
): Promise<WindowTrade[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS}
     FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
     WHERE s.chain_id = $1 AND s.block_number > $2 AND s.block_number <= $3
     ORDER BY s.block_number, s.log_index`,
    [chainId, fromExclusive, toBlock],
  );
  return rows.map(toTrade);
}

type PoolFrom = { pool: string; fromBlock: number };
const POOL_FROM = columnsOf<PoolFrom>({
  pool: ["text", (f) => f.pool],
  from_block: ["bigint", (f) => f.fromBlock],
});

/** The swaps of each pool from its block on, up to `toBlock`, ascending. */
export async function loadPoolWindowTrades(
  db: Queryable,
  chainId: number,
  from: readonly PoolFrom[],
  toBlock: number,
): Promise<WindowTrade[]> {
  if (from.length === 0) return [];
  const a = unnest("a", POOL_FROM, from, 3);
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS}
     FROM ${a.sql}
     JOIN swaps s ON s.chain_id = $1 AND s.pool = a.pool AND s.block_number >= a.from_block AND s.block_number <= $2
     JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
     ORDER BY s.block_number, s.log_index`,
    [chainId, toBlock, ...a.params],
  );
  return rows.map(toTrade);
}

/** The swaps of blocks [fromBlock, toBlock] in pools holding one of `tokens`, ascending. */
export async function loadTokenWindowTrades(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  fromBlock: number,
  toBlock: number,
): Promise<WindowTrade[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS}
     FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
     WHERE s.chain_id = $1 AND s.block_number >= $2 AND s.block_number <= $3
       AND (p.token0 = ANY($4::text[]) OR p.token1 = ANY($4::text[]))
     ORDER BY s.block_number, s.log_index`,
    [chainId, fromBlock, toBlock, [...tokens]],
  );
  return rows.map(toTrade);
}

/**
 * For (pool, maker) pairs: the maker's latest swap in the pool among blocks [fromBlock, toBlock]
 * (pairs without one are left out).
 */
export async function lastMakerSwaps(
  db: Queryable,
  chainId: number,
  pairs: readonly { pool: string; maker: string }[],
  fromBlock: number,
  toBlock: number,
): Promise<{ pool: string; maker: string; time: number; block: number }[]> {
  if (pairs.length === 0) return [];
  const { rows } = await db.query<{ pool: string; maker: string; block_time: Date; block_number: number }>(
    `SELECT DISTINCT ON (s.pool, s.maker) s.pool, s.maker, s.block_time, s.block_number
     FROM swaps s
     JOIN unnest($4::text[], $5::text[]) AS w(pool, maker) ON w.pool = s.pool AND w.maker = s.maker
     WHERE s.chain_id = $1 AND s.pool = ANY($4::text[]) AND s.block_number >= $2 AND s.block_number <= $3
     ORDER BY s.pool, s.maker, s.block_number DESC, s.log_index DESC`,
    [chainId, fromBlock, toBlock, pairs.map((p) => p.pool), pairs.map((p) => p.maker)],
  );
  return rows.map((r) => ({
    pool: r.pool,
    maker: r.maker,
    time: r.block_time.getTime(),
    block: r.block_number,
  }));
}

/** The first block of the chain with a swap at or after `time` (ms); null when none. */
export async function firstSwapBlockFrom(
  db: Queryable,
  chainId: number,
  time: number,
): Promise<number | null> {
  const { rows } = await db.query<{ block_number: number }>(
    `SELECT block_number FROM swaps WHERE chain_id = $1 AND block_time >= $2
     ORDER BY block_time, block_number LIMIT 1`,
    [chainId, iso(time)],
  );
  return rows[0]?.block_number ?? null;
}

/** The pools (and their tokens) with a swap whose block time lies in one of `ranges` ([from, to), ms). */
export async function poolsTradedIn(
  db: Queryable,
  chainId: number,
  ranges: readonly { from: number; to: number }[],
): Promise<{ pool: string; token0: string; token1: string }[]> {
  if (ranges.length === 0) return [];
  const { rows } = await db.query<{ pool: string; token0: string; token1: string }>(
    `SELECT p.address AS pool, p.token0, p.token1 FROM pools p
     WHERE p.chain_id = $1 AND p.address IN (
       SELECT DISTINCT s.pool FROM unnest($2::timestamptz[], $3::timestamptz[]) AS r(t0, t1)
       JOIN swaps s ON s.chain_id = $1 AND s.block_time >= r.t0 AND s.block_time < r.t1)`,
    [chainId, ranges.map((r) => iso(r.from)), ranges.map((r) => iso(r.to))],
  );
  return rows;
}
