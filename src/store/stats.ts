/** Tables `pair_stats` and `token_stats`: the 24-hour figures of pairs and tokens. */

import { EXACT_ZERO, type ExactDecimal, exactText, parseExact } from "../internal/exact-decimal.js";
import { finite, type PoolPriceState, type ProtocolName } from "../model/index.js";
import { chunks, iso, type Queryable } from "./db.js";
import { loadRetainedFrom } from "./partitions.js";
import { type PoolStateDbRow, poolStateColumns, poolStateJoin, poolStateOf } from "./pricing-state.js";
import { bulkInsert, columnsOf, setExcluded } from "./unnest.js";

/** Any fixed number: with the chain id, the advisory lock that serialises writers of a chain's statistics. */
const STATS_LOCK = 727_003;

/** Waits for, then holds until the transaction ends, the chain's statistics lock. */
export async function lockChainStats(client: Queryable, chainId: number): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock($1, $2)", [STATS_LOCK, chainId]);
}

export type PairStatsInputRow = {
  pool: string;
  protocol: ProtocolName;
  token0: string;
  token1: string;
  decimals0: number | null;
  decimals1: number | null;
  state: PoolPriceState | null;
  usd0: number | null;
  usd1: number | null;
  /** Window sums (null: not asked for); the volume exactly and rounded once. */
  window: { volumeUsd: number; volumeExact: ExactDecimal; buys: number; sells: number } | null;
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
  const retained = withWindow ? ((await loadRetainedFrom(db)).get("candles_1m") ?? null) : null;
  // With a retention of the 1-minute candles ($6: where they start), the last trade before a time
  // that no kept minute holds is the last one before $6: the hourly candle before $6 (an hour start)
  // holds it. The 24-hour window itself always lies after $6 (storage.retention: at least 2 days).
  const lastHourBeforeRetained = `(SELECT close FROM candles c WHERE $6::timestamptz IS NOT NULL AND c.chain_id = $1
          AND c.pool = p.address AND c.resolution = 3600 AND c.bucket < $6 ORDER BY c.bucket DESC LIMIT 1)`;
  const windowSql = withWindow
    ? `w.volume_usd, w.volume_exact, w.buys, w.sells,
       COALESCE((SELECT close FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND c.resolution = 60
          AND c.bucket < $3 AND ($6::timestamptz IS NULL OR c.bucket >= $6) ORDER BY c.bucket DESC LIMIT 1),
          ${lastHourBeforeRetained}) AS close_before,
       (SELECT open FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND c.resolution = 60
          AND c.bucket >= $3 ORDER BY c.bucket LIMIT 1) AS open_in,
       COALESCE((SELECT close FROM candles c WHERE c.chain_id = $1 AND c.pool = p.address AND c.resolution = 60
          AND ($6::timestamptz IS NULL OR c.bucket >= $6) ORDER BY c.bucket DESC LIMIT 1),
          ${lastHourBeforeRetained}) AS close_last`
    : "NULL::float8 AS volume_usd, NULL::text AS volume_exact, NULL::bigint AS buys, NULL::bigint AS sells, NULL::float8 AS close_before, NULL::float8 AS open_in, NULL::float8 AS close_last";
  const windowJoin = withWindow
    ? `LEFT JOIN LATERAL (
         SELECT COALESCE(sum(c.volume_usd_exact), 0)::float8 AS volume_usd,
           COALESCE(sum(c.volume_usd_exact), 0)::text AS volume_exact,
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
        protocol: ProtocolName;
        token0: string;
        token1: string;
        decimals0: number | null;
        decimals1: number | null;
        usd0: number | null;
        usd1: number | null;
        volume_usd: number | null;
        volume_exact: string | null;
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
       ${poolStateJoin}
       LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
       LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
       LEFT JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
       LEFT JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
       ${windowJoin}
       WHERE p.chain_id = $1 AND p.address = ANY($2::text[])
       ORDER BY p.address`,
      withWindow
        ? [
            chainId,
            part,
            iso(window.start),
            iso(window.fullHoursFrom),
            iso(window.fullHoursTo),
            retained === null ? null : iso(retained),
          ]
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
          ? {
              volumeUsd: r.volume_usd ?? 0,
              volumeExact: r.volume_exact === null ? EXACT_ZERO : parseExact(r.volume_exact),
              buys: Number(r.buys ?? 0),
              sells: Number(r.sells ?? 0),
            }
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
  /** The pool's tokens (migration 018: the per-token rank indexes of the pairs' reads). */
  token0: string;
  token1: string;
  liquidityUsd: number | null;
  /** `liquidityUsd` exactly (the double as the decimal it denotes): the tokens' sums add these. */
  liquidityExact: ExactDecimal | null;
  /** Null: keep the stored window figures (a liquidity-only update). */
  window: {
    volumeUsd: number;
    /** The 24-hour volume exactly (`volumeUsd` is it rounded): the tokens' sums add these. */
    volumeExact: ExactDecimal;
    priceChange: number | null;
    buys: number;
    sells: number;
  } | null;
};

