/**
 * Table `pool_events`: the non-swap events of pools (Sync, Mint, Burn, Collect, Initialize,
 * Flash) with the pool's state after each. The reads of a pool's event history (swaps ∪
 * pool_events, which together hold every state a pool went through) live here too.
 */
import type { BatchPoolEvent, Hex, MarketEvent, StateEvent, SwapAmounts } from "../model/index.js";
import { fromNumeric, type Queryable } from "./db.js";
import { EVENT_COLUMNS, insertNewEvents } from "./log-events.js";
import { type RawAmountsRow, swapAmountsOf } from "./swaps.js";
import { columnsOf } from "./unnest.js";

const POOL_EVENT_COLUMNS = columnsOf<BatchPoolEvent>({
  ...EVENT_COLUMNS,
  kind: ["text", (e) => e.kind],
  amount0: ["numeric", (e) => e.amount0],
  amount1: ["numeric", (e) => e.amount1],
  liquidity_delta: ["numeric", (e) => e.liquidityDelta],
  tick_lower: ["int", (e) => e.tickLower],
  tick_upper: ["int", (e) => e.tickUpper],
});

/** Inserts pool events not stored yet; returns those inserted. */
export const insertPoolEvents = (
  client: Queryable,
  chainId: number,
  events: readonly BatchPoolEvent[],
): Promise<BatchPoolEvent[]> =>
  insertNewEvents(client, { table: "pool_events", chainId, columns: POOL_EVENT_COLUMNS }, events, (e) => e);

/** Deletes the pool events above `block`; returns the pool of each deleted event. */
export async function deletePoolEventsAbove(
  client: Queryable,
  chainId: number,
  block: number,
): Promise<Hex[]> {
  const { rows } = await client.query<{ pool: Hex }>(
    "DELETE FROM pool_events WHERE chain_id = $1 AND block_number > $2 RETURNING pool",
    [chainId, block],
  );
  return rows.map((r) => r.pool);
}

// ---------------------------------------------------------------------------------------------
// Event history (swaps ∪ pool_events)

/** What a pool's pricing state at a block is rebuilt from (see loadPoolStatesAt). */
export type PoolStateAt = {
  /** The pool's latest swap or pool event at or below the block; null when it has none. */
  latest: StateEvent | null;
  /** The first swap of the pool's latest block with swaps, with the balances after it. */
  firstSwapOfLastSwapBlock:
    | ({ blockNumber: number; reserve0: bigint | null; reserve1: bigint | null } & SwapAmounts)
    | null;
};

/**
 * The state of pools after their latest event at or below `block`, read from swaps, pool_events
 * and pool_last_swaps (a pool's latest block of swaps among those a retention dropped).
 */
export async function loadPoolStatesAt(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
  block: number,
): Promise<Map<string, PoolStateAt>> {
  const { rows } = await db.query<
    {
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
    } & { [column in keyof RawAmountsRow]: string | null }
  >(
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
         UNION ALL
         (SELECT block_number, log_index, block_time, reserve0, reserve1, sqrt_price_x96 FROM pool_last_swaps
           WHERE chain_id = $1 AND pool = a.pool AND block_number <= $3 ORDER BY block_number DESC, log_index DESC LIMIT 1)
       ) latest ORDER BY block_number DESC, log_index DESC LIMIT 1
     ) l ON true
     LEFT JOIN LATERAL (
       SELECT block_number FROM (
         (SELECT block_number, log_index FROM swaps WHERE chain_id = $1 AND pool = a.pool AND block_number <= $3
           ORDER BY block_number DESC, log_index DESC LIMIT 1)
         UNION ALL
         (SELECT block_number, log_index FROM pool_last_swaps WHERE chain_id = $1 AND pool = a.pool AND block_number <= $3
           ORDER BY block_number DESC, log_index DESC LIMIT 1)
       ) latest ORDER BY block_number DESC, log_index DESC LIMIT 1
     ) sb ON true
     LEFT JOIN LATERAL (
       SELECT block_number, reserve0, reserve1, amount0_in, amount1_in, amount0_out, amount1_out FROM (
         (SELECT block_number, log_index, reserve0, reserve1, amount0_in, amount1_in, amount0_out, amount1_out FROM swaps
           WHERE chain_id = $1 AND pool = a.pool AND block_number = sb.block_number ORDER BY log_index LIMIT 1)
         UNION ALL
         (SELECT block_number, log_index, reserve0, reserve1, amount0_in, amount1_in, amount0_out, amount1_out FROM pool_last_swaps
           WHERE chain_id = $1 AND pool = a.pool AND block_number = sb.block_number ORDER BY log_index LIMIT 1)
       ) first ORDER BY log_index LIMIT 1
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
                // The first swap's columns are all set when it exists.
                ...swapAmountsOf(r as RawAmountsRow),
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
  const swaps = await db.query<StoredEventRow & RawAmountsRow>(
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
    ...swaps.rows.map((r) => toMarketEvent(r, swapAmountsOf(r))),
    ...events.rows.map((r) => toMarketEvent(r, null)),
  ];
  return out.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}
