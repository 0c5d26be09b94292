/**
 * Table `swaps`: every swap with the pool's state after it and, once priced, its USD figures;
 * the pricing's reads of stored trades and the API's trade reads.
 */
import { type BatchSwap, finite, type Hex, type SwapAmounts, type SwapUsd } from "../model/index.js";
import { chunks, iso, maxOf, minOf, type Queryable } from "./db.js";
import { EVENT_COLUMNS, insertNewEvents } from "./log-events.js";
import { loadRetainedFrom } from "./partitions.js";
import { columnsOf, unnest } from "./unnest.js";

const SWAP_COLUMNS = columnsOf<BatchSwap>({
  ...EVENT_COLUMNS,
  block_hash: ["text", (s) => s.blockHash],
  tx_index: ["int", (s) => s.txIndex],
  maker: ["text", (s) => s.maker],
  exchange: ["text", (s) => s.exchange],
  sender: ["text", (s) => s.sender],
  recipient: ["text", (s) => s.recipient],
  amount0_in: ["numeric", (s) => s.amount0In],
  amount1_in: ["numeric", (s) => s.amount1In],
  amount0_out: ["numeric", (s) => s.amount0Out],
  amount1_out: ["numeric", (s) => s.amount1Out],
  price: ["float8", (s) => s.price],
});

type SwapWithUsd = BatchSwap & { usd: SwapUsd | undefined };

const SWAP_WITH_USD_COLUMNS = columnsOf<SwapWithUsd>({
  ...SWAP_COLUMNS,
  token0_usd: ["float8", (r) => finite(r.usd?.token0Usd ?? null)],
  token1_usd: ["float8", (r) => finite(r.usd?.token1Usd ?? null)],
  volume_usd: ["float8", (r) => finite(r.usd?.volumeUsd ?? null)],
  token0_series_usd: ["float8", (r) => finite(r.usd?.series0Usd ?? null)],
  token1_series_usd: ["float8", (r) => finite(r.usd?.series1Usd ?? null)],
});

/**
 * Inserts swaps not stored yet; returns those inserted. `usd`: a swap's USD figures, written
 * with its row (the pricing computed them before the insert), so that the row is written once.
 */
export async function insertSwaps(
  client: Queryable,
  chainId: number,
  swaps: readonly BatchSwap[],
  usd?: ((swap: BatchSwap) => SwapUsd | undefined) | null,
): Promise<BatchSwap[]> {
  const table = { table: "swaps", chainId };
  return usd
    ? insertNewEvents(client, { ...table, columns: SWAP_WITH_USD_COLUMNS }, swaps, (swap) => ({
        ...swap,
        usd: usd(swap),
      }))
    : insertNewEvents(client, { ...table, columns: SWAP_COLUMNS }, swaps, (swap) => swap);
}

/** Deletes the swaps above `block`; returns the pool of each deleted swap. */
export async function deleteSwapsAbove(client: Queryable, chainId: number, block: number): Promise<Hex[]> {
  const { rows } = await client.query<{ pool: Hex }>(
    "DELETE FROM swaps WHERE chain_id = $1 AND block_number > $2 RETURNING pool",
    [chainId, block],
  );
  return rows.map((r) => r.pool);
}

/**
 * The block that ends a catch-up chunk of about `rows` swaps after `fromBlockExclusive` (whole
 * blocks), capped at `toBlock`.
 */
export async function chunkEndBlock(
  db: Queryable,
  chainId: number,
  fromBlockExclusive: number,
  toBlock: number,
  rows: number,
): Promise<number> {
  const { rows: found } = await db.query<{ block_number: number }>(
    `SELECT block_number FROM swaps WHERE chain_id = $1 AND block_number > $2 AND block_number <= $3
     ORDER BY block_number, log_index OFFSET $4 LIMIT 1`,
    [chainId, fromBlockExclusive, toBlock, rows],
  );
  return found[0]?.block_number ?? toBlock;
}

// ---------------------------------------------------------------------------------------------
// Stored trades (the rebuilds of candles and series)

/** A stored swap as the rebuilds need it: amounts, decimals and the stored USD figures (prices included). */
export type StoredTrade = SwapAmounts &
  SwapUsd & {
    pool: string;
    token0: string;
    token1: string;
    decimals0: number | null;
    decimals1: number | null;
    blockNumber: number;
    logIndex: number;
    time: number;
  };

/** The raw amount columns of a swaps row (numeric, as text). */
export type RawAmountsRow = {
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
};

