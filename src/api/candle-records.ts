import { type ChartCandle, finite } from "../model/index.js";
import { toIso } from "./times.js";

/** A candle record as /api/v1/candles answers it, and the stream pushes it. */
export type CandleRecord = {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  date: string;
  time: number;
};

/**
 * The candle records of stored candles, in their order. The schema's prices are plain numbers
 * : a non-finite stored price (the reciprocal of a zero) has no honest value, and null
 * would be serialised as 0, so such a candle is left out rather than answered wrong.
 */
export function candleRecords(stored: readonly ChartCandle[]): CandleRecord[] {
  return stored
    .filter((c) => [c.open, c.high, c.low, c.close].every(Number.isFinite))
    .map((c) => ({
      open: c.open,
      high: c.high,
      low: c.low,
      close: c.close,
      volume: finite(c.volume) ?? 0,
      date: toIso(new Date(c.time)),
      time: c.time,
    }));
}
