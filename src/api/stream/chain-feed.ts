/**
 * One chain's feed as the stream's feeder keeps it: its topics (what is followed, once per pair,
 * candle or asset), where its reads stand, the commit notices not yet fed and the checkpoints the
 * poll has seen. The functions here change a feed and tell its subscribers; they read nothing
 * (the reads are in feed-reads.ts) and keep no state of their own.
 */
import type { PoolRow } from "../../store/pools.js";
import type { SwapRow, TradePosition } from "../../store/swaps.js";
import type { ChainAddress } from "../ids.js";
import type { LatestTrade } from "./candles.js";
import type { CandlesSubscription, Subscription } from "./messages.js";
import { tradeText } from "./texts.js";

/** A connection as the feeder sees it. */
export type StreamClient = {
  id: number;
  /**
   * Sends one serialised message; false when the connection is closed or has just been closed as
   * a slow consumer. `since`: when the data's commit was heard (for the commit → send delay).
   */
  send(text: string, type: string, since?: number): boolean;
  /** Its subscriptions by key (see subscriptionKeys); each value removes that subscription. */
  readonly subscriptions: Map<string, () => void>;
  /** True once the connection is closed: nothing more is registered for it. */
  closed(): boolean;
};

/** A trade position after every log of its block. */
export const END_OF_BLOCK = 2_147_483_647;
/** Commit notices kept per chain for the delay metric (beyond: the oldest are dropped). */
export const MAX_NOTICES = 10_000;
/** Known (block, hash) checkpoints kept per chain to find where a missed reorg forked. */
export const MAX_SEEN = 256;

export type TradeSubscriber = { client: StreamClient; assetIsToken0: boolean; after: number };
export type TradeTopic = { pool: PoolRow; cursor: TradePosition; subscribers: Set<TradeSubscriber> };
export type CandleTopic = {
  pool: PoolRow;
  side: 0 | 1;
  subscription: CandlesSubscription;
  latest: LatestTrade | null;
  text: string | null;
  subscribers: Set<StreamClient>;
};
export type PriceTopic = { asset: ChainAddress; text: string | null; subscribers: Set<StreamClient> };
export type Notice = { block: number; at: number };
export type Checkpoint = { block: number; hash: string };

export type ChainFeed = {
  chainId: number;
  trades: Map<string, TradeTopic>;
  candles: Map<string, CandleTopic>;
  prices: Map<string, PriceTopic>;
  /** The block of the last cycle's snapshot (-1: none yet). */
  fedBlock: number;
  /** The highest snapshot block any read of this chain saw: reads never go below it (but for a rollback). */
  high: number;
  /** The block of the latest commit notice (-1: none yet). */
  notified: number;
  /** A rollback heard of but not yet sent: the lowest new checkpoint. */
  pendingRollback: number | null;
  /** When the last rollback was sent (reads go to the primary for a while after it). */
  rollbackAt: number;
  /** The block the last rollback sent rewound to. */
  rolledBackTo: number;
  /** Commit notices not yet fed: block and when it was heard. */
  notices: Notice[];
  /** The chain's task queue: cycles and first reads of subscriptions, one at a time. */
  queue: Promise<void>;
  cycleQueued: boolean;
  /** Consecutive failed cycles (logged once, retried at the poll interval). */
  failures: number;
  /** The primary's checkpoint as last polled (and when), and recent ones, to catch a reorg whose notices were lost. */
  polled: { block: number; hash: string | null; at: number } | null;
  seen: Checkpoint[];
  /** Compare hashes at the next poll even while listening (notices may have been lost). */
  verify: boolean;
};

/** What one cycle read for the chain's topics (see readChanges). */
export type FeedChanges = {
  block: number;
  trades: { topic: TradeTopic; rows: SwapRow[] }[];
  candles: { topic: CandleTopic; latest: LatestTrade | null; texts: string[] }[];
  prices: { topic: PriceTopic; text: string | null }[];
};

/** The keys of a subscription's parts in a connection's map (a prices subscription: one per asset). */
export function subscriptionKeys(subscription: Subscription): string[] {
  switch (subscription.channel) {
    case "prices":
      return subscription.assets.map((a) => `prices|${a.id}`);
    case "trades":
      return [`trades|${subscription.pair.id}|${subscription.asset.id}`];
    case "candles": {
      const s = subscription;
      return [`candles|${s.pair.id}|${s.asset.id}|${s.interval}|${s.currency}`];
    }
  }
}

