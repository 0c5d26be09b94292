/**
 * SQL of the pricing stage: reads of what the indexer stored and writes of the derived market
 * data (prices, candles, series, statistics). No maths here: src/pricing folds and prices.
 */
import type { Candle } from "../pricing/candles.js";
import type { PoolState, StateEvent } from "../pricing/pool-state.js";
import type { MarketEvent, MarketPool } from "../pricing/price-blocks.js";
import type { SeriesCandle } from "../pricing/series.js";
import type { SwapAmounts } from "../pricing/trade.js";
import { chunks, fromNumeric, type Queryable, toNumeric } from "./db.js";

const finite = (v: number | null): number | null => (v !== null && Number.isFinite(v) ? v : null);
const iso = (ms: number) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------
// Progress

/** The last block the pricing processed for a chain; null before the first. */
export async function getPricedBlock(db: Queryable, chainId: number): Promise<number | null> {
  const { rows } = await db.query<{ priced_block: number }>(
    "SELECT priced_block FROM pricing_sync WHERE chain_id = $1",
    [chainId],
  );
  return rows[0]?.priced_block ?? null;
}

export async function setPricedBlock(db: Queryable, chainId: number, block: number): Promise<void> {
  await db.query(
    `INSERT INTO pricing_sync (chain_id, priced_block) VALUES ($1, $2)
     ON CONFLICT (chain_id) DO UPDATE SET priced_block = EXCLUDED.priced_block, updated_at = now()`,
    [chainId, block],
  );
}

// ---------------------------------------------------------------------------------------------
// Pools and events

export type MarketPoolsAndTokens = {
  pools: Map<string, MarketPool>;
  /** Decimals of every token of a pool (null: unknown). */
  decimals: Map<string, number | null>;
};

