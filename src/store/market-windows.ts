/**
 * Tables `pair_windows`, `token_windows` and `market_sync`: the stored figures of the market
 * windows (5m, 1h, 6h, 24h) of pairs and tokens (beside their liquidity, stats.ts), what they are made from (reads of the trade
 * buckets and maker rows), how far they are built, and the API's reads of them.
 */
import {
  finite,
  type PoolPriceState,
  type ProtocolName,
  type WindowFigures,
  type WindowInputs,
  type WindowSpan,
  type WindowsRow,
} from "../model/index.js";
import { chunks, iso, type Queryable } from "./db.js";
import { MAKER_TABLES } from "./makers.js";
import { type PoolStateDbRow, poolStateColumns, poolStateJoin, poolStateOf } from "./pricing-state.js";
import { BUCKET_TABLES, type BucketKind } from "./trade-buckets.js";
import { type Column, type Columns, columnsOf, unnest } from "./unnest.js";

/** The suffixes of the window columns, in the order of the windows (5m, 1h, 6h, 24h). */
export const WINDOW_SUFFIXES = ["5m", "1h", "6h", "24h"] as const;

const WINDOW_TABLES = {
  pool: { table: "pair_windows", owner: "pool", last: "last_price" },
  token: { table: "token_windows", owner: "token", last: "last_usd" },
} as const;

/** A bucket range to read: [from, to) of one resolution, `to` null for no end. */
type Range = { resolution: number; from: number; to: number | null };

/**
 * What the windows of `owners` are made from, at the given spans: the sums of their buckets in
 * each window (volume summed exactly in numeric, rounded once to float8), the number of makers
 * whose latest trade lies in each window, the price after the latest trade before each window's
 * start and after the first trade in it, the latest price and the first trade's time. `ranges`
 * are the disjoint bucket ranges that hold every window's rows (pricing/windows.ts bucketRanges).
 */
