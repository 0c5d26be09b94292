/**
 * Table `candles`: the pool candles (60 s, 1 h, 1 d) of token0 in token1, with both volumes, and
 * the USD candles of both tokens (migration 010).
 */
import { exactText, parseExact } from "../internal/exact-decimal.js";
import type { Candle, ChartCandle, UsdOhlcv } from "../model/index.js";
import { bucketRows, float8Columns, OHLC, OHLCV } from "./bucket-rows.js";
import { iso, type Queryable } from "./db.js";
import { columnsOf } from "./unnest.js";

export type CandleKey = { pool: string; resolution: number; bucket: number };
export type CandleRow = Candle & { pool: string; resolution: number };

/**
 * A candles row as node-pg gives it: the candle's fields whose column has their name, the USD
 * candles' columns (open_usd0 … volume_usd1), the exact sums as text.
 */
type CandleDbRow = Omit<Candle, "bucket" | "volumeUsd" | "usd0" | "usd1" | "firstKey" | "lastKey" | "sums"> &
  Record<`${keyof UsdOhlcv}_usd${0 | 1}`, number | null> & {
    pool: string;
    resolution: number;
    bucket: Date;
    volume_usd: number;
    first_key: number;
    last_key: number;
    volume0_exact: string;
    volume1_exact: string;
    volume_usd_exact: string;
    volume_usd0_exact: string | null;
    volume_usd1_exact: string | null;
  };

/** A side's USD candle from its five columns; null when the bucket had no USD-priced trade of it. */
function usdOf(
  open: number | null,
  high: number | null,
  low: number | null,
  close: number | null,
  volume: number | null,
): UsdOhlcv | null {
  if (open === null || high === null || low === null || close === null || volume === null) return null;
  return { open, high, low, close, volume };
}

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
  usd0: usdOf(r.open_usd0, r.high_usd0, r.low_usd0, r.close_usd0, r.volume_usd0),
  usd1: usdOf(r.open_usd1, r.high_usd1, r.low_usd1, r.close_usd1, r.volume_usd1),
  trades: r.trades,
  buys0: r.buys0,
  firstKey: r.first_key,
  lastKey: r.last_key,
  sums: {
    volume0: parseExact(r.volume0_exact),
    volume1: parseExact(r.volume1_exact),
    volumeUsd: parseExact(r.volume_usd_exact),
    usd0: r.volume_usd0_exact === null ? null : parseExact(r.volume_usd0_exact),
    usd1: r.volume_usd1_exact === null ? null : parseExact(r.volume_usd1_exact),
  },
});

/** The columns of a candle besides its place. */
const CANDLE_COLUMNS = columnsOf<CandleRow>({
  ...float8Columns(OHLC, "", (c: CandleRow, field) => c[field]),
  ...float8Columns(OHLC, "1", (c: CandleRow, field) => c[`${field}1`]),
  volume0: ["float8", (c) => c.volume0],
  volume1: ["float8", (c) => c.volume1],
  volume_usd: ["float8", (c) => c.volumeUsd],
  ...float8Columns(OHLCV, "_usd0", (c: CandleRow, field) => c.usd0?.[field] ?? null),
  ...float8Columns(OHLCV, "_usd1", (c: CandleRow, field) => c.usd1?.[field] ?? null),
  trades: ["int", (c) => c.trades],
  buys0: ["int", (c) => c.buys0],
  first_key: ["bigint", (c) => c.firstKey],
  last_key: ["bigint", (c) => c.lastKey],
  volume0_exact: ["decimal", (c) => exactText(c.sums.volume0)],
  volume1_exact: ["decimal", (c) => exactText(c.sums.volume1)],
  volume_usd_exact: ["decimal", (c) => exactText(c.sums.volumeUsd)],
  volume_usd0_exact: ["decimal", (c) => (c.sums.usd0 === null ? null : exactText(c.sums.usd0))],
  volume_usd1_exact: ["decimal", (c) => (c.sums.usd1 === null ? null : exactText(c.sums.usd1))],
});

