const DAY_MS = 86_400_000;
/** 10000-01-01T00:00:00Z: past it, toISOString writes six-digit years. */
const YEAR_10000 = 253_402_300_800_000;
const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);
/** The day of the last whole-second time toIso wrote, and its `YYYY-MM-DDT`. */
let lastDay = Number.NaN;
let lastDayPrefix = "";

/**
 * ISO 8601 UTC without milliseconds when they are zero: `2026-11-21T10:00:00Z`. Whole seconds
 * from 1970 on (every candle and block time) take a fast path that reuses the day's date of the
 * previous call: an answer of 2,160 candles wrote 2,160 strings through toISOString and replace.
 * Anything else (milliseconds, before 1970, invalid) goes through toISOString as before.
 */
export function toIso(date: Date): string {
  const t = date.getTime();
  if (t % 1000 === 0 && t >= 0 && t < YEAR_10000) {
    const day = Math.floor(t / DAY_MS);
    if (day !== lastDay) {
      lastDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
      lastDay = day;
    }
    const s = (t - day * DAY_MS) / 1000;
    return `${lastDayPrefix}${twoDigits(Math.floor(s / 3600))}:${twoDigits(Math.floor(s / 60) % 60)}:${twoDigits(s % 60)}Z`;
  }
  return date.toISOString().replace(".000Z", "Z");
}

/** Most candles one /api/v1/candles request may span. */
export const MAX_CANDLES = 5000;

/**
 * Number of interval buckets (aligned to the UTC epoch) that [from, to] touches: the first
 * bucket holds `from`, the last holds `to`.
 */
export function bucketCount(from: Date, to: Date, intervalSeconds: number): number {
  const size = intervalSeconds * 1000;
  return Math.floor(to.getTime() / size) - Math.floor(from.getTime() / size) + 1;
}

/** Unix seconds as a time parameter accepts them: plain decimal digits, no sign, no leading zero. */
export const UNIX_SECONDS_PATTERN = "^(0|[1-9][0-9]{0,15})$";
const unixSeconds = new RegExp(UNIX_SECONDS_PATTERN);

/**
 * The instant of a time parameter that takes an ISO 8601 date-time or unix seconds (already
 * validated by its schema): digits are seconds since the epoch, anything else a date-time. NaN
 * time for a value that is neither.
 */
export function parseTimeParam(value: string): Date {
  return unixSeconds.test(value) ? new Date(Number(value) * 1000) : new Date(value);
}