export async function loadWindowInputs(
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  owners: readonly string[],
  spans: readonly WindowSpan[],
  ranges: readonly Range[],
): Promise<WindowInputs[]> {
  const out: WindowInputs[] = [];
  const b = BUCKET_TABLES[kind];
  const m = MAKER_TABLES[kind];
  for (const part of chunks([...owners].sort(), 1000)) {
    const params: unknown[] = [chainId, part];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const scans = ranges.map(
      (r) =>
        `SELECT ${b.owner} AS owner, resolution, bucket, volume_usd, trades, buys FROM ${b.table}
         WHERE chain_id = $1 AND ${b.owner} = ANY($2::text[]) AND resolution = ${p(r.resolution)}::int
           AND bucket >= ${p(iso(r.from))}::timestamptz${r.to === null ? "" : ` AND bucket < ${p(iso(r.to))}::timestamptz`}`,
    );
    const inWindow = spans.map((s) => {
      const [start, hoursFrom, hoursTo] = [s.start, s.hoursFrom, s.hoursTo].map(
        (t) => `${p(iso(t))}::timestamptz`,
      );
      return `((resolution = 60 AND bucket >= ${start} AND (bucket < ${hoursFrom} OR bucket >= ${hoursTo}))
        OR (resolution = 3600 AND bucket >= ${hoursFrom} AND bucket < ${hoursTo}))`;
    });
    const sums = await db.query<Record<string, string | number | null> & { owner: string }>(
      `WITH b AS (${scans.join("\nUNION ALL\n")})
       SELECT owner, ${inWindow
         .map(
           (w, i) => `COALESCE(sum(volume_usd) FILTER (WHERE ${w}), 0)::float8 AS v${i},
             COALESCE(sum(trades) FILTER (WHERE ${w}), 0) AS t${i}, COALESCE(sum(buys) FILTER (WHERE ${w}), 0) AS b${i}`,
         )
         .join(", ")}
       FROM b GROUP BY owner`,
      params,
    );

    const makerParams: unknown[] = [chainId, part, ...spans.map((s) => iso(s.start))];
    const earliest = `$${makerParams.push(iso(Math.min(...spans.map((s) => s.start))))}`;
    const makers = await db.query<Record<string, string | number> & { owner: string }>(
      `SELECT ${m.owner} AS owner, ${spans.map((_, i) => `count(*) FILTER (WHERE last_time >= $${i + 3}::timestamptz) AS m${i}`).join(", ")}
       FROM ${m.table} WHERE chain_id = $1 AND ${m.owner} = ANY($2::text[]) AND last_time >= ${earliest}::timestamptz
       GROUP BY ${m.owner}`,
      makerParams,
    );

    const priced = `chain_id = $1 AND ${b.owner} = o.owner AND resolution = 60 AND ${b.close} IS NOT NULL`;
    const prices = await db.query<Record<string, number | null> & { owner: string; first_time: Date | null }>(
      `SELECT o.owner, ${spans
        .map(
          (_, i) => `(SELECT ${b.close} FROM ${b.table} WHERE ${priced} AND bucket < $${i + 3}::timestamptz
             ORDER BY bucket DESC LIMIT 1) AS before${i},
           (SELECT ${b.open} FROM ${b.table} WHERE ${priced} AND bucket >= $${i + 3}::timestamptz
             ORDER BY bucket LIMIT 1) AS first${i}`,
        )
        .join(", ")},
         (SELECT ${b.close} FROM ${b.table} WHERE ${priced} ORDER BY bucket DESC LIMIT 1) AS last,
         (SELECT first_time FROM ${b.table} WHERE chain_id = $1 AND ${b.owner} = o.owner AND resolution = 60
            ORDER BY bucket LIMIT 1) AS first_time
       FROM unnest($2::text[]) AS o(owner)`,
      [chainId, part, ...spans.map((s) => iso(s.start))],
    );

    const sumsOf = new Map(sums.rows.map((r) => [r.owner, r]));
    const makersOf = new Map(makers.rows.map((r) => [r.owner, r]));
    for (const r of prices.rows) {
      const s = sumsOf.get(r.owner);
      const mk = makersOf.get(r.owner);
      out.push({
        owner: r.owner,
        sums: spans.map((_, i) => ({
          volumeUsd: Number(s?.[`v${i}`] ?? 0),
          trades: Number(s?.[`t${i}`] ?? 0),
          buys: Number(s?.[`b${i}`] ?? 0),
          makers: Number(mk?.[`m${i}`] ?? 0),
        })),
        before: spans.map((_, i) => r[`before${i}`] ?? null),
        firstIn: spans.map((_, i) => r[`first${i}`] ?? null),
        last: r.last ?? null,
        firstTradeAt: r.first_time === null ? null : r.first_time.getTime(),
      });
    }
  }
  return out;
}

/** The five columns of each window: price_change_5m, volume_usd_5m, buys_5m, sells_5m, makers_5m, … */
function figureColumns(): Columns<WindowsRow> {
  const out: Record<string, Column<WindowsRow>> = {};
  WINDOW_SUFFIXES.forEach((suffix, i) => {
    const w = (row: WindowsRow) => row.windows[i] as WindowFigures;
    out[`price_change_${suffix}`] = ["float8", (row) => finite(w(row).priceChange)];
    out[`volume_usd_${suffix}`] = ["float8", (row) => finite(w(row).volumeUsd) ?? 0];
    out[`buys_${suffix}`] = ["int", (row) => w(row).buys];
    out[`sells_${suffix}`] = ["int", (row) => w(row).sells];
    out[`makers_${suffix}`] = ["int", (row) => w(row).makers];
  });
  return out;
}

const ROW_COLUMNS = columnsOf<WindowsRow>({
  owner: ["text", (r) => r.owner],
  minute: ["timestamptz", (r) => new Date(r.minute)],
  ...figureColumns(),
  last: ["float8", (r) => finite(r.last)],
  first_trade_at: ["timestamptz", (r) => (r.firstTradeAt === null ? null : new Date(r.firstTradeAt))],
});

/**
 * The figure columns each kind's windows write. A token's 24-hour change is not one of them: it is
 * the change of its USD price (the price the API shows, which moves with reference tokens without a
 * trade of its own), kept by the token statistics (stats.ts saveTokenStats).
 */