export function newChainFeed(chainId: number): ChainFeed {
  return {
    chainId,
    trades: new Map(),
    candles: new Map(),
    prices: new Map(),
    fedBlock: -1,
    high: -1,
    notified: -1,
    pendingRollback: null,
    rollbackAt: Number.NEGATIVE_INFINITY,
    rolledBackTo: Number.POSITIVE_INFINITY,
    notices: [],
    queue: Promise.resolve(),
    cycleQueued: false,
    failures: 0,
    polled: null,
    seen: [],
    verify: false,
  };
}

export const hasTopics = (feed: ChainFeed): boolean =>
  feed.trades.size + feed.candles.size + feed.prices.size > 0;

/** Runs `task` after the chain's earlier tasks; its failure is the caller's. */
export function enqueue<T>(feed: ChainFeed, task: () => Promise<T>): Promise<T> {
  const result = feed.queue.then(task);
  feed.queue = result.then(
    () => {},
    () => {},
  );
  return result;
}

/** Drops the known checkpoints above `block` (they were undone). */
export function forgetAbove(feed: ChainFeed, block: number): void {
  feed.seen = feed.seen.filter((s) => s.block <= block);
}

/** Keeps the rollback to `block` for the next cycle (the lowest of those pending). */
export function holdRollback(feed: ChainFeed, block: number): void {
  feed.pendingRollback = Math.min(feed.pendingRollback ?? block, block);
}

/**
 * Tells the chain's subscribers, each once, that data after `block` was undone, and rewinds
 * every topic to it. Returns how many connections were told.
 */
export function rewind(feed: ChainFeed, block: number, now: number): number {
  const text = JSON.stringify({ type: "rollback", chain: feed.chainId, block });
  const told = new Set<StreamClient>();
  const tell = (client: StreamClient) => {
    if (told.has(client)) return;
    told.add(client);
    client.send(text, "rollback");
  };
  for (const topic of feed.trades.values()) {
    if (topic.cursor.block > block) topic.cursor = { block, logIndex: END_OF_BLOCK };
    for (const s of topic.subscribers) {
      s.after = Math.min(s.after, block);
      tell(s.client);
    }
  }
  for (const topic of feed.candles.values()) {
    topic.latest = null;
    topic.text = null;
    for (const client of topic.subscribers) tell(client);
  }
  for (const topic of feed.prices.values()) {
    topic.text = null;
    for (const client of topic.subscribers) tell(client);
  }
  // The checkpoints known above the block belong to the undone branch: forgotten, so that a
  // later poll does not read their replaced hashes as a second reorg at the same fork.
  forgetAbove(feed, block);
  // The next cycle reads even when the snapshot is at this very block: topics were reset.
  feed.fedBlock = -1;
  feed.high = Math.min(feed.high, block);
  feed.rollbackAt = now;
  feed.rolledBackTo = block;
  if (feed.pendingRollback !== null && feed.pendingRollback >= block) feed.pendingRollback = null;
  return told.size;
}

/**
 * Notes a commit notice of `block` heard at `at`: a block below the last notice is a rollback to
 * it (kept for the next cycle). True when the chain has topics, so that a cycle is due.
 */
export function noteCommit(feed: ChainFeed, block: number, at: number): boolean {
  if (block < feed.notified) {
    holdRollback(feed, block);
    // The undone branch's commits: the new branch's trades are timed from their own notices.
    feed.notices = feed.notices.filter((n) => n.block <= block);
  }
  feed.notified = block;
  if (!hasTopics(feed)) return false;
  feed.notices.push({ block, at });
  if (feed.notices.length > MAX_NOTICES) feed.notices.splice(0, feed.notices.length - MAX_NOTICES);
  return true;
}

/** The time the commit of `block` was heard (the first notice at or above it), else `fallback`. */
export const heardAt = (notices: readonly Notice[], block: number, fallback: number): number =>
  notices.find((n) => n.block >= block)?.at ?? fallback;

