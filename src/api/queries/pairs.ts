import type { Queryable } from "../../store/db.js";

/** A pool with its tokens' facts, current state and 24 h statistics. */
export type PoolRow = {
  chain_id: number;
  address: string;
  dex: string;
  factory: string;
  token0: string;
  token1: string;
  reserve0: string | null;
  reserve1: string | null;
  symbol0: string | null;
  symbol1: string | null;
  decimals0: number | null;
  decimals1: number | null;
  usd_price0: number | null;
  usd_price1: number | null;
  volume_usd_24h: number | null;
  liquidity_usd: number | null;
  price_change_24h: number | null;
};

const POOL_SELECT = `
  SELECT p.chain_id, p.address, p.dex, p.factory, p.token0, p.token1, p.reserve0, p.reserve1,
    t0.symbol AS symbol0, t1.symbol AS symbol1, t0.decimals AS decimals0, t1.decimals AS decimals1,
    tp0.usd_price AS usd_price0, tp1.usd_price AS usd_price1,
    ps.volume_usd_24h, ps.liquidity_usd, ps.price_change_24h
  FROM pools p
  LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
  LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
  LEFT JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
  LEFT JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
  LEFT JOIN pair_stats ps ON ps.chain_id = p.chain_id AND ps.pool = p.address`;

/** One pool, or undefined when it is not known. */
export async function findPool(
  db: Queryable,
  chainId: number,
  address: string,
): Promise<PoolRow | undefined> {
  const { rows } = await db.query<PoolRow>(`${POOL_SELECT} WHERE p.chain_id = $1 AND p.address = $2`, [
    chainId,
    address,
  ]);
  return rows[0];
}

/** The pools holding `token`, by 24 h USD volume, then USD liquidity, then address. */
export async function findPoolsOfToken(
  db: Queryable,
  options: { chainId: number; token: string; limit: number },
): Promise<PoolRow[]> {
  const { rows } = await db.query<PoolRow>(
    `${POOL_SELECT}
     WHERE p.chain_id = $1 AND (p.token0 = $2 OR p.token1 = $2)
     ORDER BY COALESCE(ps.volume_usd_24h, 0) DESC, ps.liquidity_usd DESC NULLS LAST, p.address
     LIMIT $3`,
    [options.chainId, options.token, options.limit],
  );
  return rows;
}