const FIGURE_NAMES = {
  pool: WINDOW_SUFFIXES.flatMap((s) => [
    `price_change_${s}`,
    `volume_usd_${s}`,
    `buys_${s}`,
    `sells_${s}`,
    `makers_${s}`,
  ]),
  token: WINDOW_SUFFIXES.flatMap((s) => [
    ...(s === "24h" ? [] : [`price_change_${s}`]),
    `volume_usd_${s}`,
    `buys_${s}`,
    `sells_${s}`,
    `makers_${s}`,
  ]),
} as const;

/**
 * Upserts the windows of pools or tokens (an owner left without any trade by a rollback: its
 * figures 0, its first trade null; its liquidity stays). A pool's new row takes its tokens from
 * `pools` (the per-token rank indexes). Returns the rows written.
 */
export async function saveWindows(
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  rows: readonly WindowsRow[],
): Promise<number> {
  const t = WINDOW_TABLES[kind];
  const figures = FIGURE_NAMES[kind];
  let written = 0;
  for (const part of chunks(rows)) {
    const r = unnest("r", ROW_COLUMNS, part, 2);
    const columns = ["minute", ...figures, t.last, "first_trade_at"];
    const values = ["minute", ...figures, "last", "first_trade_at"].map((c) => `r.${c}`);
    const tokens =
      kind === "pool"
        ? {
            columns: ", token0, token1",
            values: ", p.token0, p.token1",
            join: "LEFT JOIN pools p ON p.chain_id = $1 AND p.address = r.owner",
          }
        : { columns: "", values: "", join: "" };
    const result = await db.query(
      `INSERT INTO ${t.table} (chain_id, ${t.owner}, ${columns.join(", ")}${tokens.columns})
       SELECT $1, r.owner, ${values.join(", ")}${tokens.values} FROM ${r.sql} ${tokens.join}
       ON CONFLICT (chain_id, ${t.owner}) DO UPDATE SET ${columns.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}`,
      [chainId, ...r.params],
    );
    written += result.rowCount ?? 0;
  }
  return written;
}

/**
 * The owners whose stored windows may differ at `minute` from when they were computed, for a
 * slide that cannot rely on the trades that left the windows (first slide, a gap of over a day,
 * a clock that went back): those computed at a later minute, and those with a trade in their
 * 24-hour window then. An owner without either has no trade from 24 hours before it was computed
 * on, so its figures stand.
 */
export async function windowsToRecompute(
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  minute: number,
): Promise<string[]> {
  const t = WINDOW_TABLES[kind];
  const { rows } = await db.query<{ owner: string }>(
    `SELECT ${t.owner} AS owner FROM ${t.table}
     WHERE chain_id = $1 AND (minute > $2 OR buys_24h + sells_24h > 0)`,
    [chainId, iso(minute)],
  );
  return rows.map((r) => r.owner);
}

export type MarketSync = { builtBlock: number; minute: number | null };

/** How far the buckets are built and the windows slid; null before the chain's first batch. */
export async function getMarketSync(db: Queryable, chainId: number): Promise<MarketSync | null> {
  const { rows } = await db.query<{ built_block: number; minute: Date | null }>(
    "SELECT built_block, minute FROM market_sync WHERE chain_id = $1",
    [chainId],
  );
  const r = rows[0];
  return r ? { builtBlock: r.built_block, minute: r.minute === null ? null : r.minute.getTime() } : null;
}

export async function setMarketBuilt(db: Queryable, chainId: number, builtBlock: number): Promise<void> {
  await db.query(
    `INSERT INTO market_sync (chain_id, built_block) VALUES ($1, $2)
     ON CONFLICT (chain_id) DO UPDATE SET built_block = EXCLUDED.built_block`,
    [chainId, builtBlock],
  );
}

export async function setMarketMinute(db: Queryable, chainId: number, minute: number): Promise<void> {
  await db.query(
    `INSERT INTO market_sync (chain_id, built_block, minute) VALUES ($1, -1, $2)
     ON CONFLICT (chain_id) DO UPDATE SET minute = EXCLUDED.minute`,
    [chainId, iso(minute)],
  );
}

