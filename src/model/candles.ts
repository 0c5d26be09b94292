import type { ExactDecimal } from "../internal/exact-decimal.js";

/** Plain types of the stored aggregates: pool candles and the USD series of tokens. */

/** The candle intervals served (`/api/v1/candles`, the stream): name → length in seconds. */
export const CANDLE_INTERVALS = {
  "1m": 60,
  "5m": 300,
  "15m": 900,
  "30m": 1800,
  "1h": 3600,
  "4h": 14_400,
  "1d": 86_400,
} as const;
/** An interval's name, as the API takes it. */
export type CandleInterval = keyof typeof CANDLE_INTERVALS;
/** An interval's length in seconds, as the candle queries take it. */
export type CandleSeconds = (typeof CANDLE_INTERVALS)[CandleInterval];

/** A bucket's first, highest, lowest and last price. */
export type Ohlc = { open: number; high: number; low: number; close: number };

/** A pool candle; `bucket` is the interval start in ms, aligned to the UTC epoch. */
export type Candle = Ohlc &
  /**
   * Side 1 (token1 in token0: open1, high1, low1, close1), folded from each trade's own side-1
   * price: 1 / low0 would be the reciprocal of a rounded double, off in the last place.
   */
  Record<`${keyof Ohlc}1`, number> & {
    bucket: number;
    volume0: number;
    volume1: number;
    volumeUsd: number;
    /**
     * The USD candle of token0 (usd0) and of token1 (usd1): each trade's stored USD price of that
     * token (`swaps.token0_usd` / `token1_usd`), volume Σ the trades' `volume_usd`; trades without a
     * USD price of the token are left out, and a bucket without any has null (migration 010).
     */
    usd0: UsdOhlcv | null;
    usd1: UsdOhlcv | null;
    trades: number;
    buys0: number;
    firstKey: number;
    lastKey: number;
    /** The volumes exactly (volume0 … usd1's volume are their correctly rounded doubles). */
    sums: CandleSums;
  };

/**
 * A candle's volumes as exact decimals: each token's Σ |net raw amount| / 10^decimals, and the
 * exact sums of the trades' `volume_usd` doubles (all of them; those with a USD price of token0,
 * of token1: null when none). Stored as numeric; sums of sums stay exact.
 */
export type CandleSums = {
  volume0: ExactDecimal;
  volume1: ExactDecimal;
  volumeUsd: ExactDecimal;
  usd0: ExactDecimal | null;
  usd1: ExactDecimal | null;
};

/** USD open/high/low/close of one token over a bucket's USD-priced trades, with their USD volume. */
export type UsdOhlcv = Ohlc & { volume: number };

/** A candle as the chart sees it: prices of one side, the volume of that side's token. */
export type ChartCandle = Ohlc & { time: number; volume: number };

/** A bucket of a token's USD series (table token_usd_candles). */
export type SeriesCandle = Ohlc & {
  bucket: number;
  /** Token units: `volumeExact` correctly rounded. */
  volume: number;
  /** Σ |net raw amount| / 10^decimals of the bucket's trades, exactly (stored as numeric). */
  volumeExact: ExactDecimal;
  /** Σ priceUsd × volumeUsd exactly, volumeUsd = the exact amount × priceUsd (stored as numeric). */
  sumPvExact: ExactDecimal;
  /** Σ volumeUsd exactly. */
  sumVExact: ExactDecimal;
  /** The volume-weighted average USD price: sumPvExact / sumVExact rounded once, the close when sumVExact is 0. */
  average: number;
  firstKey: number;
  lastKey: number;
};
