/**
 * The feeder's reads of one snapshot: what changed for a chain's topics (one statement per kind
 * for all of them, never one per subscriber), a candle topic's messages, and the pool of a pair
 * subscription.
 */
import { notFound } from "../../internal/errors.js";
import type { Queryable } from "../../store/db.js";
import { findPool } from "../../store/pools.js";
import { findLatestSwaps, findSwapsAfter, type SwapRow, type TradePosition } from "../../store/swaps.js";
import { findTokens } from "../../store/tokens.js";
import { assetSide, type ChainAddress } from "../ids.js";
import { candlesBetween, type LatestTrade } from "./candles.js";
import type { CandleTopic, ChainFeed, FeedChanges, TradeTopic } from "./chain-feed.js";
import { candleText, priceText } from "./texts.js";

/** Rows per read of a pair's new trades (a cycle reads on until the snapshot has no more). */
export const TRADE_PAGE = 1000;

/**
 * What changed for the chain's topics in this snapshot: the new trades of each followed pair after
 * its cursor (in pages of `pageSize`), the candles of each pool whose latest trade moved, and the
 * price of every asset followed.
 */
export async function readChanges(
  db: Queryable,
  feed: ChainFeed,
  now: () => Date,
  pageSize = TRADE_PAGE,
): Promise<Omit<FeedChanges, "block">> {
  const trades = await readTrades(db, feed, pageSize);

  const candles: FeedChanges["candles"] = [];
  const latestOf = await findLatestSwaps(db, feed.chainId, [
    ...new Set([...feed.candles.values()].map((topic) => topic.pool.address)),
  ]);
  for (const topic of feed.candles.values()) {
    const latest = latestOf.get(topic.pool.address) ?? null;
    if (topic.text !== null && samePosition(latest, topic.latest)) continue;
    // From the interval of the last trade seen: a commit may end that interval and start others.
    candles.push({
      topic,
      latest,
      texts: await candleTexts(db, topic, topic.latest ?? latest, latest, now()),
    });
  }
  const prices: FeedChanges["prices"] = [];
  if (feed.prices.size > 0) {
    const topics = [...feed.prices.values()];
    const rows = await findTokens(
      db,
      topics.map((t) => t.asset),
    );
    for (const topic of topics) prices.push({ topic, text: priceText(rows.get(topic.asset.id)) });
  }
  return { trades, candles, prices };
}

/** The new trades of every followed pair: one statement for all; a pair with a full page is read on from its last row. */
async function readTrades(db: Queryable, feed: ChainFeed, pageSize: number): Promise<FeedChanges["trades"]> {
  const followed = [...feed.trades.values()].filter((topic) => topic.subscribers.size > 0);
  const rowsOf = new Map<TradeTopic, SwapRow[]>(followed.map((topic) => [topic, []]));
  let pending: { topic: TradeTopic; after: TradePosition }[] = followed.map((topic) => ({
    topic,
    after: topic.cursor,
  }));
  while (pending.length > 0) {
    const pages = await findSwapsAfter(db, {
      chainId: feed.chainId,
      cursors: pending.map((p) => ({ pool: p.topic.pool.address, after: p.after })),
      limit: pageSize,
    });
    const next: typeof pending = [];
    for (const p of pending) {
      const page = pages.get(p.topic.pool.address) ?? [];
      rowsOf.get(p.topic)?.push(...page);
      const last = page[page.length - 1];
      if (last && page.length === pageSize) {
        next.push({ topic: p.topic, after: { block: Number(last.block_number), logIndex: last.log_index } });
      }
    }
    pending = next;
  }
  const trades: FeedChanges["trades"] = [];
  for (const [topic, rows] of rowsOf) if (rows.length > 0) trades.push({ topic, rows });
  return trades;
}

/** Candle messages of the intervals from the one holding `from`'s trade to the one holding `latest`'s. */
export async function candleTexts(
  db: Queryable,
  topic: Pick<CandleTopic, "side" | "subscription">,
  from: LatestTrade | null,
  latest: LatestTrade | null,
  now: Date,
): Promise<string[]> {
  if (latest === null) return [];
  const s = topic.subscription;
  const records = await candlesBetween(db, {
    chainId: s.pair.chainId,
    pool: s.pair.address,
    side: topic.side,
    currency: s.currency,
    interval: s.interval,
    from: (from ?? latest).time,
    to: latest.time,
    now,
  });
  return records.map((data) => candleText(s, data));
}

/** The pool of a pair subscription and the side of its asset (404 / 400 worded as the REST routes). */
export async function poolOf(db: Queryable, pair: ChainAddress, asset: ChainAddress) {
  const pool = await findPool(db, pair.chainId, pair.address);
  if (!pool) throw notFound(`pair_id ${pair.id} is not a known pair`);
  return { pool, side: assetSide(pool, asset, pair) };
}

export function samePosition(a: LatestTrade | null, b: LatestTrade | null): boolean {
  if (a === null || b === null) return a === b;
  return a.position.block === b.position.block && a.position.logIndex === b.position.logIndex;
}