// ---------------------------------------------------------------------------------------------
// API reads

/** The stored figures of one window, as read. */
export type StoredWindow = WindowFigures;

type WindowDbColumns = Record<string, number | null>;

const windowSelect = (alias: string) =>
  WINDOW_SUFFIXES.flatMap((s) =>
    ["price_change", "volume_usd", "buys", "sells", "makers"].map((f) => `${alias}.${f}_${s}`),
  ).join(", ");

/** The windows of a row read with windowSelect; null when the pool or token has no trade. */
function windowsOf(r: WindowDbColumns, present: boolean): StoredWindow[] | null {
  if (!present) return null;
  return WINDOW_SUFFIXES.map((s) => ({
    priceChange: r[`price_change_${s}`] ?? null,
    volumeUsd: Number(r[`volume_usd_${s}`] ?? 0),
    buys: Number(r[`buys_${s}`] ?? 0),
    sells: Number(r[`sells_${s}`] ?? 0),
    makers: Number(r[`makers_${s}`] ?? 0),
  }));
}

/** A pair with its tokens, prices, liquidity and windows: what its market record is made of. */
export type PairMarketRow = {
  chainId: number;
  pool: string;
  dex: string;
  factory: string;
  protocol: ProtocolName;
  /** A pool inside a manager: its hook contract and packed parameters (null elsewhere). */
  hooks: string | null;
  parameters: string | null;
  token0: string;
  token1: string;
  symbol0: string | null;
  symbol1: string | null;
  usd0: number | null;
  usd1: number | null;
  liquidityUsd: number | null;
  createdBlock: number;
  /** The creation block's time when any stored row of that block tells it. */
  createdAt: Date | null;
  /** Null when the pair has no trade. */
  windows: StoredWindow[] | null;
  lastPrice: number | null;
  firstTradeAt: Date | null;
};

