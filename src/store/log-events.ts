/**
 * What tables `swaps` and `pool_events` share: a row per event of a pool's log, keyed by (chain,
 * block number, log index), with the columns that place the event and the pool's state after it.
 */
import type { BatchPoolEvent, BatchSwap } from "../model/index.js";
import type { Queryable } from "./db.js";
import { bulkInsert, type Columns, columnsOf } from "./unnest.js";

/**
 * The columns both tables have: those that place an event (block, log index, block time,
 * transaction, pool) and the pool's state after it (null: unknown).
 */
export const EVENT_COLUMNS = columnsOf<BatchSwap | BatchPoolEvent>({
  block_number: ["bigint", (e) => e.blockNumber],
  log_index: ["int", (e) => e.logIndex],
  block_time: ["timestamptz", (e) => e.blockTime],
  tx_hash: ["text", (e) => e.txHash],
  pool: ["text", (e) => e.pool],
  reserve0: ["numeric", (e) => e.reserve0],
  reserve1: ["numeric", (e) => e.reserve1],
  sqrt_price_x96: ["numeric", (e) => e.sqrtPriceX96],
  liquidity: ["numeric", (e) => e.liquidity],
  tick: ["int", (e) => e.tick],
});

/**
 * Inserts the events not stored yet, each as the row `rowOf` makes of it; returns the events
 * inserted, in their order.
 */
export async function insertNewEvents<E extends { blockNumber: number; logIndex: number }, R>(
  db: Queryable,
  statement: { table: string; chainId: number; columns: Columns<R> },
  events: readonly E[],
  rowOf: (event: E) => R,
): Promise<E[]> {
  const rows = await bulkInsert<R, { block_number: number; log_index: number }>(
    db,
    { ...statement, tail: "ON CONFLICT DO NOTHING RETURNING block_number, log_index" },
    events.map(rowOf),
  );
  if (rows.length === events.length) return [...events];
  const inserted = new Set(rows.map((r) => `${r.block_number}:${r.log_index}`));
  return events.filter((e) => inserted.has(`${e.blockNumber}:${e.logIndex}`));
}
