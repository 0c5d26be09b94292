/** Table `token_usd_candles`: the USD series of tokens (5 min, 1 h) over their qualifying pools. */
import { type ExactDecimal, exactText, parseExact } from "../internal/exact-decimal.js";
import type { SeriesCandle } from "../model/index.js";
import { chunks, iso, maxOf, minOf, type Queryable } from "./db.js";
import { bulkInsert, columnsOf, setExcluded, unnest } from "./unnest.js";

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

const KEY_COLUMNS = columnsOf<SeriesKey>({
  token: ["text", (k) => k.token],
  resolution: ["int", (k) => k.resolution],
  bucket: ["timestamptz", (k) => new Date(k.bucket)],
});

/** The stored series candles of the given keys (bucket-bounded, as `loadCandles`). */
export async function loadSeriesCandles(
  db: Queryable,
  chainId: number,
  keys: readonly SeriesKey[],
): Promise<SeriesRow[]> {
  const out: SeriesRow[] = [];
  for (const part of chunks(keys)) {
    const buckets = part.map((key) => key.bucket);
    const k = unnest("k", KEY_COLUMNS, part, 4);
    const { rows } = await db.query<SeriesDbRow>(
      `SELECT c.token, c.resolution, c.bucket, c.open, c.high, c.low, c.close, c.volume, c.volume_exact::text, c.sum_pv, c.sum_v,
         c.sum_pv_exact::text, c.sum_v_exact::text, c.first_key, c.last_key
       FROM ${k.sql}
       JOIN token_usd_candles c ON c.chain_id = $1 AND c.token = k.token AND c.resolution = k.resolution
         AND c.bucket = k.bucket AND c.bucket >= $2 AND c.bucket <= $3`,
      [chainId, iso(minOf(buckets)), iso(maxOf(buckets)), ...k.params],
    );
    out.push(...rows.map(toSeriesRow));
  }
  return out;
}

const SERIES_COLUMNS = columnsOf<SeriesRow>({
  token: ["text", (c) => c.token],
  resolution: ["int", (c) => c.resolution],
  bucket: ["timestamptz", (c) => new Date(c.bucket)],
  open: ["float8", (c) => c.open],
  high: ["float8", (c) => c.high],
  low: ["float8", (c) => c.low],
  close: ["float8", (c) => c.close],
  volume: ["float8", (c) => c.volume],
  volume_exact: ["decimal", (c) => exactText(c.volumeExact)],
  sum_pv: ["float8", (c) => c.sumPv],
  sum_v: ["float8", (c) => c.sumV],
  sum_pv_exact: ["decimal", (c) => exactText(c.sumPvExact)],
  sum_v_exact: ["decimal", (c) => exactText(c.sumVExact)],
  first_key: ["bigint", (c) => c.firstKey],
  last_key: ["bigint", (c) => c.lastKey],
});

export async function saveSeriesCandles(
  db: Queryable,
  chainId: number,
  candles: readonly SeriesRow[],
): Promise<void> {
  await bulkInsert(
    db,
    {
      table: "token_usd_candles",
      chainId,
      columns: SERIES_COLUMNS,
      tail: `ON CONFLICT (chain_id, token, resolution, bucket) DO UPDATE SET ${setExcluded(
        "open",
        "high",
        "low",
        "close",
        "volume",
        "volume_exact",
        "sum_pv",
        "sum_v",
        "sum_pv_exact",
        "sum_v_exact",
        "first_key",
        "last_key",
      )}`,
    },
    candles,
  );
}

export async function deleteSeriesAbove(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  key: number,
): Promise<{ token: string; resolution: number; bucket: number; firstKey: number }[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<{ token: string; resolution: number; bucket: Date; first_key: number }>(
    `DELETE FROM token_usd_candles WHERE chain_id = $1 AND token = ANY($2::text[]) AND last_key > $3
     RETURNING token, resolution, bucket, first_key`,
    [chainId, [...tokens], key],
  );
  return rows.map((r) => ({
    token: r.token,
    resolution: r.resolution,
    bucket: r.bucket.getTime(),
    firstKey: r.first_key,
  }));
}

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
