// The token page's state changes, pure: which pair and side are charted, the time range of a
// candle request, and how fresh candles and trades merge into what is already on screen.

import type { Candle, Pair, Trade } from "./api.js";
import { shortHex } from "./format.js";
import type { Interval } from "./route.js";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

export const intervalMs: Record<Interval, number> = {
  "1m": minute,
  "5m": 5 * minute,
  "15m": 15 * minute,
  "30m": 30 * minute,
  "1h": hour,
  "4h": 4 * hour,
  "1d": day,
};

/**
 * How far back the chart reaches per interval: about 300 bars (a readable chart, ~40 KB of JSON),
 * well under the API's 5,000; a longer span is a coarser interval away.
 */
const lookbackMs: Record<Interval, number> = {
  "1m": 6 * hour,
  "5m": 1 * day,
  "15m": 3 * day,
  "30m": 7 * day,
  "1h": 14 * day,
  "4h": 60 * day,
  "1d": 365 * day,
};

/** The `from`/`to` of the first candle request of an interval, ending now. */
export function candleRange(interval: Interval, now: number): { from: Date; to: Date } {
  return { from: new Date(alignDown(now - lookbackMs[interval], interval)), to: new Date(now) };
}

/** The start of the UTC-aligned bucket holding `time` (buckets are aligned to the epoch). */
export function alignDown(time: number, interval: Interval): number {
  const size = intervalMs[interval];
  return Math.floor(time / size) * size;
}

/**
 * The `from` of a live refresh: the start of the last bar on screen, so that the answer
 * re-sends that bar (its close and volume may have moved) and any newer ones.
 */
export function refreshFrom(bars: readonly Candle[], interval: Interval, now: number): Date {
  const last = bars[bars.length - 1];
  return new Date(last ? last.time : alignDown(now, interval));
}

/**
 * Merges a refresh into the bars on screen. Returns the new list and the bars to hand to the
 * chart's `update()` in order (each at or after the last bar, as the chart requires).
 */
export function mergeCandles(
  bars: readonly Candle[],
  fresh: readonly Candle[],
): { bars: Candle[]; updates: Candle[] } {
  const last = bars[bars.length - 1];
  const updates = fresh
    .filter((c) => last === undefined || c.time >= last.time)
    .sort((a, b) => a.time - b.time);
  const merged = bars.slice();
  for (const candle of updates) {
    const tail = merged[merged.length - 1];
    if (tail && tail.time === candle.time) merged[merged.length - 1] = candle;
    else merged.push(candle);
  }
  return { bars: merged, updates };
}

/** The identity of a trade: one swap log. */
export function tradeKey(trade: Pick<Trade, "hash" | "log_index">): string {
  return `${trade.hash}:${trade.log_index}`;
}

function newestFirst(a: Trade, b: Trade): number {
  return b.block_number - a.block_number || b.log_index - a.log_index;
}

/**
 * Puts the newest page of trades (from a poll) on top of the list. When the page does not reach
 * back to the newest trade already shown, trades in between were missed: the list is replaced by
 * the page (`reset`), and paging to older ones restarts from the page's cursor.
 */
export function mergeNewTrades(
  shown: readonly Trade[],
  page: readonly Trade[],
): { trades: Trade[]; added: Trade[]; reset: boolean } {
  const newest = shown[0];
  if (newest === undefined)
    return { trades: page.slice().sort(newestFirst), added: page.slice(), reset: true };
  const keys = new Set(shown.map(tradeKey));
  const overlaps = page.some((t) => keys.has(tradeKey(t)));
  const older = page.every((t) => newestFirst(t, newest) >= 0);
  if (!overlaps && !older && page.length > 0) {
    return { trades: page.slice().sort(newestFirst), added: page.slice(), reset: true };
  }
  const added = page.filter((t) => !keys.has(tradeKey(t)) && newestFirst(t, newest) < 0).sort(newestFirst);
  return { trades: [...added, ...shown], added, reset: false };
}

/**
 * Puts one trade pushed by the stream into the list, newest first: usually on top; a trade the
 * list already holds (a poll or a catch-up got it first) is left out (`index` -1).
 */
export function insertPushedTrade(shown: readonly Trade[], trade: Trade): { trades: Trade[]; index: number } {
  const key = tradeKey(trade);
  if (shown.some((t) => tradeKey(t) === key)) return { trades: shown.slice(), index: -1 };
  let index = shown.findIndex((t) => newestFirst(trade, t) < 0);
  if (index === -1) index = shown.length;
  return { trades: [...shown.slice(0, index), trade, ...shown.slice(index)], index };
}

/** Appends an older page ("Load older") below the list, leaving out trades already shown. */
export function appendOlderTrades(shown: readonly Trade[], page: readonly Trade[]): Trade[] {
  const keys = new Set(shown.map(tradeKey));
  return [...shown, ...page.filter((t) => !keys.has(tradeKey(t))).sort(newestFirst)];
}

/** `<address>:<chain>` for a pair's token field, which may or may not carry the chain suffix. */
export function tokenIdOf(address: string, chain: number | string): string {
  const lower = address.toLowerCase();
  return lower.includes(":") ? lower : `${lower}:${chain}`;
}

/** Pairs by 24 h USD volume, then liquidity, highest first; unknown (null) figures last. */
export function sortPairs(pairs: readonly Pair[]): Pair[] {
  const value = (v: number | null) => (typeof v === "number" && Number.isFinite(v) ? v : -1);
  return pairs
    .slice()
    .sort((a, b) => value(b.volume) - value(a.volume) || value(b.liquidity_value) - value(a.liquidity_value));
}

/** The pair to chart: the one asked for when listed, else the first (the most traded). */
export function choosePair(pairs: readonly Pair[], pairId: string | undefined): Pair | undefined {
  return pairs.find((p) => p.pair_id.toLowerCase() === pairId) ?? pairs[0];
}

/** Which of the pair's tokens is `asset_id`: the one asked for, else the page's token. */
export function chooseSide(pair: Pair, tokenId: string, side: 0 | 1 | undefined): 0 | 1 {
  if (side !== undefined) return side;
  return tokenIdOf(pair.token1_address, pair.chain) === tokenId ? 1 : 0;
}

/** A token's symbol, or its short address when the contract does not tell one (null). */
export function symbolOr(symbol: string | null | undefined, address: string): string {
  return symbol || shortHex(address.split(":")[0] ?? address);
}

/** The pair as traders name it, base/quote (`WETH/USDC`, `KIBL/WETH`): the API's `name`. */
export function pairName(pair: Pick<Pair, "name">): string {
  return pair.name;
}

/** asset_id, symbol and the other token's symbol for a side of a pair. */
export function sideInfo(pair: Pair, side: 0 | 1): { assetId: string; symbol: string; quoteSymbol: string } {
  const symbol0 = symbolOr(pair.token0_symbol, pair.token0_address);
  const symbol1 = symbolOr(pair.token1_symbol, pair.token1_address);
  return side === 0
    ? { assetId: tokenIdOf(pair.token0_address, pair.chain), symbol: symbol0, quoteSymbol: symbol1 }
    : { assetId: tokenIdOf(pair.token1_address, pair.chain), symbol: symbol1, quoteSymbol: symbol0 };
}

/** A trade's amount of the charted token (`asset_id`) and of the other one. */
export function tradeAmounts(
  trade: Trade,
  side: 0 | 1,
): { amount: number | null; quoteAmount: number | null } {
  return side === 0
    ? { amount: trade.token0_amount, quoteAmount: trade.token1_amount }
    : { amount: trade.token1_amount, quoteAmount: trade.token0_amount };
}
