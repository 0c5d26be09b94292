/**
 * The layout of the time-partitioned tables (migration 011) and the pure planning of their
 * partitions: which periods a span of time needs, which are missing, which a retention drops.
 * No database here; src/store/partitions.ts runs the statements.
 */

const DAY = 86_400_000;
/** Periods are counted from a Monday, so that weekly partitions run Monday to Monday (UTC). */
const ORIGIN = Date.UTC(1970, 0, 5);

/** The retention settings (storage.retention), by the table they bound. */
export type RetentionKey = "swapsDays" | "candles1mDays" | "series5mDays";

/** A range-partitioned table: one partition per period of `widthMs`, each a whole number of days. */
export type RangeTable = {
  /** The range-partitioned table (a leaf of the LIST level for the candles and series). */
  parent: "swaps" | "candles_1m" | "token_usd_candles_5m";
  /** The partition key. */
  key: "block_time" | "bucket";
  widthMs: number;
  retention: RetentionKey;
};

/**
 * Widths for a chain of about a million swaps a day (docs/ARCHITECTURE.md, "Partitions and
 * retention"): a day of swaps is about 0.8 GB with its indexes, so daily partitions keep the
 * partition being written (and its indexes) small enough to stay in memory and a retention
 * granular to the day, and a year is 365 partitions, which the planner prunes cheaply. One-minute
 * candles and 5-minute series are several times smaller per day: a week each keeps their
 * partitions in the same size class and their count low (the roll-ups and the "last candle
 * before" reads walk them).
 */
export const RANGE_TABLES: readonly RangeTable[] = [
  { parent: "swaps", key: "block_time", widthMs: DAY, retention: "swapsDays" },
  { parent: "candles_1m", key: "bucket", widthMs: 7 * DAY, retention: "candles1mDays" },
  { parent: "token_usd_candles_5m", key: "bucket", widthMs: 7 * DAY, retention: "series5mDays" },
];

/** A time range [from, to) in ms. */
export type Period = { from: number; to: number };

/** The start of the period of `table` that holds `time` (ms). */
export function periodStart(table: RangeTable, time: number): number {
  return ORIGIN + Math.floor((time - ORIGIN) / table.widthMs) * table.widthMs;
}

/** The name of the partition of `table` starting at `from`: <parent>_p<YYYYMMDD>, as migration 011 names them. */
export function partitionName(table: RangeTable, from: number): string {
  return `${table.parent}_p${new Date(from).toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/** The name of the DEFAULT partition of `table`. */
export const defaultPartitionName = (table: RangeTable): string => `${table.parent}_default`;

/** The periods of `table` that hold a time in [from, to] (ms), ascending. */
export function periodsOf(table: RangeTable, from: number, to: number): Period[] {
  const out: Period[] = [];
  for (let start = periodStart(table, from); start <= to; start += table.widthMs) {
    out.push({ from: start, to: start + table.widthMs });
  }
  return out;
}

/** The current period of `table` at `now` and the `ahead` after it. */
export function periodsAhead(table: RangeTable, now: number, ahead: number): Period[] {
  const start = periodStart(table, now);
  return periodsOf(table, start, start + ahead * table.widthMs);
}

/**
 * The wanted periods that no existing partition overlaps. A wanted period that an existing one
 * overlaps only in part (a partition made by hand with other bounds) is left out too: partitions
 * cannot overlap, and rows of the rest of it stay in the DEFAULT partition.
 */
export function missingPeriods(existing: readonly Period[], wanted: readonly Period[]): Period[] {
  return wanted.filter((w) => !existing.some((e) => e.from < w.to && w.from < e.to));
}

/** The partitions whose every row is older than `cutoff` (ms): those a retention drops, oldest first. */
export function expiredPartitions<P extends Period>(existing: readonly P[], cutoff: number): P[] {
  return existing.filter((p) => p.to <= cutoff).sort((a, b) => a.from - b.from);
}

/**
 * The cutoff of a retention of `days` at `now`: partitions ending at or before it are dropped, so
 * at least `days` days are always kept (up to one period more). Null: kept forever (null or 0).
 */
export function retentionCutoff(days: number | null, now: number): number | null {
  return days === null || days === 0 ? null : now - days * DAY;
}