/** The amounts of a swaps row. */
export const swapAmountsOf = (r: RawAmountsRow): SwapAmounts => ({
  amount0In: BigInt(r.amount0_in),
  amount1In: BigInt(r.amount1_in),
  amount0Out: BigInt(r.amount0_out),
  amount1Out: BigInt(r.amount1_out),
});

type StoredTradeRow = RawAmountsRow & {
  pool: string;
  token0: string;
  token1: string;
  decimals0: number | null;
  decimals1: number | null;
  block_number: number;
  log_index: number;
  block_time: Date;
  token0_usd: number | null;
  token1_usd: number | null;
  volume_usd: number | null;
  token0_series_usd: number | null;
  token1_series_usd: number | null;
};

const storedTradeColumns = `s.pool, p.token0, p.token1, t0.decimals AS decimals0, t1.decimals AS decimals1,
  s.block_number, s.log_index, s.block_time, s.amount0_in, s.amount1_in, s.amount0_out, s.amount1_out,
  s.token0_usd, s.token1_usd, s.volume_usd, s.token0_series_usd, s.token1_series_usd`;

const storedTradeJoins = `JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
  LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
  LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1`;

function toStoredTrade(r: StoredTradeRow): StoredTrade {
  return {
    pool: r.pool,
    token0: r.token0,
    token1: r.token1,
    decimals0: r.decimals0,
    decimals1: r.decimals1,
    blockNumber: r.block_number,
    logIndex: r.log_index,
    time: r.block_time.getTime(),
    ...swapAmountsOf(r),
    token0Usd: r.token0_usd,
    token1Usd: r.token1_usd,
    volumeUsd: r.volume_usd,
    series0Usd: r.token0_series_usd,
    series1Usd: r.token1_series_usd,
  };
}

/** Where a pool's rebuild starts: its first block, and the earliest time of a trade it needs (ms). */
type PoolFrom = { pool: string; fromBlock: number; fromTime: number };

const POOL_FROM_COLUMNS = columnsOf<PoolFrom>({
  pool: ["text", (f) => f.pool],
  from_block: ["bigint", (f) => f.fromBlock],
  from_time: ["timestamptz", (f) => new Date(f.fromTime)],
});

/**
 * Swaps of each pool from its block and time on, up to `toBlock`, ascending (per pool). The times
 * (the start of the earliest bucket a rebuild needs) keep the read to the partitions of those days.
 */
export async function loadPoolTrades(
  db: Queryable,
  chainId: number,
  from: readonly PoolFrom[],
  toBlock: number,
): Promise<StoredTrade[]> {
  if (from.length === 0) return [];
  const a = unnest("a", POOL_FROM_COLUMNS, from, 4);
  const { rows } = await db.query<StoredTradeRow>(
    `SELECT ${storedTradeColumns}
     FROM ${a.sql}
     JOIN swaps s ON s.chain_id = $1 AND s.pool = a.pool AND s.block_number >= a.from_block AND s.block_number <= $2
       AND s.block_time >= a.from_time AND s.block_time >= $3
     ${storedTradeJoins}
     ORDER BY s.pool, s.block_number, s.log_index`,
    [chainId, toBlock, iso(minOf(from.map((f) => f.fromTime))), ...a.params],
  );
  return rows.map(toStoredTrade);
}

/**
 * Swaps of blocks [fromBlock, toBlock] at or after `fromTime` (ms) that enter a USD series of one
 * of `tokens`, ascending.
 */
export async function loadSeriesTrades(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  from: { block: number; time: number },
  toBlock: number,
): Promise<StoredTrade[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<StoredTradeRow>(
    `SELECT ${storedTradeColumns}
     FROM swaps s ${storedTradeJoins}
     WHERE s.chain_id = $1 AND s.block_number >= $2 AND s.block_number <= $3 AND s.block_time >= $5
       AND ((s.token0_series_usd IS NOT NULL AND p.token0 = ANY($4::text[]))
         OR (s.token1_series_usd IS NOT NULL AND p.token1 = ANY($4::text[])))
     ORDER BY s.block_number, s.log_index`,
    [chainId, from.block, toBlock, [...tokens], iso(from.time)],
  );
  return rows.map(toStoredTrade);
}

/** The USD figures of a stored swap, with the swap's key, as the pricing writes them. */
export type SwapUsdUpdate = SwapUsd & {
  blockNumber: number;
  logIndex: number;
  /** The swap's block time (ms): part of the swaps' key, and what prunes the update to its partitions. */
  time: number;
};