const candles = bucketRows({
  table: "candles",
  owner: "pool",
  columns: CANDLE_COLUMNS,
  select: `c.pool, c.resolution, c.bucket, c.open, c.high, c.low, c.close, c.open1, c.high1, c.low1, c.close1,
    c.volume0, c.volume1, c.volume_usd,
    c.open_usd0, c.high_usd0, c.low_usd0, c.close_usd0, c.volume_usd0,
    c.open_usd1, c.high_usd1, c.low_usd1, c.close_usd1, c.volume_usd1,
    c.trades, c.buys0, c.first_key, c.last_key,
    c.volume0_exact::text, c.volume1_exact::text, c.volume_usd_exact::text,
    c.volume_usd0_exact::text, c.volume_usd1_exact::text`,
  rowOf: toCandleRow,
});

/** The stored candles of the given keys (the 1-minute partitions of their weeks only). */
export const loadCandles = candles.load;
/** Inserts or replaces candles. */
export const saveCandles = candles.save;
/** Deletes the candles of `pools` that hold a trade above `key`; returns where they were, with their first trade's key. */
export const deleteCandlesAbove = candles.deleteAbove;

/**
 * A bucket's start in ms as float8: date_part is float8 arithmetic, where extract() computes a
 * numeric for every row (a third of the statement's time over 2,160 hourly candles). Exact either
 * way: buckets are whole seconds.
 */
const BUCKET_MS = "date_part('epoch', bucket) * 1000 AS time";

/** The stored columns of one side's chart candle: prices, the matching volume, and the one set only when priced. */
function sideColumns(side: 0 | 1, currency: "token" | "usd") {
  if (currency === "usd") {
    const c = (name: string) => `${name}_usd${side}`;
    return {
      open: c("open"),
      high: c("high"),
      low: c("low"),
      close: c("close"),
      volume: c("volume"),
      exact: `volume_usd${side}_exact`,
      priced: c("open"),
    };
  }
  return side === 0
    ? {
        open: "open",
        high: "high",
        low: "low",
        close: "close",
        volume: "volume0",
        exact: "volume0_exact",
        priced: null,
      }
    : {
        open: "open1",
        high: "high1",
        low: "low1",
        close: "close1",
        volume: "volume1",
        exact: "volume1_exact",
        priced: null,
      };
}

const CHART_FIELDS = ["open", "high", "low", "close", "volume"] as const;

/** A side's stored chart fields, named as CHART_FIELDS. */
const chartFields = (c: ReturnType<typeof sideColumns>): string =>
  CHART_FIELDS.map((field) => `${c[field]} AS ${field}`).join(", ");

/** A bucket with trades but none USD-priced for this token has no USD candle. */
const pricedFilter = (c: ReturnType<typeof sideColumns>): string =>
  c.priced === null ? "" : `AND ${c.priced} IS NOT NULL`;

/**
 * One side's chart candles (columns `time` in ms and CHART_FIELDS) of the stored candles of chain
 * $1, pool $2, resolution $3 with bucket in [$4, $5) (`gate`: a further condition, first): as
 * stored, or rolled up to intervals of `rollUpTo` seconds in Postgres: open of the first, high
 * and low of all, close of the last, and the volume the exact sum of the stored exact volumes
 * (numeric) rounded once (`numeric::float8` rounds correctly). Side 1 rolls up its own stored
 * prices (each trade's reciprocal rounded once). `order`: the ORDER BY for the caller to place
 * (`bucket` for stored candles, `time` for intervals).
 */
function chartSource(
  side: 0 | 1,
  currency: "token" | "usd",
  rollUpTo: number | undefined,
  gate = "",
): { sql: string; order: string } {
  const c = sideColumns(side, currency);
  const where = `WHERE ${gate} chain_id = $1 AND pool = $2 AND resolution = $3 AND bucket >= $4 AND bucket < $5
    ${pricedFilter(c)}`;
  if (rollUpTo === undefined) {
    // With the bucket when gated (inside an aggregate ordered by it, read in the index's order).
    const bucket = gate === "" ? "" : "bucket, ";
    return { sql: `SELECT ${bucket}${BUCKET_MS}, ${chartFields(c)} FROM candles ${where}`, order: "bucket" };
  }
  const seconds = Math.trunc(rollUpTo);
  return {
    sql: `SELECT floor(date_part('epoch', bucket) / ${seconds}) * ${seconds * 1000} AS time,
       (array_agg(${c.open} ORDER BY bucket))[1] AS open, max(${c.high}) AS high, min(${c.low}) AS low,
       (array_agg(${c.close} ORDER BY bucket DESC))[1] AS close, sum(${c.exact})::float8 AS volume
     FROM candles ${where}
     GROUP BY 1`,
    order: "time",
  };
}

