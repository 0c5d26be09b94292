/**
 * The USD liquidity of pairs and tokens and the 24-hour change of tokens' USD prices, kept in the
 * market windows' tables (pair_windows, token_windows) beside the figures made of trades.
 */

import { type ExactDecimal, exactText } from "../internal/exact-decimal.js";
import { finite, type PoolPriceState, type ProtocolName } from "../model/index.js";
import { chunks, iso, type Queryable } from "./db.js";
import { type PoolStateDbRow, poolStateColumns, poolStateJoin, poolStateOf } from "./pricing-state.js";
import { bulkInsert, columnsOf, setExcluded } from "./unnest.js";

/** Any fixed number: with the chain id, the advisory lock that serialises writers of a chain's statistics. */
const STATS_LOCK = 727_003;

/** Waits for, then holds until the transaction ends, the chain's statistics lock. */
export async function lockChainStats(client: Queryable, chainId: number): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1, $2)", [STATS_LOCK, chainId]);
}

export type PairLiquidityInputRow = {
  pool: string;
  protocol: ProtocolName;
  token0: string;
  token1: string;
  decimals0: number | null;
  decimals1: number | null;
  state: PoolPriceState | null;
  usd0: number | null;
  usd1: number | null;
};

/** What the USD liquidity of pools is made from: their state, their tokens' decimals and USD prices. */
export async function loadPairLiquidityInputs(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<PairLiquidityInputRow[]> {
  const out: PairLiquidityInputRow[] = [];
  for (const part of chunks(pools)) {
    const { rows } = await db.query<
      PoolStateDbRow & {
        pool: string;
        protocol: ProtocolName;
        token0: string;
        token1: string;
        decimals0: number | null;
        decimals1: number | null;
        usd0: number | null;
        usd1: number | null;
      }
    >(
      `SELECT p.address AS pool, p.protocol, p.token0, p.token1, t0.decimals AS decimals0, t1.decimals AS decimals1,
         ${poolStateColumns}, tp0.usd_price AS usd0, tp1.usd_price AS usd1
       FROM pools p
       ${poolStateJoin}
       LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
       LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
       LEFT JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
       LEFT JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
       WHERE p.chain_id = $1 AND p.address = ANY($2::text[])
       ORDER BY p.address`,
      [chainId, part],
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
      });
    }
  }
  return out;
}

/** A pool's USD liquidity, as pair_windows stores it beside the pool's window figures. */
export type PairLiquidityRow = {
  pool: string;
  /** The pool's tokens (the per-token rank indexes of the pairs' reads). */
  token0: string;
  token1: string;
  liquidityUsd: number | null;
  /** `liquidityUsd` exactly (the double as the decimal it denotes): the tokens' sums add these. */
  liquidityExact: ExactDecimal | null;
};

/** The exact liquidity as stored: null with the double (not finite: null). */
const liquidityExactText = (row: PairLiquidityRow): string | null =>
  finite(row.liquidityUsd) === null || row.liquidityExact === null ? null : exactText(row.liquidityExact);

const PAIR_LIQUIDITY_COLUMNS = columnsOf<PairLiquidityRow>({
  pool: ["text", (row) => row.pool],
  token0: ["text", (row) => row.token0],
  token1: ["text", (row) => row.token1],
  liquidity_usd: ["float8", (row) => finite(row.liquidityUsd)],
  liquidity_usd_exact: ["decimal", (row) => liquidityExactText(row)],
});

/**
 * Upserts pools' USD liquidity into pair_windows (a pool without a trade gets a row whose window
 * figures are 0); a row that holds the figure already is not rewritten.
 */
export async function savePairLiquidity(
  db: Queryable,
  chainId: number,
  rows: readonly PairLiquidityRow[],
): Promise<void> {
  await bulkInsert(
    db,
    {
      table: "pair_windows",
      chainId,
      columns: PAIR_LIQUIDITY_COLUMNS,
      tail: `ON CONFLICT (chain_id, pool) DO UPDATE SET liquidity_usd = EXCLUDED.liquidity_usd,
         liquidity_usd_exact = EXCLUDED.liquidity_usd_exact
       WHERE pair_windows.liquidity_usd IS DISTINCT FROM EXCLUDED.liquidity_usd`,
    },
    rows,
  );
}

/** Tokens whose 24-hour window held trades when their windows were last computed. */
export async function tokensWithTradesInWindow(db: Queryable, chainId: number): Promise<string[]> {
  const { rows } = await db.query<{ token: string }>(
    "SELECT token FROM token_windows WHERE chain_id = $1 AND buys_24h + sells_24h > 0 ORDER BY token",
    [chainId],
  );
  return rows.map((r) => r.token);
}

export type TokenStatsInputRow = {
  token: string;
  usdPrice: number | null;
  liquidityUsd: number;
  /** Its USD series price after its latest trade before the window; after its first one in it. */
  closeBefore: number | null;
  openIn: number | null;
};

