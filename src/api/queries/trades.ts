import type { Queryable } from "../../store/db.js";

/** A swap as the trade records need it; raw amounts and reserves are numeric text. */
export type SwapRow = {
  block_number: number;
  log_index: number;
  block_time: Date;
  tx_hash: string;
  maker: string | null;
  exchange: string | null;
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
  reserve0: string | null;
  reserve1: string | null;
  token0_usd: number | null;
  token1_usd: number | null;
  volume_usd: number | null;
};

/** Position of a trade in the newest-first order: (block, log index). */
export type TradePosition = { block: number; logIndex: number };

/**
 * Swaps of one pool, newest first by (block, log index), strictly older than `before` when given.
 * Uses the index swaps_pool_idx (chain_id, pool, block_number DESC, log_index DESC).
 */
export async function findSwaps(
  db: Queryable,
  options: { chainId: number; pool: string; before: TradePosition | null; limit: number },
): Promise<SwapRow[]> {
  const { rows } = await db.query<SwapRow>(
    `SELECT block_number, log_index, block_time, tx_hash, maker, exchange,
       amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1,
       token0_usd, token1_usd, volume_usd
     FROM swaps
     WHERE chain_id = $1 AND pool = $2
       AND ($3::bigint IS NULL OR (block_number, log_index) < ($3::bigint, $4::int))
     ORDER BY block_number DESC, log_index DESC
     LIMIT $5`,
    [
      options.chainId,
      options.pool,
      options.before?.block ?? null,
      options.before?.logIndex ?? null,
      options.limit,
    ],
  );
  return rows;
}