/**
 * What a packed candle's value is when the stored one is NULL (a quiet NaN with a payload that
 * no float8 arithmetic of Postgres gives; read back as null): its two 32-bit halves.
 */
const PACKED_NULL = [0x7ff80000, 0xdead0001] as const;
/** A packed candle: its time, then CHART_FIELDS, 8 bytes each (float8send: IEEE 754, big-endian). */
const PACKED_BYTES = (1 + CHART_FIELDS.length) * 8;

/**
 * Candles per row of loadAssetChartCandles' answer: 1,024 (48 kB, 66 kB of base64). One text value
 * past 128 kB (90 days of hourly candles: 140 kB) is a string V8 puts in its large-object space,
 * on pages fresh from the kernel at each answer, and it made node-pg's reader grow its buffer
 * past the socket's 64 kB reads.
 */
export const PACKED_PIECE_CANDLES = 1024;
const PACKED_PIECE_BYTES = PACKED_PIECE_CANDLES * PACKED_BYTES;

/** PACKED_NULL as an SQL bytea literal. */
const PACKED_NULL_BYTEA = `'\\x${PACKED_NULL.map((half) => half.toString(16).padStart(8, "0")).join("")}'::bytea`;

/** A float8 expression as its 8 bytes, PACKED_NULL for NULL. */
const packed = (expression: string) => `coalesce(float8send(${expression}), ${PACKED_NULL_BYTEA})`;

/** The candles of a packed bytea (PACKED_BYTES each), as loadChartCandles gives them. */
function unpackCandles(bytes: Buffer): ChartCandle[] {
  if (bytes.length % PACKED_BYTES !== 0) {
    throw new Error(`packed candles: ${bytes.length} bytes is not a whole number of candles`);
  }
  const value = (at: number): number | null =>
    bytes.readUInt32BE(at) === PACKED_NULL[0] && bytes.readUInt32BE(at + 4) === PACKED_NULL[1]
      ? null
      : bytes.readDoubleBE(at);
  const out: ChartCandle[] = new Array(bytes.length / PACKED_BYTES);
  for (let i = 0, at = 0; at < bytes.length; i++, at += PACKED_BYTES) {
    out[i] = {
      time: value(at) as number,
      open: value(at + 8) as number,
      high: value(at + 16) as number,
      low: value(at + 24) as number,
      close: value(at + 32) as number,
      volume: value(at + 40) as number,
    };
  }
  return out;
}

/**
 * `loadChartCandles` of the side of `asset` in the pool, with the pool looked up in the same
 * statement (one round trip instead of two): undefined when the pool is not
 * known, `side: null` when `asset` is neither of its tokens (no candles read), else the side
 * (0 when `asset` is token0) and the candles as `loadChartCandles` gives them for it.
 *
 * The candles come as bytes of their doubles (float8send, 48 bytes a candle): the exact
 * values of the rows, without a text value, a string and a parsed number per field and an object
 * per row (2,160 rows of a 90-day hourly chart made ~1.5 MB of garbage in node-pg; the packed
 * bytes are 104 kB, read in pieces of PACKED_PIECE_CANDLES candles). Pieces, not one value: a
 * single text past 128 kB is a string in V8's large-object space, on fresh pages at every answer.
 */