type PairStatsDbRow = { row: PairStatsRow; now: number };

/** The exact liquidity as stored: null with the double (not finite: null). */
const liquidityExactText = (row: PairStatsRow): string | null =>
  finite(row.liquidityUsd) === null || row.liquidityExact === null ? null : exactText(row.liquidityExact);

const PAIR_STATS_COLUMNS = columnsOf<PairStatsDbRow>({
  pool: ["text", ({ row }) => row.pool],
  token0: ["text", ({ row }) => row.token0],
  token1: ["text", ({ row }) => row.token1],
  volume_usd_24h: ["float8", ({ row }) => finite(row.window?.volumeUsd ?? 0) ?? 0],
  volume_usd_24h_exact: ["decimal", ({ row }) => exactText(row.window?.volumeExact ?? EXACT_ZERO)],
  liquidity_usd: ["float8", ({ row }) => finite(row.liquidityUsd)],
  liquidity_usd_exact: ["decimal", ({ row }) => liquidityExactText(row)],
  price_change_24h: ["float8", ({ row }) => finite(row.window?.priceChange ?? null)],
  buys_24h: ["int", ({ row }) => row.window?.buys ?? 0],
  sells_24h: ["int", ({ row }) => row.window?.sells ?? 0],
  updated_at: ["timestamptz", ({ now }) => new Date(now)],
});

const PAIR_LIQUIDITY_COLUMNS = columnsOf<PairStatsDbRow>({
  pool: ["text", ({ row }) => row.pool],
  token0: ["text", ({ row }) => row.token0],
  token1: ["text", ({ row }) => row.token1],
  liquidity_usd: ["float8", ({ row }) => finite(row.liquidityUsd)],
  liquidity_usd_exact: ["decimal", ({ row }) => liquidityExactText(row)],
  updated_at: ["timestamptz", ({ now }) => new Date(now)],
});

/** Upserts pair statistics; `now` (ms) is recorded as updated_at. */
export async function savePairStats(
  db: Queryable,
  chainId: number,
  rows: readonly PairStatsRow[],
  now: number,
): Promise<void> {
  await bulkInsert(
    db,
    {
      table: "pair_stats",
      chainId,
      columns: PAIR_STATS_COLUMNS,
      tail: `ON CONFLICT (chain_id, pool) DO UPDATE SET ${setExcluded(
        "volume_usd_24h",
        "volume_usd_24h_exact",
        "liquidity_usd",
        "liquidity_usd_exact",
        "price_change_24h",
        "buys_24h",
        "sells_24h",
        "updated_at",
      )}`,
    },
    rows.filter((row) => row.window !== null).map((row) => ({ row, now })),
  );
  await bulkInsert(
    db,
    {
      table: "pair_stats",
      chainId,
      columns: PAIR_LIQUIDITY_COLUMNS,
      tail: `ON CONFLICT (chain_id, pool) DO UPDATE SET liquidity_usd = EXCLUDED.liquidity_usd,
         liquidity_usd_exact = EXCLUDED.liquidity_usd_exact
       WHERE pair_stats.liquidity_usd IS DISTINCT FROM EXCLUDED.liquidity_usd`,
    },
    rows.filter((row) => row.window === null).map((row) => ({ row, now })),
  );
}