/** The pairs among `pools` that are known, keyed by address. */
export async function findPairMarkets(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<Map<string, PairMarketRow>> {
  if (pools.length === 0) return new Map();
  const { rows } = await db.query<
    WindowDbColumns & {
      address: string;
      dex: string;
      factory: string;
      protocol: ProtocolName;
      hooks: string | null;
      parameters: string | null;
      token0: string;
      token1: string;
      symbol0: string | null;
      symbol1: string | null;
      usd0: number | null;
      usd1: number | null;
      liquidity_usd: number | null;
      created_block: number;
      created_at: Date | null;
      has_windows: boolean;
      last_price: number | null;
      first_trade_at: Date | null;
    }
  >(
    `SELECT p.address, p.dex, p.factory, p.protocol, p.hooks, p.parameters, p.token0, p.token1, p.created_block,
       t0.symbol AS symbol0, t1.symbol AS symbol1, tp0.usd_price AS usd0, tp1.usd_price AS usd1,
       w.liquidity_usd, w.first_trade_at IS NOT NULL AS has_windows, w.last_price, w.first_trade_at, ${windowSelect("w")},
       COALESCE(
         (SELECT time FROM blocks b WHERE b.chain_id = p.chain_id AND b.number = p.created_block),
         (SELECT block_time FROM swaps s WHERE s.chain_id = p.chain_id AND s.block_number = p.created_block LIMIT 1),
         (SELECT block_time FROM pool_events e WHERE e.chain_id = p.chain_id AND e.block_number = p.created_block LIMIT 1)
       ) AS created_at
     FROM unnest($2::text[]) AS q(address)
     JOIN pools p ON p.chain_id = $1 AND p.address = q.address
     LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
     LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
     LEFT JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
     LEFT JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
     LEFT JOIN pair_windows w ON w.chain_id = p.chain_id AND w.pool = p.address`,
    [chainId, [...pools]],
  );
  return new Map(
    rows.map((r) => [
      r.address,
      {
        chainId,
        pool: r.address,
        dex: r.dex,
        factory: r.factory,
        protocol: r.protocol,
        hooks: r.hooks,
        parameters: r.parameters,
        token0: r.token0,
        token1: r.token1,
        symbol0: r.symbol0,
        symbol1: r.symbol1,
        usd0: r.usd0,
        usd1: r.usd1,
        liquidityUsd: r.liquidity_usd,
        createdBlock: Number(r.created_block),
        createdAt: r.created_at,
        windows: windowsOf(r, r.has_windows),
        lastPrice: r.last_price,
        firstTradeAt: r.first_trade_at,
      },
    ]),
  );
}

/** A token with its price, liquidity, pools and windows: what its market record is made of. */
export type TokenMarketRow = {
  chainId: number;
  token: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  /** Raw total supply (numeric text). */
  totalSupply: string | null;
  usdPrice: number | null;
  liquidityUsd: number | null;
  pools: number;
  windows: StoredWindow[] | null;
  firstTradeAt: Date | null;
};

/** The tokens among `tokens` that are known, keyed by address. */
export async function findTokenMarkets(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
): Promise<Map<string, TokenMarketRow>> {
  if (tokens.length === 0) return new Map();
  const { rows } = await db.query<
    WindowDbColumns & {
      address: string;
      name: string | null;
      symbol: string | null;
      decimals: number | null;
      total_supply: string | null;
      usd_price: number | null;
      liquidity_usd: number | null;
      pools: number;
      has_windows: boolean;
      first_trade_at: Date | null;
    }
  >(
    `SELECT t.address, t.name, t.symbol, t.decimals, t.total_supply, tp.usd_price, w.liquidity_usd,
       (SELECT count(*) FROM pools p WHERE p.chain_id = t.chain_id AND p.token0 = t.address)
         + (SELECT count(*) FROM pools p WHERE p.chain_id = t.chain_id AND p.token1 = t.address) AS pools,
       w.first_trade_at IS NOT NULL AS has_windows, w.first_trade_at, ${windowSelect("w")}
     FROM unnest($2::text[]) AS q(address)
     JOIN tokens t ON t.chain_id = $1 AND t.address = q.address
     LEFT JOIN token_prices tp ON tp.chain_id = t.chain_id AND tp.token = t.address
     LEFT JOIN token_windows w ON w.chain_id = t.chain_id AND w.token = t.address`,
    [chainId, [...tokens]],
  );
  return new Map(
    rows.map((r) => [
      r.address,
      {
        chainId,
        token: r.address,
        name: r.name,
        symbol: r.symbol,
        decimals: r.decimals,
        totalSupply: r.total_supply,
        usdPrice: r.usd_price,
        liquidityUsd: r.liquidity_usd,
        pools: Number(r.pools),
        windows: windowsOf(r, r.has_windows),
        firstTradeAt: r.first_trade_at,
      },
    ]),
  );
}

/** Pools with a trade, by 24-hour USD volume (highest first), then address. */
export async function poolsByVolume(db: Queryable, chainId: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ pool: string }>(
    `SELECT pool FROM pair_windows WHERE chain_id = $1 AND first_trade_at IS NOT NULL
     ORDER BY volume_usd_24h DESC, pool LIMIT $2`,
    [chainId, limit],
  );
  return rows.map((r) => r.pool);
}

/** Pools with a known USD liquidity, highest first, then address. */
export async function poolsByLiquidity(db: Queryable, chainId: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ pool: string }>(
    `SELECT pool FROM pair_windows WHERE chain_id = $1 AND liquidity_usd IS NOT NULL
     ORDER BY liquidity_usd DESC NULLS LAST, pool LIMIT $2`,
    [chainId, limit],
  );
  return rows.map((r) => r.pool);
}

/** Pools with at least one trade, created most recently first (then by address). */
export async function newestTradedPools(db: Queryable, chainId: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ address: string }>(
    `SELECT p.address FROM pools p
     WHERE p.chain_id = $1 AND EXISTS (
       SELECT 1 FROM pair_windows w WHERE w.chain_id = p.chain_id AND w.pool = p.address AND w.first_trade_at IS NOT NULL
     )
     ORDER BY p.created_block DESC, p.address LIMIT $2`,
    [chainId, limit],
  );
  return rows.map((r) => r.address);
}