export async function loadAssetChartCandles(
  db: Queryable,
  options: {
    chainId: number;
    pool: string;
    asset: string;
    currency?: "token" | "usd";
    resolution: number;
    from: number;
    to: number;
    /** Rolled up to intervals of this many seconds (chartSource), else the stored candles. */
    rollUpTo?: number | undefined;
  },
): Promise<{ side: 0 | 1; candles: ChartCandle[] } | { side: null } | undefined> {
  const currency = options.currency ?? "token";
  // One aggregate per side, each gated by the side once (a one-time filter on the outer row): the
  // rows read carry that side's columns as they are, without a CASE per field and row (90 days
  // of hourly candles: 1.2–1.3 against 1.7–1.8 ms of execution). Stored candles are aggregated in
  // the index's order (from Postgres 16 on read presorted, not sorted).
  const side = (n: 0 | 1) => {
    const source = chartSource(n, currency, options.rollUpTo, `p.side = ${n} AND`);
    const values = ["time", ...CHART_FIELDS].map(packed).join(" || ");
    return `LEFT JOIN LATERAL (
       SELECT string_agg(${values}, ''::bytea ORDER BY ${source.order}) AS packed FROM (${source.sql}) s
     ) c${n} ON true`;
  };
  // The bytes in pieces of PACKED_PIECE_CANDLES candles, a row each (none when there is no candle).
  // Sent as base64 (its newlines ignored by the decoder), not as bytea's hexadecimal: for 90 days
  // of hourly candles Postgres took 1.8 against 2.9 ms (its text of the hexadecimal was 1.7 ms of
  // serialising), and node-pg's decoding of the text and the bytes 1.1 against 1.6 ms.
  const { rows } = await db.query<{ side: 0 | 1 | null; packed: string | null }>(
    `SELECT p.side, encode(substring(b.bytes FROM at FOR ${PACKED_PIECE_BYTES}), 'base64') AS packed
     FROM (SELECT CASE WHEN token0 = $6 THEN 0 WHEN token1 = $6 THEN 1 END AS side
           FROM pools WHERE chain_id = $1 AND address = $2) p
     ${side(0)}
     ${side(1)}
     CROSS JOIN LATERAL (SELECT coalesce(c0.packed, c1.packed) AS bytes) b
     LEFT JOIN LATERAL generate_series(1, length(b.bytes), ${PACKED_PIECE_BYTES}) AS at ON true
     ORDER BY at`,
    [options.chainId, options.pool, options.resolution, iso(options.from), iso(options.to), options.asset],
  );
  const first = rows[0];
  if (!first) return undefined;
  if (first.side === null) return { side: null };
  // No candle in the range: no bytes.
  if (first.packed === null) return { side: first.side, candles: [] };
  return {
    side: first.side,
    candles: rows.flatMap((row) => unpackCandles(Buffer.from(row.packed as string, "base64"))),
  };
}

/**
 * The stored candles of a pair at one resolution with buckets in [from, to) (ms), ascending, from
 * one token's side: side 0 prices token0 in token1 with token0's volume; side 1 prices token1 in
 * token0 with token1's volume, from its own stored OHLC (migration 004: each trade's exact
 * reciprocal rounded once; the reciprocal of a rounded side-0 double would be off in the last place).
 * With `currency: "usd"`, the side's token's USD candles (migration 010), buckets without one left out.
 * With `rollUpTo`, the intervals of that many seconds rolled up from them (chartSource).
 */
export async function loadChartCandles(db: Queryable, options: ChartRead): Promise<ChartCandle[]> {
  const source = chartSource(options.side, options.currency ?? "token", options.rollUpTo);
  const { rows } = await db.query<ChartCandle>(`${source.sql} ORDER BY ${source.order}`, [
    options.chainId,
    options.pool,
    options.resolution,
    iso(options.from),
    iso(options.to),
  ]);
  return rows;
}

type ChartRead = {
  chainId: number;
  pool: string;
  side: 0 | 1;
  currency?: "token" | "usd";
  resolution: number;
  from: number;
  to: number;
  /** Rolled up to intervals of this many seconds (chartSource), else the stored candles. */
  rollUpTo?: number | undefined;
};

/**
 * The last stored candle of a pair at one resolution with its bucket before `before` (ms) and, when
 * given, at or after `from`, from one side (and currency, as `loadChartCandles`): the close that
 * empty intervals after it carry. Undefined when the pair has none there (its first trade is
 * later). Walks the primary key backwards.
 */
export async function loadChartCandleBefore(
  db: Queryable,
  options: {
    chainId: number;
    pool: string;
    side: 0 | 1;
    currency?: "token" | "usd";
    resolution: number;
    before: number;
    from?: number | undefined;
  },
): Promise<ChartCandle | undefined> {
  const c = sideColumns(options.side, options.currency ?? "token");
  const { rows } = await db.query<ChartCandle>(
    `SELECT ${BUCKET_MS}, ${chartFields(c)}
     FROM candles
     WHERE chain_id = $1 AND pool = $2 AND resolution = $3 AND bucket < $4
       AND ($5::timestamptz IS NULL OR bucket >= $5) ${pricedFilter(c)}
     ORDER BY bucket DESC
     LIMIT 1`,
    [
      options.chainId,
      options.pool,
      options.resolution,
      iso(options.before),
      options.from === undefined ? null : iso(options.from),
    ],
  );
  return rows[0];
}