/**
 * Sends what a cycle read to the topics' subscribers and moves the feed to its block: each trade
 * after a subscriber's `after` block (timed from its block's notice), each candle and price that
 * changed. The notices up to the block are consumed; `startedAt` times data no notice announced.
 */
export function deliver(feed: ChainFeed, changes: FeedChanges, startedAt: number): void {
  const notices = feed.notices.filter((n) => n.block <= changes.block);
  feed.notices = feed.notices.filter((n) => n.block > changes.block);
  const since = notices[0]?.at ?? startedAt;

  for (const { topic, rows } of changes.trades) {
    const texts: [string | undefined, string | undefined] = [undefined, undefined];
    for (const row of rows) {
      const block = Number(row.block_number);
      const at = heardAt(notices, block, since);
      for (const s of topic.subscribers) {
        if (block <= s.after) continue;
        const side = s.assetIsToken0 ? 0 : 1;
        texts[side] ??= tradeText(topic.pool, row, s.assetIsToken0);
        s.client.send(texts[side], "trade", at);
      }
      texts[0] = texts[1] = undefined;
    }
    const last = rows[rows.length - 1];
    if (last) topic.cursor = { block: Number(last.block_number), logIndex: last.log_index };
  }
  for (const { topic, latest, texts } of changes.candles) {
    topic.latest = latest;
    for (const text of texts) {
      if (text === topic.text) continue;
      topic.text = text;
      for (const client of topic.subscribers) client.send(text, "candle", since);
    }
  }
  for (const { topic, text } of changes.prices) {
    if (text === null || text === topic.text) continue;
    topic.text = text;
    for (const client of topic.subscribers) client.send(text, "price", since);
  }
  feed.fedBlock = changes.block;
}

/** What a poll found for a chain (see pollCheck). */
export type PollOutcome =
  /** Nothing to feed: unchanged, or not verified while notices are heard. */
  | { kind: "none" }
  /** The checkpoint went down to `block`: a rollback to it (unless a read already sent it), fed like a notice. */
  | { kind: "lowered"; block: number }
  /** The checkpoint moved up or its hash changed: compare the known hashes, then feed `block` like a notice. */
  | { kind: "moved"; block: number; previous: NonNullable<ChainFeed["polled"]> };

/**
 * The poll's look at the primary's checkpoint `current` (its block, hash and when it was read):
 * records it, and says what to feed. While notices are heard (`listening` without `feed.verify`)
 * a change is left to them.
 */
export function pollCheck(
  feed: ChainFeed,
  current: { block: number; hash: string | null; at: number },
  listening: boolean,
): PollOutcome {
  const previous = feed.polled;
  feed.polled = current;
  if (current.hash) {
    feed.seen.push({ block: current.block, hash: current.hash });
    if (feed.seen.length > MAX_SEEN) feed.seen.shift();
  }
  const verify = !listening || feed.verify;
  feed.verify = false;
  if (!verify || !previous) return { kind: "none" };
  if (current.block === previous.block && current.hash === previous.hash) return { kind: "none" };
  if (current.block < previous.block) {
    // A read may have met the lower checkpoint first and sent this rollback already (the
    // indexer commits a rollback on its own before the new branch): one rollback, not two.
    const sent = feed.rollbackAt >= previous.at && feed.rolledBackTo <= current.block;
    if (!sent) holdRollback(feed, current.block);
    forgetAbove(feed, current.block);
    return { kind: "lowered", block: current.block };
  }
  return { kind: "moved", block: current.block, previous };
}

/**
 * When a known checkpoint's hash (but the newest, just polled) is no longer the stored canonical
 * one, a reorg happened unheard: the highest known checkpoint that is still canonical is a safe
 * rollback point (at or below the real fork); with none, the block below the lowest stored one.
 * Null when every known checkpoint still stands.
 */
export function forkPoint(seen: readonly Checkpoint[], stored: ReadonlyMap<number, string>): number | null {
  if (seen.length < 2) return null;
  const known = seen.slice(0, -1);
  const broken = known.some((s) => stored.has(s.block) && stored.get(s.block) !== s.hash);
  if (!broken) return null;
  const standing = known.filter((s) => stored.get(s.block) === s.hash).map((s) => s.block);
  const lowestStored = Math.min(...stored.keys());
  return standing.length > 0 ? Math.max(...standing) : Math.max(0, lowestStored - 1);
}