const SWAP_USD_COLUMNS = columnsOf<SwapUsdUpdate>({
  block_number: ["bigint", (s) => s.blockNumber],
  log_index: ["int", (s) => s.logIndex],
  block_time: ["timestamptz", (s) => new Date(s.time)],
  t0: ["float8", (s) => finite(s.token0Usd)],
  t1: ["float8", (s) => finite(s.token1Usd)],
  v: ["float8", (s) => finite(s.volumeUsd)],
  s0: ["float8", (s) => finite(s.series0Usd)],
  s1: ["float8", (s) => finite(s.series1Usd)],
});

/**
 * Writes the USD figures of swaps. The statement's time bounds (the chunk's earliest and latest
 * swap) let the planner keep only the partitions of those days.
 */
export async function saveSwapUsd(
  db: Queryable,
  chainId: number,
  swaps: readonly SwapUsdUpdate[],
): Promise<void> {
  for (const part of chunks(swaps)) {
    const times = part.map((s) => s.time);
    const u = unnest("u", SWAP_USD_COLUMNS, part, 4);
    await db.query(
      `UPDATE swaps s SET token0_usd = u.t0, token1_usd = u.t1, volume_usd = u.v,
         token0_series_usd = u.s0, token1_series_usd = u.s1
       FROM ${u.sql}
       WHERE s.chain_id = $1 AND s.block_time >= $2 AND s.block_time <= $3
         AND s.block_number = u.block_number AND s.log_index = u.log_index AND s.block_time = u.block_time`,
      [chainId, iso(minOf(times)), iso(maxOf(times)), ...u.params],
    );
  }
}

// ---------------------------------------------------------------------------------------------
// API reads

/** A swap as the trade records need it; raw amounts and reserves are numeric text. */
export type SwapRow = RawAmountsRow & {
  block_number: number;
  log_index: number;
  block_time: Date;
  tx_hash: string;
  maker: string | null;
  exchange: string | null;
  reserve0: string | null;
  reserve1: string | null;
  token0_usd: number | null;
  token1_usd: number | null;
  volume_usd: number | null;
};

/**
 * Position of a trade in the newest-first order: (block, log index), and the time of its block
 * (ms) when known, which bounds the next page to the partitions at or before it.
 */
export type TradePosition = { block: number; logIndex: number; time?: number | undefined };

const DAY = 86_400_000;
/** The first window of a trades page: a day back from the cursor's time (or now). */
const FIRST_WINDOW = DAY;
/** A window that would reach further back than this from the first one's end gives way to the rest. */
const WIDEST_WINDOW = 64 * DAY;

/**
 * The first window of a trades page (ms; null: the whole history at once). A day, or, when the
 * pool's trades of the last 24 hours are known, twice the time that rate takes to fill the page:
 * a quiet pool's page then takes one statement rather than a day's and then the rest's.
 */
function firstWindow(limit: number, tradesPerDay: number | null | undefined): number | null {
  if (tradesPerDay === null || tradesPerDay === undefined) return FIRST_WINDOW;
  if (tradesPerDay <= 0) return null;
  const width = Math.max(FIRST_WINDOW, (2 * DAY * limit) / tradesPerDay);
  return width > WIDEST_WINDOW ? null : width;
}

const SWAP_ROW_COLUMNS = `block_number, log_index, block_time, tx_hash, maker, exchange,
  amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1,
  token0_usd, token1_usd, volume_usd`;

/**
 * Swaps of one pool, newest first by (block, log index), strictly older than `before` when given;
 * none older than the swaps' retention (`retained_from`). Read in time windows back from the
 * cursor's block time (or now), so that each statement is planned and run over a few partitions
 * only, with the index swaps_pool_idx (chain_id, pool, block_number DESC, log_index DESC) of each:
 * first a day (or what the pool's recent rate says a page takes, firstWindow), which fills most
 * pages of an active pool from one or two partitions; then a window sized from the trades found
 * so far (twice the time they suggest the rest of the page takes),
 * and at least as wide as all the windows before it, so that a pool whose trades thin out (dense
 * lately, sparse before) takes a few doubling statements rather than one a day; the rest of the
 * history at once when that would reach more than 64 days back or nothing was found (a quiet
 * pool: one statement over the older partitions rather than many small ones).
 *
 * The windows rest on the chain's own rule that a block's time is never below its parent's: the
 * trades before (block, log index) lie at or before that block's time, and an older window's
 * trades all come before a newer one's. `before.time` (the cursor's) bounds the first window
 * from above; without it the first window reaches up to any time.
 */
