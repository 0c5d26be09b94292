import type { Queryable } from "../store/db.js";

/**
 * Every aggregate the pricing stage derives for a chain, as plain sorted rows: what "equal to a
 * fresh index" compares. Statistics leave out updated_at (when they were computed).
 */
export async function snapshotAggregates(db: Queryable, chainId: number): Promise<Record<string, unknown[]>> {
  const q = async (sql: string) => (await db.query(sql, [chainId])).rows;
  return {
    candles: await q(
      `SELECT pool, resolution, bucket, open, high, low, close, volume0, volume1, volume_usd, trades, buys0, first_key, last_key
       FROM candles WHERE chain_id = $1 ORDER BY pool, resolution, bucket`,
    ),
    token_usd_candles: await q(
      `SELECT token, resolution, bucket, open, high, low, close, volume, sum_pv, sum_v, first_key, last_key
       FROM token_usd_candles WHERE chain_id = $1 ORDER BY token, resolution, bucket`,
    ),
    token_prices: await q(
      `SELECT token, usd_price, block_number, block_time, provenance FROM token_prices WHERE chain_id = $1 ORDER BY token`,
    ),
    swaps: await q(
      `SELECT block_number, log_index, token0_usd, token1_usd, volume_usd, token0_series_usd, token1_series_usd
       FROM swaps WHERE chain_id = $1 ORDER BY block_number, log_index`,
    ),
    pool_price_state: await q(
      `SELECT pool, token0, token1, reserve0, reserve1, sqrt_price_x96, swap_block, pre_swap_reserve0, pre_swap_reserve1,
         state_block, state_log_index, state_time
       FROM pool_price_state WHERE chain_id = $1 ORDER BY pool`,
    ),
    pair_stats: await q(
      `SELECT pool, volume_usd_24h, liquidity_usd, price_change_24h, buys_24h, sells_24h
       FROM pair_stats WHERE chain_id = $1 ORDER BY pool`,
    ),
    token_stats: await q(
      `SELECT token, price_change_24h, volume_usd_24h, liquidity_usd FROM token_stats WHERE chain_id = $1 ORDER BY token`,
    ),
  };
}
