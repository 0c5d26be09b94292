/** Table `token_usd_candles`: the USD series of tokens (5 min, 1 h) over their qualifying pools. */
import { type ExactDecimal, exactText, parseExact } from "../internal/exact-decimal.js";
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
  sum_pv: number;
  sum_v: number;
  sum_pv_exact: string;
  sum_v_exact: string;
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
  sumPv: r.sum_pv,
  sumV: r.sum_v,
  sumPvExact: parseExact(r.sum_pv_exact),
  sumVExact: parseExact(r.sum_v_exact),
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
  sum_pv: ["float8", (c) => c.sumPv],
  sum_v: ["float8", (c) => c.sumV],
  sum_pv_exact: ["decimal", (c) => exactText(c.sumPvExact)],
  sum_v_exact: ["decimal", (c) => exactText(c.sumVExact)],
  first_key: ["bigint", (c) => c.firstKey],
  last_key: ["bigint", (c) => c.lastKey],
});

const series = bucketRows({
  table: "token_usd_candles",
  owner: "token",
  columns: SERIES_COLUMNS,
  select: `c.token, c.resolution, c.bucket, c.open, c.high, c.low, c.close, c.volume, c.volume_exact::text,
    c.sum_pv, c.sum_v, c.sum_pv_exact::text, c.sum_v_exact::text, c.first_key, c.last_key`,
  rowOf: toSeriesRow,
});

/** The stored series candles of the given keys (bucket-bounded, as `loadCandles`). */
export const loadSeriesCandles = series.load;
/** Inserts or replaces series candles. */
export const saveSeriesCandles = series.save;
/** Deletes the series candles of `tokens` that hold a trade above `key`; returns where they were, with their first trade's key. */
export const deleteSeriesAbove = series.deleteAbove;

/** A token's stored series buckets of one resolution with bucket in [from, to] (ms), ascending. */
export async function loadSeriesRange(
  db: Queryable,
  options: { chainId: number; token: string; resolution: number; from: number; to: number },
): Promise<SeriesCandle[]> {
  const { rows } = await db.query<SeriesCandleDbRow>(
    `SELECT bucket, open, high, low, close, volume, volume_exact::text, sum_pv, sum_v, sum_pv_exact::text, sum_v_exact::text,
       first_key, last_key FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = $3 AND bucket >= $4 AND bucket <= $5
     ORDER BY bucket`,
    [options.chainId, options.token, options.resolution, iso(options.from), iso(options.to)],
  );
  return rows.map(toSeriesCandle);
}

/** What an hourly bucket's average is made of (pricing/series.ts averagePriceOf). */
export type HourlyAverageSums = { sumPvExact: ExactDecimal; sumVExact: ExactDecimal; close: number };

type HourlyAverageDbRow = { bucket: Date; sum_pv_exact: string; sum_v_exact: string; close: number };

const hourlyAverageOf = (r: HourlyAverageDbRow): HourlyAverageSums => ({
  sumPvExact: parseExact(r.sum_pv_exact),
  sumVExact: parseExact(r.sum_v_exact),
  close: r.close,
});

/** The hourly buckets of a token in [from, to] (ms) as the line chart needs them, ascending. */
export async function loadHourlyAverages(
  db: Queryable,
  options: { chainId: number; token: string; from: number; to: number },
): Promise<(HourlyAverageSums & { bucket: number })[]> {
  const { rows } = await db.query<HourlyAverageDbRow>(
    `SELECT bucket, sum_pv_exact::text, sum_v_exact::text, close FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket >= $3 AND bucket <= $4
     ORDER BY bucket`,
    [options.chainId, options.token, iso(options.from), iso(options.to)],
  );
  return rows.map((r) => ({ bucket: r.bucket.getTime(), ...hourlyAverageOf(r) }));
}

/** The token's last hourly bucket before `before` (ms), or null. */
export async function loadHourlyAverageBefore(
  db: Queryable,
  options: { chainId: number; token: string; before: number },
): Promise<HourlyAverageSums | null> {
  const { rows } = await db.query<HourlyAverageDbRow>(
    `SELECT bucket, sum_pv_exact::text, sum_v_exact::text, close FROM token_usd_candles
     WHERE chain_id = $1 AND token = $2 AND resolution = 3600 AND bucket < $3
     ORDER BY bucket DESC LIMIT 1`,
    [options.chainId, options.token, iso(options.before)],
  );
  const r = rows[0];
  return r ? hourlyAverageOf(r) : null;
}