export async function findSwaps(
  db: Queryable,
  options: {
    chainId: number;
    pool: string;
    before: TradePosition | null;
    limit: number;
    now?: number;
    /** The pool's trades in the last 24 hours, when known: sizes the first window (firstWindow). */
    tradesPerDay?: number | null | undefined;
  },
): Promise<SwapRow[]> {
  const { before } = options;
  const upper = before?.time ?? null;
  const base = upper ?? options.now ?? Date.now();
  const retainedSince = (await loadRetainedFrom(db)).get("swaps") ?? null;
  const rows: SwapRow[] = [];
  let newer: number | null = null;
  const first = firstWindow(options.limit, options.tradesPerDay);
  let lower: number | null = first === null ? null : base - first;
  for (;;) {
    // Never below the retention's start: rows there are leftovers of a partition being dropped.
    const since: number | null =
      retainedSince !== null && (lower === null || lower < retainedSince) ? retainedSince : lower;
    if (newer !== null && since !== null && since >= newer) break;
    const { rows: found } = await db.query<SwapRow>(
      `SELECT ${SWAP_ROW_COLUMNS}
       FROM swaps
       WHERE chain_id = $1 AND pool = $2
         AND ($3::bigint IS NULL OR (block_number, log_index) < ($3::bigint, $4::int))
         AND ($5::timestamptz IS NULL OR block_time >= $5) AND ($6::timestamptz IS NULL OR block_time < $6)
         AND ($7::timestamptz IS NULL OR block_time <= $7)
       ORDER BY block_number DESC, log_index DESC
       LIMIT $8`,
      [
        options.chainId,
        options.pool,
        before?.block ?? null,
        before?.logIndex ?? null,
        since === null ? null : iso(since),
        newer === null ? null : iso(newer),
        upper === null ? null : iso(upper),
        options.limit - rows.length,
      ],
    );
    rows.push(...found);
    if (rows.length >= options.limit || since === null || since === retainedSince) break;
    newer = since;
    const covered: number = base - since;
    const span =
      rows.length === 0
        ? Number.POSITIVE_INFINITY
        : (2 * covered * (options.limit - rows.length)) / rows.length;
    const width = Math.max(span, FIRST_WINDOW, covered);
    lower = covered + width > WIDEST_WINDOW ? null : since - width;
  }
  return rows;
}

/** Where a pool's reading resumes: after this (block, log index). */
export type PoolCursor = { pool: string; after: TradePosition };

const CURSOR_COLUMNS = columnsOf<PoolCursor>({
  pool: ["text", (c) => c.pool],
  block: ["bigint", (c) => c.after.block],
  log_index: ["int", (c) => c.after.logIndex],
});

/**
 * The swaps of several pools, each strictly after its cursor by (block, log index), oldest first
 * per pool, at most `limit` per pool: the stream's read of what a commit added to every pair it
 * follows, in one statement (index swaps_pool_idx, one range per pool).
 */
export async function findSwapsAfter(
  db: Queryable,
  options: { chainId: number; cursors: readonly PoolCursor[]; limit: number },
): Promise<Map<string, SwapRow[]>> {
  const out = new Map<string, SwapRow[]>(options.cursors.map((c) => [c.pool, []]));
  if (options.cursors.length === 0) return out;
  const c = unnest("c", CURSOR_COLUMNS, options.cursors, 3);
  const { rows } = await db.query<SwapRow & { cursor_pool: string }>(
    `SELECT c.pool AS cursor_pool, s.*
     FROM ${c.sql}
     CROSS JOIN LATERAL (
       SELECT ${SWAP_ROW_COLUMNS}
       FROM swaps
       WHERE chain_id = $1 AND pool = c.pool AND (block_number, log_index) > (c.block, c.log_index)
       ORDER BY block_number, log_index
       LIMIT $2
     ) s
     ORDER BY c.pool, s.block_number, s.log_index`,
    [options.chainId, options.limit, ...c.params],
  );
  for (const { cursor_pool, ...row } of rows) out.get(cursor_pool)?.push(row);
  return out;
}

/** The newest swap of each pool (absent: none), in one statement. */
export async function findLatestSwaps(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<Map<string, { position: TradePosition; time: Date }>> {
  if (pools.length === 0) return new Map();
  const { rows } = await db.query<{
    pool: string;
    block_number: number;
    log_index: number;
    block_time: Date;
  }>(
    `SELECT p.pool, s.block_number, s.log_index, s.block_time
     FROM unnest($2::text[]) AS p(pool)
     CROSS JOIN LATERAL (
       SELECT block_number, log_index, block_time FROM swaps
       WHERE chain_id = $1 AND pool = p.pool
       ORDER BY block_number DESC, log_index DESC
       LIMIT 1
     ) s`,
    [chainId, [...pools]],
  );
  return new Map(
    rows.map((r) => [
      r.pool,
      { position: { block: Number(r.block_number), logIndex: r.log_index }, time: r.block_time },
    ]),
  );
}