/** Pools whose 24-hour window holds trades (their figures change as the window slides). */
export async function poolsWithTradesInWindow(db: Queryable, chainId: number): Promise<string[]> {
  const { rows } = await db.query<{ pool: string }>(
    "SELECT pool FROM pair_stats WHERE chain_id = $1 AND buys_24h + sells_24h > 0 ORDER BY pool",
    [chainId],
  );
  return rows.map((r) => r.pool);
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
 * pools; liquidity over the pools at or above the floor with both tokens priced, both summed
 * exactly and rounded once), their price, and their USD series at the window's start.
 */
export async function loadTokenStatsInputs(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  windowStart: number,
  liquidityFloorUsd: number,
): Promise<TokenStatsInputRow[]> {
  const out: TokenStatsInputRow[] = [];
  const retained = (await loadRetainedFrom(db)).get("token_usd_candles_5m") ?? null;
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
           sum(ps.volume_usd_24h_exact)::float8 AS volume_usd,
           (sum(ps.liquidity_usd_exact) FILTER (
             WHERE ps.liquidity_usd >= $4 AND pr0.usd_price IS NOT NULL AND pr1.usd_price IS NOT NULL))::float8 AS liquidity_usd
         FROM tp
         JOIN pools p ON p.chain_id = $1 AND p.address = tp.address
         JOIN pair_stats ps ON ps.chain_id = $1 AND ps.pool = tp.address
         LEFT JOIN token_prices pr0 ON pr0.chain_id = $1 AND pr0.token = p.token0
         LEFT JOIN token_prices pr1 ON pr1.chain_id = $1 AND pr1.token = p.token1
         GROUP BY tp.token
       )
       SELECT t.token, pr.usd_price, agg.volume_usd, agg.liquidity_usd,
         -- As the pairs' (loadPairStatsInputs): before $5, where a retention has the 5-minute series
         -- start, the hourly series holds the last price.
         ${seriesEndsSql("$5")}
       FROM t
       LEFT JOIN agg ON agg.token = t.token
       LEFT JOIN token_prices pr ON pr.chain_id = $1 AND pr.token = t.token
       ORDER BY t.token`,
      [chainId, part, iso(windowStart), liquidityFloorUsd, retained === null ? null : iso(retained)],
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

/**
 * The select items `close_before` and `open_in` of token `t.token`'s USD series around the 24-hour
 * window starting at `$3` (chain `$1`): the last 5-minute close before it (before `retained`, where a
 * retention has the 5-minute series start, the hourly series holds it) and the first open in it.
 * `retained` is the parameter holding that start (null: everything kept).
 */
const seriesEndsSql = (retained: string) =>
  `COALESCE((SELECT close FROM token_usd_candles c WHERE c.chain_id = $1 AND c.token = t.token AND c.resolution = 300
            AND c.bucket < $3 AND (${retained}::timestamptz IS NULL OR c.bucket >= ${retained}) ORDER BY c.bucket DESC LIMIT 1),
           (SELECT close FROM token_usd_candles c WHERE ${retained}::timestamptz IS NOT NULL AND c.chain_id = $1
            AND c.token = t.token AND c.resolution = 3600 AND c.bucket < ${retained} ORDER BY c.bucket DESC LIMIT 1)) AS close_before,
         (SELECT open FROM token_usd_candles c WHERE c.chain_id = $1 AND c.token = t.token AND c.resolution = 300
            AND c.bucket >= $3 ORDER BY c.bucket LIMIT 1) AS open_in`;

/** A pair's stored 24-hour volume (exactly) and USD liquidity, as the token statistics sum them. */
export type PairStatsFigures = { volumeExact: ExactDecimal; liquidityUsd: number | null };

/** Every pair_stats row's volume and liquidity of a chain (the pricing's mirror of them, market-stats.ts). */
export async function loadPairStatsFigures(
  db: Queryable,
  chainId: number,
): Promise<Map<string, PairStatsFigures>> {
  const { rows } = await db.query<{ pool: string; volume_exact: string; liquidity_usd: number | null }>(
    "SELECT pool, volume_usd_24h_exact::text AS volume_exact, liquidity_usd FROM pair_stats WHERE chain_id = $1",
    [chainId],
  );
  return new Map(
    rows.map((r) => [r.pool, { volumeExact: parseExact(r.volume_exact), liquidityUsd: r.liquidity_usd }]),
  );
}

/** A token's USD series at the 24-hour window's start (see loadTokenStatsInputs). */
export type TokenSeriesEnds = { closeBefore: number | null; openIn: number | null };

/** The 5-minute series candles that bound tokens' 24-hour windows: the parts of loadTokenStatsInputs that read the series. */
export async function loadTokenSeriesEnds(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  windowStart: number,
  retained: number | null,
): Promise<Map<string, TokenSeriesEnds>> {
  const out = new Map<string, TokenSeriesEnds>();
  for (const part of chunks(tokens)) {
    const { rows } = await db.query<{ token: string; close_before: number | null; open_in: number | null }>(
      `SELECT t.token,
         ${seriesEndsSql("$4")}
       FROM unnest($2::text[]) AS t(token)`,
      [chainId, part, iso(windowStart), retained === null ? null : iso(retained)],
    );
    for (const r of rows) out.set(r.token, { closeBefore: r.close_before, openIn: r.open_in });
  }
  return out;
}

/** Where a chain's kept 5-minute USD series starts (null: all kept), as loadTokenStatsInputs reads it. */
export async function loadSeriesRetainedFrom(db: Queryable): Promise<number | null> {
  return (await loadRetainedFrom(db)).get("token_usd_candles_5m") ?? null;
}

export type TokenStatsRow = {
  token: string;
  priceChange: number | null;
  volumeUsd: number;
  liquidityUsd: number;
};

const TOKEN_STATS_COLUMNS = columnsOf<{ row: TokenStatsRow; now: number }>({
  token: ["text", ({ row }) => row.token],
  price_change_24h: ["float8", ({ row }) => finite(row.priceChange)],
  volume_usd_24h: ["float8", ({ row }) => finite(row.volumeUsd) ?? 0],
  liquidity_usd: ["float8", ({ row }) => finite(row.liquidityUsd) ?? 0],
  updated_at: ["timestamptz", ({ now }) => new Date(now)],
});

export async function saveTokenStats(
  db: Queryable,
  chainId: number,
  rows: readonly TokenStatsRow[],
  now: number,
): Promise<void> {
  await bulkInsert(
    db,
    {
      table: "token_stats",
      chainId,
      columns: TOKEN_STATS_COLUMNS,
      // A row whose figures did not change is not rewritten (its updated_at: when they last changed).
      tail: `ON CONFLICT (chain_id, token) DO UPDATE SET ${setExcluded(
        "price_change_24h",
        "volume_usd_24h",
        "liquidity_usd",
        "updated_at",
      )}
       WHERE (token_stats.price_change_24h, token_stats.volume_usd_24h, token_stats.liquidity_usd)
         IS DISTINCT FROM (EXCLUDED.price_change_24h, EXCLUDED.volume_usd_24h, EXCLUDED.liquidity_usd)`,
    },
    rows.map((row) => ({ row, now })),
  );
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

/** A pair's stored 24-hour statistics. */
export type PairMarket = {
  pool: string;
  volumeUsd24h: number;
  liquidityUsd: number | null;
  /** Percent change of token0's price in token1 over 24 hours. */
  priceChange24h: number | null;
  buys24h: number;
  sells24h: number;
  updatedAt: Date;
};

export async function getPairMarkets(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<Map<string, PairMarket>> {
  if (pools.length === 0) return new Map();
  const { rows } = await db.query<{
    pool: string;
    volume_usd_24h: number;
    liquidity_usd: number | null;
    price_change_24h: number | null;
    buys_24h: number;
    sells_24h: number;
    updated_at: Date;
  }>(
    `SELECT pool, volume_usd_24h, liquidity_usd, price_change_24h, buys_24h, sells_24h, updated_at
     FROM pair_stats WHERE chain_id = $1 AND pool = ANY($2::text[])`,
    [chainId, pools.map((p) => p.toLowerCase())],
  );
  return new Map(
    rows.map((r) => [
      r.pool,
      {
        pool: r.pool,
        volumeUsd24h: r.volume_usd_24h,
        liquidityUsd: r.liquidity_usd,
        priceChange24h: r.price_change_24h,
        buys24h: r.buys_24h,
        sells24h: r.sells_24h,
        updatedAt: r.updated_at,
      },
    ]),
  );
}