const emptyState = (): PoolState => ({
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

/** The pool_price_state columns (table alias `s`) that make a pool's pricing state. */
const poolStateColumns = `s.reserve0, s.reserve1, s.sqrt_price_x96, s.swap_block, s.pre_swap_reserve0, s.pre_swap_reserve1,
  s.state_block, s.state_log_index, s.state_time`;

type PoolStateDbRow = {
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
function poolStateOf(r: PoolStateDbRow): PoolState | null {
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

/** Every pool of a chain with its pricing state (empty before its first event), and token decimals. */
export async function loadMarketPools(db: Queryable, chainId: number): Promise<MarketPoolsAndTokens> {
  const { rows } = await db.query<
    PoolStateDbRow & {
      address: string;
      dex: string;
      protocol: "v2" | "v3";
      token0: string;
      token1: string;
      decimals0: number | null;
      decimals1: number | null;
    }
  >(
    `SELECT p.address, p.dex, p.protocol, p.token0, p.token1, t0.decimals AS decimals0, t1.decimals AS decimals1,
       ${poolStateColumns}
     FROM pools p
     LEFT JOIN pool_price_state s ON s.chain_id = p.chain_id AND s.pool = p.address
     LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
     LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
     WHERE p.chain_id = $1
     ORDER BY p.address`,
    [chainId],
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
      state: poolStateOf(r) ?? emptyState(),
    });
  }
  return { pools, decimals };
}

/** Saves the pricing state of pools (those with a state: after at least one event). */
export async function savePoolStates(
  db: Queryable,
  chainId: number,
  pools: readonly MarketPool[],
): Promise<void> {
  const withState = pools.filter((p) => p.state.stateBlock !== null);
  for (const part of chunks(withState)) {
    const s = part.map((p) => p.state);
    await db.query(
      `INSERT INTO pool_price_state (chain_id, pool, token0, token1, reserve0, reserve1, sqrt_price_x96, swap_block,
         pre_swap_reserve0, pre_swap_reserve1, state_block, state_log_index, state_time)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::numeric[], $7::numeric[],
         $8::bigint[], $9::numeric[], $10::numeric[], $11::bigint[], $12::int[], $13::timestamptz[])
       ON CONFLICT (chain_id, pool) DO UPDATE SET reserve0 = EXCLUDED.reserve0, reserve1 = EXCLUDED.reserve1,
         sqrt_price_x96 = EXCLUDED.sqrt_price_x96, swap_block = EXCLUDED.swap_block,
         pre_swap_reserve0 = EXCLUDED.pre_swap_reserve0, pre_swap_reserve1 = EXCLUDED.pre_swap_reserve1,
         state_block = EXCLUDED.state_block, state_log_index = EXCLUDED.state_log_index, state_time = EXCLUDED.state_time`,
      [
        chainId,
        part.map((p) => p.address),
        part.map((p) => p.token0),
        part.map((p) => p.token1),
        s.map((x) => toNumeric(x.reserve0)),
        s.map((x) => toNumeric(x.reserve1)),
        s.map((x) => toNumeric(x.sqrtPriceX96)),
        s.map((x) => x.swapBlock),
        s.map((x) => toNumeric(x.preSwapReserve0)),
        s.map((x) => toNumeric(x.preSwapReserve1)),
        s.map((x) => x.stateBlock),
        s.map((x) => x.stateLogIndex),
        s.map((x) => iso(x.stateTime as number)),
      ],
    );
  }
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

/** What a pool's pricing state at a block is rebuilt from (see loadPoolStatesAt). */
export type PoolStateAt = {
  /** The pool's latest swap or pool event at or below the block; null when it has none. */
  latest: StateEvent | null;
  /** The first swap of the pool's latest block with swaps, with the balances after it. */
  firstSwapOfLastSwapBlock:
    | ({ blockNumber: number; reserve0: bigint | null; reserve1: bigint | null } & SwapAmounts)
    | null;
};

/** The state of pools after their latest event at or below `block`, read from swaps and pool_events. */
export async function loadPoolStatesAt(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
  block: number,
): Promise<Map<string, PoolStateAt>> {
  const { rows } = await db.query<{
    pool: string;
    block_number: number | null;
    log_index: number | null;
    block_time: Date | null;
    reserve0: string | null;
    reserve1: string | null;
    sqrt_price_x96: string | null;
    swap_block: number | null;
    swap_reserve0: string | null;
    swap_reserve1: string | null;
    amount0_in: string | null;
    amount1_in: string | null;
    amount0_out: string | null;
    amount1_out: string | null;
  }>(
    `SELECT a.pool, l.block_number, l.log_index, l.block_time, l.reserve0, l.reserve1, l.sqrt_price_x96,
       f.block_number AS swap_block, f.reserve0 AS swap_reserve0, f.reserve1 AS swap_reserve1,
       f.amount0_in, f.amount1_in, f.amount0_out, f.amount1_out
     FROM unnest($2::text[]) AS a(pool)
     LEFT JOIN LATERAL (
       SELECT * FROM (
         (SELECT block_number, log_index, block_time, reserve0, reserve1, sqrt_price_x96 FROM swaps
           WHERE chain_id = $1 AND pool = a.pool AND block_number <= $3 ORDER BY block_number DESC, log_index DESC LIMIT 1)
         UNION ALL
         (SELECT block_number, log_index, block_time, reserve0, reserve1, sqrt_price_x96 FROM pool_events
           WHERE chain_id = $1 AND pool = a.pool AND block_number <= $3 ORDER BY block_number DESC, log_index DESC LIMIT 1)
       ) latest ORDER BY block_number DESC, log_index DESC LIMIT 1
     ) l ON true
     LEFT JOIN LATERAL (
       SELECT block_number FROM swaps WHERE chain_id = $1 AND pool = a.pool AND block_number <= $3
       ORDER BY block_number DESC, log_index DESC LIMIT 1
     ) sb ON true
     LEFT JOIN LATERAL (
       SELECT block_number, reserve0, reserve1, amount0_in, amount1_in, amount0_out, amount1_out FROM swaps
       WHERE chain_id = $1 AND pool = a.pool AND block_number = sb.block_number
       ORDER BY block_number, log_index LIMIT 1
     ) f ON true`,
    [chainId, [...pools], block],
  );
  return new Map(
    rows.map((r) => [
      r.pool,
      {
        latest:
          r.block_number === null
            ? null
            : {
                blockNumber: r.block_number,
                logIndex: r.log_index as number,
                time: (r.block_time as Date).getTime(),
                reserve0: fromNumeric(r.reserve0),
                reserve1: fromNumeric(r.reserve1),
                sqrtPriceX96: fromNumeric(r.sqrt_price_x96),
              },
        firstSwapOfLastSwapBlock:
          r.swap_block === null
            ? null
            : {
                blockNumber: r.swap_block,
                reserve0: fromNumeric(r.swap_reserve0),
                reserve1: fromNumeric(r.swap_reserve1),
                amount0In: BigInt(r.amount0_in as string),
                amount1In: BigInt(r.amount1_in as string),
                amount0Out: BigInt(r.amount0_out as string),
                amount1Out: BigInt(r.amount1_out as string),
              },
      },
    ]),
  );
}

/** The columns of a swaps or pool_events row that place the event and hold the pool's state after it. */
type StoredEventRow = {
  block_number: number;
  log_index: number;
  block_time: Date;
  pool: string;
  reserve0: string | null;
  reserve1: string | null;
  sqrt_price_x96: string | null;
};

const toMarketEvent = (r: StoredEventRow, swap: SwapAmounts | null): MarketEvent => ({
  pool: r.pool,
  blockNumber: r.block_number,
  logIndex: r.log_index,
  time: r.block_time.getTime(),
  reserve0: fromNumeric(r.reserve0),
  reserve1: fromNumeric(r.reserve1),
  sqrtPriceX96: fromNumeric(r.sqrt_price_x96),
  swap,
});

/** Swaps and pool events of blocks (fromBlock, toBlock], ascending by block and log index. */
export async function loadMarketEvents(
  db: Queryable,
  chainId: number,
  fromBlockExclusive: number,
  toBlock: number,
): Promise<MarketEvent[]> {
  const swaps = await db.query<
    StoredEventRow & { amount0_in: string; amount1_in: string; amount0_out: string; amount1_out: string }
  >(
    `SELECT block_number, log_index, block_time, pool, amount0_in, amount1_in, amount0_out, amount1_out,
       reserve0, reserve1, sqrt_price_x96
     FROM swaps WHERE chain_id = $1 AND block_number > $2 AND block_number <= $3
     ORDER BY block_number, log_index`,
    [chainId, fromBlockExclusive, toBlock],
  );
  const events = await db.query<StoredEventRow>(
    `SELECT block_number, log_index, block_time, pool, reserve0, reserve1, sqrt_price_x96
     FROM pool_events WHERE chain_id = $1 AND block_number > $2 AND block_number <= $3
     ORDER BY block_number, log_index`,
    [chainId, fromBlockExclusive, toBlock],
  );
  const out: MarketEvent[] = [
    ...swaps.rows.map((r) =>
      toMarketEvent(r, {
        amount0In: BigInt(r.amount0_in),
        amount1In: BigInt(r.amount1_in),
        amount0Out: BigInt(r.amount0_out),
        amount1Out: BigInt(r.amount1_out),
      }),
    ),
    ...events.rows.map((r) => toMarketEvent(r, null)),
  ];
  return out.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
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

/** A stored swap as the rebuilds need it: amounts, decimals and the stored USD figures. */
export type StoredTrade = SwapAmounts & {
  pool: string;
  token0: string;
  token1: string;
  decimals0: number | null;
  decimals1: number | null;
  blockNumber: number;
  logIndex: number;
  time: number;
  volumeUsd: number | null;
  series0Usd: number | null;
  series1Usd: number | null;
};

type StoredTradeRow = {
  pool: string;
  token0: string;
  token1: string;
  decimals0: number | null;
  decimals1: number | null;
  block_number: number;
  log_index: number;
  block_time: Date;
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
  volume_usd: number | null;
  token0_series_usd: number | null;
  token1_series_usd: number | null;
};

const storedTradeColumns = `s.pool, p.token0, p.token1, t0.decimals AS decimals0, t1.decimals AS decimals1,
  s.block_number, s.log_index, s.block_time, s.amount0_in, s.amount1_in, s.amount0_out, s.amount1_out,
  s.volume_usd, s.token0_series_usd, s.token1_series_usd`;

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
    amount0In: BigInt(r.amount0_in),
    amount1In: BigInt(r.amount1_in),
    amount0Out: BigInt(r.amount0_out),
    amount1Out: BigInt(r.amount1_out),
    volumeUsd: r.volume_usd,
    series0Usd: r.token0_series_usd,
    series1Usd: r.token1_series_usd,
  };
}

/** Swaps of each pool from its block on, up to `toBlock`, ascending (per pool). */
export async function loadPoolTrades(
  db: Queryable,
  chainId: number,
  from: readonly { pool: string; fromBlock: number }[],
  toBlock: number,
): Promise<StoredTrade[]> {
  if (from.length === 0) return [];
  const { rows } = await db.query<StoredTradeRow>(
    `SELECT ${storedTradeColumns}
     FROM unnest($2::text[], $3::bigint[]) AS a(pool, from_block)
     JOIN swaps s ON s.chain_id = $1 AND s.pool = a.pool AND s.block_number >= a.from_block AND s.block_number <= $4
     ${storedTradeJoins}
     ORDER BY s.pool, s.block_number, s.log_index`,
    [chainId, from.map((f) => f.pool), from.map((f) => f.fromBlock), toBlock],
  );
  return rows.map(toStoredTrade);
}

/** Swaps of blocks [fromBlock, toBlock] that enter a USD series of one of `tokens`, ascending. */
export async function loadSeriesTrades(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  fromBlock: number,
  toBlock: number,
): Promise<StoredTrade[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<StoredTradeRow>(
    `SELECT ${storedTradeColumns}
     FROM swaps s ${storedTradeJoins}
     WHERE s.chain_id = $1 AND s.block_number >= $2 AND s.block_number <= $3
       AND ((s.token0_series_usd IS NOT NULL AND p.token0 = ANY($4::text[]))
         OR (s.token1_series_usd IS NOT NULL AND p.token1 = ANY($4::text[])))
     ORDER BY s.block_number, s.log_index`,
    [chainId, fromBlock, toBlock, [...tokens]],
  );
  return rows.map(toStoredTrade);
}

/** Writes the USD figures of swaps. */
export async function saveSwapUsd(
  db: Queryable,
  chainId: number,
  swaps: readonly {
    blockNumber: number;
    logIndex: number;
    token0Usd: number | null;
    token1Usd: number | null;
    volumeUsd: number | null;
    series0Usd: number | null;
    series1Usd: number | null;
  }[],
): Promise<void> {
  for (const part of chunks(swaps)) {
    await db.query(
      `UPDATE swaps s SET token0_usd = u.t0, token1_usd = u.t1, volume_usd = u.v,
         token0_series_usd = u.s0, token1_series_usd = u.s1
       FROM unnest($2::bigint[], $3::int[], $4::float8[], $5::float8[], $6::float8[], $7::float8[], $8::float8[])
         AS u(block_number, log_index, t0, t1, v, s0, s1)
       WHERE s.chain_id = $1 AND s.block_number = u.block_number AND s.log_index = u.log_index`,
      [
        chainId,
        part.map((s) => s.blockNumber),
        part.map((s) => s.logIndex),
        part.map((s) => finite(s.token0Usd)),
        part.map((s) => finite(s.token1Usd)),
        part.map((s) => finite(s.volumeUsd)),
        part.map((s) => finite(s.series0Usd)),
        part.map((s) => finite(s.series1Usd)),
      ],
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Candles

export type CandleKey = { pool: string; resolution: number; bucket: number };
export type CandleRow = Candle & { pool: string; resolution: number };

type CandleDbRow = {
  pool: string;
  resolution: number;
  bucket: Date;
  open: number;
  high: number;
  low: number;
  close: number;
  open1: number;
  high1: number;
  low1: number;
  close1: number;
  volume0: number;
  volume1: number;
  volume_usd: number;
  trades: number;
  buys0: number;
  first_key: number;
  last_key: number;
};

const toCandleRow = (r: CandleDbRow): CandleRow => ({
  pool: r.pool,
  resolution: r.resolution,
  bucket: r.bucket.getTime(),
  open: r.open,
  high: r.high,
  low: r.low,
  close: r.close,
  open1: r.open1,
  high1: r.high1,
  low1: r.low1,
  close1: r.close1,
  volume0: r.volume0,
  volume1: r.volume1,
  volumeUsd: r.volume_usd,
  trades: r.trades,
  buys0: r.buys0,
  firstKey: r.first_key,
  lastKey: r.last_key,
});

/** The stored candles of the given keys. */
export async function loadCandles(
  db: Queryable,
  chainId: number,
  keys: readonly CandleKey[],
): Promise<CandleRow[]> {
  const out: CandleRow[] = [];
  for (const part of chunks(keys)) {
    const { rows } = await db.query<CandleDbRow>(
      `SELECT c.pool, c.resolution, c.bucket, c.open, c.high, c.low, c.close, c.open1, c.high1, c.low1, c.close1,
         c.volume0, c.volume1, c.volume_usd, c.trades, c.buys0, c.first_key, c.last_key
       FROM unnest($2::text[], $3::int[], $4::timestamptz[]) AS k(pool, resolution, bucket)
       JOIN candles c ON c.chain_id = $1 AND c.pool = k.pool AND c.resolution = k.resolution AND c.bucket = k.bucket`,
      [chainId, part.map((k) => k.pool), part.map((k) => k.resolution), part.map((k) => iso(k.bucket))],
    );
    out.push(...rows.map(toCandleRow));
  }
  return out;
}

/** Inserts or replaces candles. */
export async function saveCandles(
  db: Queryable,
  chainId: number,
  candles: readonly CandleRow[],
): Promise<void> {
  for (const part of chunks(candles)) {
    await db.query(
      `INSERT INTO candles (chain_id, pool, resolution, bucket, open, high, low, close, volume0, volume1, volume_usd,
         trades, buys0, first_key, last_key, open1, high1, low1, close1)
       SELECT $1, * FROM unnest($2::text[], $3::int[], $4::timestamptz[], $5::float8[], $6::float8[], $7::float8[],
         $8::float8[], $9::float8[], $10::float8[], $11::float8[], $12::int[], $13::int[], $14::bigint[], $15::bigint[],
         $16::float8[], $17::float8[], $18::float8[], $19::float8[])
       ON CONFLICT (chain_id, pool, resolution, bucket) DO UPDATE SET open = EXCLUDED.open, high = EXCLUDED.high,
         low = EXCLUDED.low, close = EXCLUDED.close, open1 = EXCLUDED.open1, high1 = EXCLUDED.high1,
         low1 = EXCLUDED.low1, close1 = EXCLUDED.close1, volume0 = EXCLUDED.volume0, volume1 = EXCLUDED.volume1,
         volume_usd = EXCLUDED.volume_usd, trades = EXCLUDED.trades, buys0 = EXCLUDED.buys0,
         first_key = EXCLUDED.first_key, last_key = EXCLUDED.last_key`,
      [
        chainId,
        part.map((c) => c.pool),
        part.map((c) => c.resolution),
        part.map((c) => iso(c.bucket)),
        part.map((c) => c.open),
        part.map((c) => c.high),
        part.map((c) => c.low),
        part.map((c) => c.close),
        part.map((c) => c.volume0),
        part.map((c) => c.volume1),
        part.map((c) => c.volumeUsd),
        part.map((c) => c.trades),
        part.map((c) => c.buys0),
        part.map((c) => c.firstKey),
        part.map((c) => c.lastKey),
        part.map((c) => c.open1),
        part.map((c) => c.high1),
        part.map((c) => c.low1),
        part.map((c) => c.close1),
      ],
    );
  }
}

/** Deletes the candles of `pools` that hold a trade above `key`; returns what they were. */
export async function deleteCandlesAbove(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
  key: number,
): Promise<{ pool: string; resolution: number; bucket: number; firstKey: number }[]> {
  if (pools.length === 0) return [];
  const { rows } = await db.query<{ pool: string; resolution: number; bucket: Date; first_key: number }>(
    `DELETE FROM candles WHERE chain_id = $1 AND pool = ANY($2::text[]) AND last_key > $3
     RETURNING pool, resolution, bucket, first_key`,
    [chainId, [...pools], key],
  );
  return rows.map((r) => ({
    pool: r.pool,
    resolution: r.resolution,
    bucket: r.bucket.getTime(),
    firstKey: r.first_key,
  }));
}

// ---------------------------------------------------------------------------------------------
// Token USD series

export type SeriesKey = { token: string; resolution: number; bucket: number };
export type SeriesRow = SeriesCandle & { token: string; resolution: number };

/** The candle columns of a token_usd_candles row. */
export type SeriesCandleDbRow = {
  bucket: Date;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  sum_pv: number;
  sum_v: number;
  first_key: number;
  last_key: number;
};

/** The series candle of a token_usd_candles row. */
export const toSeriesCandle = (r: SeriesCandleDbRow): SeriesCandle => ({
  bucket: r.bucket.getTime(),
  open: r.open,
  high: r.high,
  low: r.low,
  close: r.close,
  volume: r.volume,
  sumPv: r.sum_pv,
  sumV: r.sum_v,
  firstKey: r.first_key,
  lastKey: r.last_key,
});

type SeriesDbRow = SeriesCandleDbRow & { token: string; resolution: number };

const toSeriesRow = (r: SeriesDbRow): SeriesRow => ({
  token: r.token,
  resolution: r.resolution,
  ...toSeriesCandle(r),
});

export async function loadSeriesCandles(
  db: Queryable,
  chainId: number,
  keys: readonly SeriesKey[],
): Promise<SeriesRow[]> {
  const out: SeriesRow[] = [];
  for (const part of chunks(keys)) {
    const { rows } = await db.query<SeriesDbRow>(
      `SELECT c.token, c.resolution, c.bucket, c.open, c.high, c.low, c.close, c.volume, c.sum_pv, c.sum_v,
         c.first_key, c.last_key
       FROM unnest($2::text[], $3::int[], $4::timestamptz[]) AS k(token, resolution, bucket)
       JOIN token_usd_candles c ON c.chain_id = $1 AND c.token = k.token AND c.resolution = k.resolution
         AND c.bucket = k.bucket`,
      [chainId, part.map((k) => k.token), part.map((k) => k.resolution), part.map((k) => iso(k.bucket))],
    );
    out.push(...rows.map(toSeriesRow));
  }
  return out;
}

export async function saveSeriesCandles(
  db: Queryable,
  chainId: number,
  candles: readonly SeriesRow[],
): Promise<void> {
  for (const part of chunks(candles)) {
    await db.query(
      `INSERT INTO token_usd_candles (chain_id, token, resolution, bucket, open, high, low, close, volume, sum_pv,
         sum_v, first_key, last_key)
       SELECT $1, * FROM unnest($2::text[], $3::int[], $4::timestamptz[], $5::float8[], $6::float8[], $7::float8[],
         $8::float8[], $9::float8[], $10::float8[], $11::float8[], $12::bigint[], $13::bigint[])
       ON CONFLICT (chain_id, token, resolution, bucket) DO UPDATE SET open = EXCLUDED.open, high = EXCLUDED.high,
         low = EXCLUDED.low, close = EXCLUDED.close, volume = EXCLUDED.volume, sum_pv = EXCLUDED.sum_pv,
         sum_v = EXCLUDED.sum_v, first_key = EXCLUDED.first_key, last_key = EXCLUDED.last_key`,
      [
        chainId,
        part.map((c) => c.token),
        part.map((c) => c.resolution),
        part.map((c) => iso(c.bucket)),
        part.map((c) => c.open),
        part.map((c) => c.high),
        part.map((c) => c.low),
        part.map((c) => c.close),
        part.map((c) => c.volume),
        part.map((c) => c.sumPv),
        part.map((c) => c.sumV),
        part.map((c) => c.firstKey),
        part.map((c) => c.lastKey),
      ],
    );
  }
}

export async function deleteSeriesAbove(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  key: number,
): Promise<{ token: string; resolution: number; bucket: number; firstKey: number }[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<{ token: string; resolution: number; bucket: Date; first_key: number }>(
    `DELETE FROM token_usd_candles WHERE chain_id = $1 AND token = ANY($2::text[]) AND last_key > $3
     RETURNING token, resolution, bucket, first_key`,
    [chainId, [...tokens], key],
  );
  return rows.map((r) => ({
    token: r.token,
    resolution: r.resolution,
    bucket: r.bucket.getTime(),
    firstKey: r.first_key,
  }));
}

// ---------------------------------------------------------------------------------------------
// Token prices

export type TokenPriceRow = {
  token: string;
  usdPrice: number | null;
  blockNumber: number;
  /** ms */
  blockTime: number;
  provenance: unknown;
};

/**
 * Upserts token prices; rows equal to the stored ones are not rewritten. Returns the tokens
 * whose row was inserted or changed.
 */
export async function saveTokenPrices(
  db: Queryable,
  chainId: number,
  rows: readonly TokenPriceRow[],
): Promise<string[]> {
  const changed: string[] = [];
  for (const part of chunks(rows)) {
    const json = JSON.stringify(
      part.map((r) => ({
        token: r.token,
        usd_price: finite(r.usdPrice),
        block_number: r.blockNumber,
        block_time: iso(r.blockTime),
        provenance: r.provenance,
      })),
    );
    const result = await db.query<{ token: string }>(
      `INSERT INTO token_prices (chain_id, token, usd_price, block_number, block_time, provenance)
       SELECT $1, r.token, r.usd_price, r.block_number, r.block_time, r.provenance
       FROM jsonb_to_recordset($2::jsonb)
         AS r(token text, usd_price float8, block_number bigint, block_time timestamptz, provenance jsonb)
       ON CONFLICT (chain_id, token) DO UPDATE SET usd_price = EXCLUDED.usd_price,
         block_number = EXCLUDED.block_number, block_time = EXCLUDED.block_time, provenance = EXCLUDED.provenance
       WHERE (token_prices.usd_price, token_prices.block_number, token_prices.block_time, token_prices.provenance)
         IS DISTINCT FROM (EXCLUDED.usd_price, EXCLUDED.block_number, EXCLUDED.block_time, EXCLUDED.provenance)
       RETURNING token`,
      [chainId, json],
    );
    for (const r of result.rows) changed.push(r.token);
  }
  return changed;
}

/** Deletes the price rows of tokens not in `keep`; returns the deleted tokens. */
export async function deleteTokenPricesExcept(
  db: Queryable,
  chainId: number,
  keep: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ token: string }>(
    "DELETE FROM token_prices WHERE chain_id = $1 AND NOT (token = ANY($2::text[])) RETURNING token",
    [chainId, [...keep]],
  );
  return rows.map((r) => r.token);
}

// ---------------------------------------------------------------------------------------------
// Statistics

export type PairStatsInputRow = {
  pool: string;
  protocol: "v2" | "v3";
  token0: string;
  token1: string;
  decimals0: number | null;
  decimals1: number | null;
  state: PoolState | null;
  usd0: number | null;
  usd1: number | null;
  /** Window sums (null: not asked for). */
  window: { volumeUsd: number; buys: number; sells: number } | null;
  /** Close of the last 1-minute candle before the window. */
  closeBefore: number | null;
  /** Open of the first 1-minute candle in the window. */
  openIn: number | null;
  /** Close of the latest 1-minute candle. */
  closeLast: number | null;
};

/**
 * What the 24-hour figures of pools are made from. With `withWindow` false only the liquidity
 * inputs are read (a price moved; the pool's trades did not).
 */
export async function loadPairStatsInputs(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
  window: { start: number; fullHoursFrom: number; fullHoursTo: number },
  withWindow: boolean,
): Promise<PairStatsInputRow[]> {
  const out: PairStatsInputRow[] = [];
  const windowSql = withWindow
    ? `w.volume_usd, w.buys, w.sells,
       (SELECT close FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND c.resolution = 60
          AND c.bucket < $3 ORDER BY c.bucket DESC LIMIT 1) AS close_before,
       (SELECT open FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND c.resolution = 60
          AND c.bucket >= $3 ORDER BY c.bucket LIMIT 1) AS open_in,
       (SELECT close FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND c.resolution = 60
          ORDER BY c.bucket DESC LIMIT 1) AS close_last`
    : "NULL::float8 AS volume_usd, NULL::bigint AS buys, NULL::bigint AS sells, NULL::float8 AS close_before, NULL::float8 AS open_in, NULL::float8 AS close_last";
  const windowJoin = withWindow
    ? `LEFT JOIN LATERAL (
         SELECT COALESCE(sum(c.volume_usd ORDER BY c.resolution, c.bucket), 0) AS volume_usd,
           COALESCE(sum(c.buys0), 0) AS buys, COALESCE(sum(c.trades - c.buys0), 0) AS sells
         FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND (
           (c.resolution = 60 AND c.bucket >= $3 AND c.bucket < $4)
           OR (c.resolution = 3600 AND c.bucket >= $4 AND c.bucket < $5)
           OR (c.resolution = 60 AND c.bucket >= $5))
       ) w ON true`
    : "";
  for (const part of chunks(pools)) {
    const { rows } = await db.query<
      PoolStateDbRow & {
        pool: string;
        protocol: "v2" | "v3";
        token0: string;
        token1: string;
        decimals0: number | null;
        decimals1: number | null;
        usd0: number | null;
        usd1: number | null;
        volume_usd: number | null;
        buys: number | string | null;
        sells: number | string | null;
        close_before: number | null;
        open_in: number | null;
        close_last: number | null;
      }
    >(
      `SELECT p.address AS pool, p.protocol, p.token0, p.token1, t0.decimals AS decimals0, t1.decimals AS decimals1,
         ${poolStateColumns}, tp0.usd_price AS usd0, tp1.usd_price AS usd1, ${windowSql}
       FROM pools p
       LEFT JOIN pool_price_state s ON s.chain_id = p.chain_id AND s.pool = p.address
       LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
       LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
       LEFT JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
       LEFT JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
       ${windowJoin}
       WHERE p.chain_id = $1 AND p.address = ANY($2::text[])
       ORDER BY p.address`,
      withWindow
        ? [chainId, part, iso(window.start), iso(window.fullHoursFrom), iso(window.fullHoursTo)]
        : [chainId, part],
    );
    for (const r of rows) {
      out.push({
        pool: r.pool,
        protocol: r.protocol,
        token0: r.token0,
        token1: r.token1,
        decimals0: r.decimals0,
        decimals1: r.decimals1,
        state: poolStateOf(r),
        usd0: r.usd0,
        usd1: r.usd1,
        window: withWindow
          ? { volumeUsd: r.volume_usd ?? 0, buys: Number(r.buys ?? 0), sells: Number(r.sells ?? 0) }
          : null,
        closeBefore: r.close_before,
        openIn: r.open_in,
        closeLast: r.close_last,
      });
    }
  }
  return out;
}

export type PairStatsRow = {
  pool: string;
  liquidityUsd: number | null;
  /** Null: keep the stored window figures (a liquidity-only update). */
  window: { volumeUsd: number; priceChange: number | null; buys: number; sells: number } | null;
};

/** Upserts pair statistics; `now` (ms) is recorded as updated_at. */
export async function savePairStats(
  db: Queryable,
  chainId: number,
  rows: readonly PairStatsRow[],
  now: number,
): Promise<void> {
  const full = rows.filter((r) => r.window !== null);
  const liquidityOnly = rows.filter((r) => r.window === null);
  for (const part of chunks(full)) {
    await db.query(
      `INSERT INTO pair_stats (chain_id, pool, volume_usd_24h, liquidity_usd, price_change_24h, buys_24h, sells_24h, updated_at)
       SELECT $1, * FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int[], $7::int[], $8::timestamptz[])
       ON CONFLICT (chain_id, pool) DO UPDATE SET volume_usd_24h = EXCLUDED.volume_usd_24h,
         liquidity_usd = EXCLUDED.liquidity_usd, price_change_24h = EXCLUDED.price_change_24h,
         buys_24h = EXCLUDED.buys_24h, sells_24h = EXCLUDED.sells_24h, updated_at = EXCLUDED.updated_at`,
      [
        chainId,
        part.map((r) => r.pool),
        part.map((r) => finite(r.window?.volumeUsd ?? 0) ?? 0),
        part.map((r) => finite(r.liquidityUsd)),
        part.map((r) => finite(r.window?.priceChange ?? null)),
        part.map((r) => r.window?.buys ?? 0),
        part.map((r) => r.window?.sells ?? 0),
        part.map(() => iso(now)),
      ],
    );
  }
  for (const part of chunks(liquidityOnly)) {
    await db.query(
      `INSERT INTO pair_stats (chain_id, pool, liquidity_usd, updated_at)
       SELECT $1, * FROM unnest($2::text[], $3::float8[], $4::timestamptz[])
       ON CONFLICT (chain_id, pool) DO UPDATE SET liquidity_usd = EXCLUDED.liquidity_usd
       WHERE pair_stats.liquidity_usd IS DISTINCT FROM EXCLUDED.liquidity_usd`,
      [chainId, part.map((r) => r.pool), part.map((r) => finite(r.liquidityUsd)), part.map(() => iso(now))],
    );
  }
}

/** Pools whose 24-hour window holds trades (their figures change as the window slides). */
export async function poolsWithTradesInWindow(db: Queryable, chainId: number): Promise<string[]> {
  const { rows } = await db.query<{ pool: string }>(
    "SELECT pool FROM pair_stats WHERE chain_id = $1 AND buys_24h + sells_24h > 0 ORDER BY pool",
    [chainId],
  );
  return rows.map((r) => r.pool);
}

/** Pools holding any of `tokens`. */
export async function poolsOfTokens(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
): Promise<{ pool: string; token0: string; token1: string }[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<{ pool: string; token0: string; token1: string }>(
    `SELECT address AS pool, token0, token1 FROM pools WHERE chain_id = $1 AND token0 = ANY($2::text[])
     UNION
     SELECT address AS pool, token0, token1 FROM pools WHERE chain_id = $1 AND token1 = ANY($2::text[])`,
    [chainId, [...tokens]],
  );
  return rows;
}

export type TokenStatsInputRow = {
  token: string;
  usdPrice: number | null;
  volumeUsd: number;
  liquidityUsd: number;
  /** Close of the token's last 5-minute USD candle before the window; open of its first in it. */
  closeBefore: number | null;
  openIn: number | null;
};

/**
 * What the 24-hour figures of tokens are made from: their pools' pair_stats (volume over all
 * pools; liquidity over the pools at or above the floor with both tokens priced), their price,
 * and their USD series at the window's start.
 */
export async function loadTokenStatsInputs(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  windowStart: number,
  liquidityFloorUsd: number,
): Promise<TokenStatsInputRow[]> {
  const out: TokenStatsInputRow[] = [];
  for (const part of chunks(tokens)) {
    const { rows } = await db.query<{
      token: string;
      usd_price: number | null;
      volume_usd: number | null;
      liquidity_usd: number | null;
      close_before: number | null;
      open_in: number | null;
    }>(
      `WITH t AS (SELECT DISTINCT unnest($2::text[]) AS token),
       tp AS (
         SELECT t.token, p.address FROM t JOIN pools p ON p.chain_id = $1 AND p.token0 = t.token
         UNION
         SELECT t.token, p.address FROM t JOIN pools p ON p.chain_id = $1 AND p.token1 = t.token
       ),
       agg AS (
         SELECT tp.token,
           sum(ps.volume_usd_24h ORDER BY tp.address) AS volume_usd,
           sum(ps.liquidity_usd ORDER BY tp.address) FILTER (
             WHERE ps.liquidity_usd >= $4 AND pr0.usd_price IS NOT NULL AND pr1.usd_price IS NOT NULL) AS liquidity_usd
         FROM tp
         JOIN pools p ON p.chain_id = $1 AND p.address = tp.address
         JOIN pair_stats ps ON ps.chain_id = $1 AND ps.pool = tp.address
         LEFT JOIN token_prices pr0 ON pr0.chain_id = $1 AND pr0.token = p.token0
         LEFT JOIN token_prices pr1 ON pr1.chain_id = $1 AND pr1.token = p.token1
         GROUP BY tp.token
       )
       SELECT t.token, pr.usd_price, agg.volume_usd, agg.liquidity_usd,
         (SELECT close FROM token_usd_candles c WHERE c.chain_id = $1 AND c.token = t.token AND c.resolution = 300
            AND c.bucket < $3 ORDER BY c.bucket DESC LIMIT 1) AS close_before,
         (SELECT open FROM token_usd_candles c WHERE c.chain_id = $1 AND c.token = t.token AND c.resolution = 300
            AND c.bucket >= $3 ORDER BY c.bucket LIMIT 1) AS open_in
       FROM t
       LEFT JOIN agg ON agg.token = t.token
       LEFT JOIN token_prices pr ON pr.chain_id = $1 AND pr.token = t.token
       ORDER BY t.token`,
      [chainId, part, iso(windowStart), liquidityFloorUsd],
    );
    for (const r of rows) {
      out.push({
        token: r.token,
        usdPrice: r.usd_price,
        volumeUsd: r.volume_usd ?? 0,
        liquidityUsd: r.liquidity_usd ?? 0,
        closeBefore: r.close_before,
        openIn: r.open_in,
      });
    }
  }
  return out;
}

export async function saveTokenStats(
  db: Queryable,
  chainId: number,
  rows: readonly { token: string; priceChange: number | null; volumeUsd: number; liquidityUsd: number }[],
  now: number,
): Promise<void> {
  for (const part of chunks(rows)) {
    await db.query(
      `INSERT INTO token_stats (chain_id, token, price_change_24h, volume_usd_24h, liquidity_usd, updated_at)
       SELECT $1, * FROM unnest($2::text[], $3::float8[], $4::float8[], $5::float8[], $6::timestamptz[])
       ON CONFLICT (chain_id, token) DO UPDATE SET price_change_24h = EXCLUDED.price_change_24h,
         volume_usd_24h = EXCLUDED.volume_usd_24h, liquidity_usd = EXCLUDED.liquidity_usd, updated_at = EXCLUDED.updated_at`,
      [
        chainId,
        part.map((r) => r.token),
        part.map((r) => finite(r.priceChange)),
        part.map((r) => finite(r.volumeUsd) ?? 0),
        part.map((r) => finite(r.liquidityUsd) ?? 0),
        part.map(() => iso(now)),
      ],
    );
  }
}

/** Drops statistics of pools and tokens that no longer exist (after a rollback deleted them). */
export async function deleteOrphanStats(db: Queryable, chainId: number): Promise<void> {
  await db.query(
    `DELETE FROM pair_stats ps WHERE ps.chain_id = $1
       AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.chain_id = $1 AND p.address = ps.pool)`,
    [chainId],
  );
  await db.query(
    `DELETE FROM token_stats ts WHERE ts.chain_id = $1
       AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.chain_id = $1 AND t.address = ts.token)`,
    [chainId],
  );
}
