/** Plain types of the market windows (src/pricing/windows.ts): what is read from and written to the store. */
import type { SwapAmounts } from "./pricing.js";

/** A stored, priced swap as the market windows read it. */
export type WindowTrade = SwapAmounts & {
  pool: string;
  token0: string;
  token1: string;
  blockNumber: number;
  logIndex: number;
  /** Block time, ms. */
  time: number;
  /** The transaction's sender; null only in replay. */
  maker: string | null;
  /** Post-swap pool price of token0 in token1 (swaps.price); null when decimals are unknown. */
  price: number | null;
  volumeUsd: number | null;
  /** The trade's USD price of each token as its USD series records it; null when it does not. */
  series0Usd: number | null;
  series1Usd: number | null;
};

/** What one batch adds to a minute or hour bucket of a pool or token (table *_trade_buckets). */
export type BucketPartial = {
  /** The pool or token. */
  owner: string;
  resolution: 60 | 3600;
  /** Interval start, ms. */
  bucket: number;
  /** Exact Σ of the trades' USD volumes, as decimal text (Postgres numeric). */
  volumeUsd: string;
  trades: number;
  buys: number;
  firstKey: number;
  lastKey: number;
  /** ms */
  firstTime: number;
  /** The price after the first and after the last of its trades that have one. */
  open: number | null;
  close: number | null;
};

/** A maker's latest trade in a pool or of a token (tables pool_makers, token_makers). */
export type MakerLast = { owner: string; maker: string; time: number; block: number };

/** Where a window lies: minute buckets in [start, hoursFrom) and from hoursTo on, hours in [hoursFrom, hoursTo). */
export type WindowSpan = { name: string; start: number; hoursFrom: number; hoursTo: number };

/** A window's sums and makers of one pool or token, as read from the buckets and maker rows. */
export type WindowSums = { volumeUsd: number; trades: number; buys: number; makers: number };

/** What the windows of one pool or token are made from (one entry per span, in the spans' order). */
export type WindowInputs = {
  owner: string;
  sums: WindowSums[];
  /** The price after the latest trade before each window's start (null: none with a price). */
  before: (number | null)[];
  /** The price after the first trade in each window (null: none with a price). */
  firstIn: (number | null)[];
  /** The price after the latest trade. */
  last: number | null;
  /** ms; null when the owner has no trade. */
  firstTradeAt: number | null;
};

/** One window's figures. */
export type WindowFigures = {
  priceChange: number | null;
  volumeUsd: number;
  buys: number;
  sells: number;
  makers: number;
};

/** The stored windows of a pool or token (tables pair_windows, token_windows). */
export type WindowsRow = {
  owner: string;
  /** The minute the windows end with, ms. */
  minute: number;
  /** In the order of WINDOW_NAMES: 5m, 1h, 6h, 24h. */
  windows: WindowFigures[];
  last: number | null;
  /** ms; null when the owner has no trade (its figures are 0). */
  firstTradeAt: number | null;
};