/**
 * What the liquidity and 24-hour change of tokens are made from: their pools' liquidity in
 * pair_windows (over the pools at or above the floor with both tokens priced, summed exactly and
 * rounded once), their price, and their USD series at the window's start.
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
           (sum(ps.liquidity_usd_exact) FILTER (
             WHERE ps.liquidity_usd >= $4 AND pr0.usd_price IS NOT NULL AND pr1.usd_price IS NOT NULL))::float8 AS liquidity_usd
         FROM tp
         JOIN pools p ON p.chain_id = $1 AND p.address = tp.address
         JOIN pair_windows ps ON ps.chain_id = $1 AND ps.pool = tp.address
         LEFT JOIN token_prices pr0 ON pr0.chain_id = $1 AND pr0.token = p.token0
         LEFT JOIN token_prices pr1 ON pr1.chain_id = $1 AND pr1.token = p.token1
         GROUP BY tp.token
       )
       SELECT t.token, pr.usd_price, agg.liquidity_usd, ${SERIES_ENDS}
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
        liquidityUsd: r.liquidity_usd ?? 0,
        closeBefore: r.close_before,
        openIn: r.open_in,
      });
    }
  }
  return out;
}

/**
 * The select items `close_before` and `open_in` of token `t.token` around the 24-hour window
 * starting at `$3` (chain `$1`, minute-aligned): its USD series price after its latest trade before
 * the start (the close of its latest priced minute bucket before it) and after its first trade from
 * the start on — the very inputs of the market windows' `price_change` (market-windows.ts
 * loadWindowInputs). Minute buckets are never dropped by a retention.
 */
const SERIES_ENDS = `(SELECT close_usd FROM token_trade_buckets c WHERE c.chain_id = $1 AND c.token = t.token
     AND c.resolution = 60 AND c.close_usd IS NOT NULL AND c.bucket < $3 ORDER BY c.bucket DESC LIMIT 1) AS close_before,
   (SELECT open_usd FROM token_trade_buckets c WHERE c.chain_id = $1 AND c.token = t.token
     AND c.resolution = 60 AND c.close_usd IS NOT NULL AND c.bucket >= $3 ORDER BY c.bucket LIMIT 1) AS open_in`;

/** A pair's stored USD liquidity, as the token statistics sum it. */
export type PairLiquidityFigures = { liquidityUsd: number | null };

/** Every pair_windows row's liquidity of a chain (the pricing's mirror of them, market-stats.ts). */
export async function loadPairLiquidityFigures(
  db: Queryable,
  chainId: number,
): Promise<Map<string, PairLiquidityFigures>> {
  const { rows } = await db.query<{ pool: string; liquidity_usd: number | null }>(
    "SELECT pool, liquidity_usd FROM pair_windows WHERE chain_id = $1",
    [chainId],
  );
  return new Map(rows.map((r) => [r.pool, { liquidityUsd: r.liquidity_usd }]));
}

/** A token's USD series at the 24-hour window's start (see loadTokenStatsInputs). */
export type TokenSeriesEnds = { closeBefore: number | null; openIn: number | null };

/** Tokens' USD series at the 24-hour window's start: the part of loadTokenStatsInputs that reads it. */
export async function loadTokenSeriesEnds(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  windowStart: number,
): Promise<Map<string, TokenSeriesEnds>> {
  const out = new Map<string, TokenSeriesEnds>();
  for (const part of chunks(tokens)) {
    const { rows } = await db.query<{ token: string; close_before: number | null; open_in: number | null }>(
      `SELECT t.token, ${SERIES_ENDS} FROM unnest($2::text[]) AS t(token)`,
      [chainId, part, iso(windowStart)],
    );
    for (const r of rows) out.set(r.token, { closeBefore: r.close_before, openIn: r.open_in });
  }
  return out;
}

/** A token's USD liquidity and 24-hour change, as token_windows stores them beside its window figures. */
export type TokenStatsRow = {
  token: string;
  priceChange: number | null;
  liquidityUsd: number;
};

const TOKEN_STATS_COLUMNS = columnsOf<TokenStatsRow>({
  token: ["text", (row) => row.token],
  price_change_24h: ["float8", (row) => finite(row.priceChange)],
  liquidity_usd: ["float8", (row) => finite(row.liquidityUsd) ?? 0],
});

/**
 * Upserts tokens' USD liquidity and 24-hour change into token_windows (a token without a trade
 * gets a row whose window figures are 0); a row that holds these figures already is not rewritten.
 */
export async function saveTokenStats(
  db: Queryable,
  chainId: number,
  rows: readonly TokenStatsRow[],
): Promise<void> {
  await bulkInsert(
    db,
    {
      table: "token_windows",
      chainId,
      columns: TOKEN_STATS_COLUMNS,
      tail: `ON CONFLICT (chain_id, token) DO UPDATE SET ${setExcluded("price_change_24h", "liquidity_usd")}
       WHERE (token_windows.price_change_24h, token_windows.liquidity_usd)
         IS DISTINCT FROM (EXCLUDED.price_change_24h, EXCLUDED.liquidity_usd)`,
    },
    rows,
  );
}

/** Drops the market rows of pools and tokens that no longer exist (after a rollback deleted them). */
export async function deleteOrphanStats(db: Queryable, chainId: number): Promise<void> {
  await db.query(
    `DELETE FROM pair_windows w WHERE w.chain_id = $1
       AND NOT EXISTS (SELECT 1 FROM pools p WHERE p.chain_id = $1 AND p.address = w.pool)`,
    [chainId],
  );
  await db.query(
    `DELETE FROM token_windows w WHERE w.chain_id = $1
       AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.chain_id = $1 AND t.address = w.token)`,
    [chainId],
  );
}
