/** Table `token_usd_candles`: the USD series of tokens (5 min, 1 h) over their qualifying pools. */
import { exactText, parseExact } from "../internal/exact-decimal.js";
import type { SeriesCandle } from "../model/index.js";
import { bucketRows, float8Columns, OHLCV } from "./bucket-rows.js";
import { iso, type Queryable } from "./db.js";
import { columnsOf } from "./unnest.js";

export type SeriesKey = { token: string; resolution: number; bucket: number };
export type SeriesRow = SeriesCandle & { token: string; resolution: number };

/** The candle columns of a token_usd_candles row. */
type SeriesCandleDbRow = {
  bucket: Date;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  volume_exact: string;
  sum_pv_exact: string;
  sum_v_exact: string;
  average: number;
  first_key: number;
  last_key: number;
};

/** The series candle of a token_usd_candles row. */
const toSeriesCandle = (r: SeriesCandleDbRow): SeriesCandle => ({
  bucket: r.bucket.getTime(),
  open: r.open,
  high: r.high,
  low: r.low,
  close: r.close,
  volume: r.volume,
  volumeExact: parseExact(r.volume_exact),
  sumPvExact: parseExact(r.sum_pv_exact),
  sumVExact: parseExact(r.sum_v_exact),
  average: r.average,
  firstKey: r.first_key,
  lastKey: r.last_key,
});

type SeriesDbRow = SeriesCandleDbRow & { token: string; resolution: number };

const toSeriesRow = (r: SeriesDbRow): SeriesRow => ({
  token: r.token,
  resolution: r.resolution,
  ...toSeriesCandle(r),
});

/** The columns of a series candle besides its place. */
const SERIES_COLUMNS = columnsOf<SeriesRow>({
  ...float8Columns(OHLCV, "", (c: SeriesRow, field) => c[field]),
  volume_exact: ["decimal", (c) => exactText(c.volumeExact)],
  sum_pv_exact: ["decimal", (c) => exactText(c.sumPvExact)],
  sum_v_exact: ["decimal", (c) => exactText(c.sumVExact)],
  average: ["float8", (c) => c.average],
  first_key: ["bigint", (c) => c.firstKey],
  last_key: ["bigint", (c) => c.lastKey],
});

const series = bucketRows({
  table: "token_usd_candles",
  owner: "token",
  columns: SERIES_COLUMNS,
  select: `c.token, c.resolution, c.bucket, c.open, c.high, c.low, c.close, c.volume, c.volume_exact::text,
    c.sum_pv_exact::text, c.sum_v_exact::text, c.average, c.first_key, c.last_key`,
  rowOf: toSeriesRow,
});

/** The stored series candles of the given keys (bucket-bounded, as `loadCandles`). */
export const loadSeriesCandles = series.load;
/** Inserts or replaces series candles. */
export const saveSeriesCandles = series.save;
/** Deletes the series candles of `tokens` that hold a trade above `key`; returns where they were, with their first trade's key. */
export const deleteSeriesAbove = series.deleteAbove;

/** A USD candle of a token's series: its bucket's start (ms), prices and volume (token units). */
export type SeriesChartCandle = {
  bucket: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
};

/**
 * A token's series candles of one stored resolution with bucket in [from, to] (ms), ascending: as
 * stored, or rolled up in Postgres to intervals of `rollUpTo` seconds (open of the first, high and
 * low of all, close of the last, the volume the exact sum of the stored exact volumes rounded once:
 * `numeric::float8` rounds correctly).
 */
export async function loadSeriesChart(
  db: Queryable,
  options: {
    chainId: number;
    token: string;
    resolution: number;
    from: number;
    to: number;
    rollUpTo?: number;
  },
): Promise<SeriesChartCandle[]> {
  const where = `WHERE chain_id = $1 AND token = $2 AND resolution = $3 AND bucket >= $4 AND bucket <= $5`;
  const seconds = options.rollUpTo === undefined ? undefined : Math.trunc(options.rollUpTo);
  const sql =
    seconds === undefined
      ? `SELECT date_part('epoch', bucket) * 1000 AS bucket, open, high, low, close, volume
         FROM token_usd_candles ${where} ORDER BY token_usd_candles.bucket`
      : `SELECT floor(date_part('epoch', bucket) / ${seconds}) * ${seconds * 1000} AS bucket,
           (array_agg(open ORDER BY bucket))[1] AS open, max(high) AS high, min(low) AS low,
           (array_agg(close ORDER BY bucket DESC))[1] AS close, sum(volume_exact)::float8 AS volume
         FROM token_usd_candles ${where} GROUP BY 1 ORDER BY 1`;
  const { rows } = await db.query<SeriesChartCandle>(sql, [
    options.chainId,
    options.token,
    options.resolution,
    iso(options.from),
    iso(options.to),
  ]);
  return rows;
}

/** The hourly averages (SeriesCandle's `average`) of a token in [from, to] (ms), ascending. */
export async function loadHourlyAverages(
  db: Queryable,
  options: { chainId: number; token: string; from: number; to: number },
): Promise<{ bucket: number; average: number }[]> {
  const { rows } = await db.query<{ bucket: number; average: number }>(
    `SELECT date_part('epoch', bucket) * 1000 AS bucket, average FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket >= $3 AND bucket <= $4
     ORDER BY token_usd_candles.bucket`,
    [options.chainId, options.token, iso(options.from), iso(options.to)],
  );
  return rows;
}

/** The token's last hourly average before `before` (ms), or null. */
export async function loadHourlyAverageBefore(
  db: Queryable,
  options: { chainId: number; token: string; before: number },
): Promise<number | null> {
  const { rows } = await db.query<{ average: number }>(
    `SELECT average FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket < $3
     ORDER BY bucket DESC LIMIT 1`,
    [options.chainId, options.token, iso(options.before)],
  );
  return rows[0]?.average ?? null;
}