/** A pool whose 1-hour USD volume reaches `minVolumeUsd1h`, with what its depth is made from. */
export type TrendingRow = {
  pool: string;
  protocol: ProtocolName;
  decimals0: number | null;
  decimals1: number | null;
  usd0: number | null;
  usd1: number | null;
  volumeUsd1h: number;
  volumeUsd24h: number;
  /** The pool's pricing state (null before its first event). */
  state: PoolPriceState | null;
};

/** The pools whose 1-hour USD volume is at least `minVolumeUsd1h`, with their pricing state and tokens' prices. */
export async function trendingCandidates(
  db: Queryable,
  chainId: number,
  minVolumeUsd1h: number,
): Promise<TrendingRow[]> {
  const { rows } = await db.query<
    PoolStateDbRow & {
      pool: string;
      protocol: ProtocolName;
      decimals0: number | null;
      decimals1: number | null;
      usd0: number | null;
      usd1: number | null;
      volume_usd_1h: number;
      volume_usd_24h: number;
    }
  >(
    `SELECT w.pool, p.protocol, t0.decimals AS decimals0, t1.decimals AS decimals1,
       tp0.usd_price AS usd0, tp1.usd_price AS usd1, w.volume_usd_1h, w.volume_usd_24h, ${poolStateColumns}
     FROM pair_windows w
     JOIN pools p ON p.chain_id = w.chain_id AND p.address = w.pool
     LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
     LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
     LEFT JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
     LEFT JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
     ${poolStateJoin}
     WHERE w.chain_id = $1 AND w.volume_usd_1h >= $2 AND w.first_trade_at IS NOT NULL`,
    [chainId, minVolumeUsd1h],
  );
  return rows.map((r) => ({
    pool: r.pool,
    protocol: r.protocol,
    decimals0: r.decimals0,
    decimals1: r.decimals1,
    usd0: r.usd0,
    usd1: r.usd1,
    volumeUsd1h: r.volume_usd_1h,
    volumeUsd24h: r.volume_usd_24h,
    state: poolStateOf(r),
  }));
}

/** Per factory of a chain: its pools and their 24-hour USD volumes (pools with a trade), by address. */
export async function factoryFigures(
  db: Queryable,
  chainId: number,
): Promise<{
  pools: Map<string, number>;
  volumes: { factory: string; pool: string; volumeUsd24h: number }[];
}> {
  const [counts, volumes] = await Promise.all([
    db.query<{ factory: string; pools: number }>(
      "SELECT factory, count(*) AS pools FROM pools WHERE chain_id = $1 GROUP BY factory",
      [chainId],
    ),
    db.query<{ factory: string; pool: string; volume_usd_24h: number }>(
      `SELECT p.factory, w.pool, w.volume_usd_24h FROM pair_windows w
       JOIN pools p ON p.chain_id = w.chain_id AND p.address = w.pool
       WHERE w.chain_id = $1 AND w.volume_usd_24h > 0`,
      [chainId],
    ),
  ]);
  return {
    pools: new Map(counts.rows.map((r) => [r.factory, Number(r.pools)])),
    volumes: volumes.rows.map((r) => ({ factory: r.factory, pool: r.pool, volumeUsd24h: r.volume_usd_24h })),
  };
}

/** The numbers of pools and tokens stored per chain. */
export async function chainCounts(
  db: Queryable,
  chainIds: readonly number[],
): Promise<Map<number, { pools: number; tokens: number }>> {
  const { rows } = await db.query<{ chain_id: number; pools: number; tokens: number }>(
    `SELECT c.id AS chain_id,
       (SELECT count(*) FROM pools p WHERE p.chain_id = c.id) AS pools,
       (SELECT count(*) FROM tokens t WHERE t.chain_id = c.id) AS tokens
     FROM unnest($1::int[]) AS c(id)`,
    [[...chainIds]],
  );
  return new Map(rows.map((r) => [r.chain_id, { pools: Number(r.pools), tokens: Number(r.tokens) }]));
}
