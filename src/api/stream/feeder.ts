/**
 * The stream's feeder: the subscription registry and what is pushed to it. Per chain, the
 * indexers' commit notifications (or, while they are down, a poll of the indexed block) start a
 * feed cycle that reads what the commit changed, once per pair, candle or asset (never per
 * subscriber), and sends it to every subscriber. A chain's cycles and the first reads of new
 * subscriptions run one at a time, so each chain's data moves forward only, except through a
 * rollback, which subscribers hear of before any data of the new branch.
 */
import type { Config } from "../../config/schema.js";
import { backoffDelayMs } from "../../internal/backoff.js";
import { badRequest, HttpError, notFound } from "../../internal/errors.js";
import type { Logger } from "../../internal/logger.js";
import { loadStoredBlocks } from "../../store/chain-state.js";
import type { CommitNotice } from "../../store/commit-notify.js";
import type { DbClient, Queryable } from "../../store/db.js";
import { findPool, type PoolRow } from "../../store/pools.js";
import { findLatestSwaps, findSwapsAfter, type SwapRow, type TradePosition } from "../../store/swaps.js";
import { findTokens, type TokenRow } from "../../store/tokens.js";
import type { ChainAddress } from "../ids.js";
import type { ReadRouter, Snapshot } from "../read-replicas.js";
import { tokenFields } from "../token-records.js";
import { tradeRecord } from "../trade-records.js";
import { candlesBetween, type LatestTrade, latestTrade } from "./candles.js";
import { type Subscription, subscriptionFields } from "./messages.js";

/** The longest wait between retries of a failing feed cycle or poll (they start at the poll interval). */
const MAX_RETRY_MS = 30_000;

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;

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

export type StreamFeeder = {
  /**
   * Registers a subscription: checks it against the data (unknown pair: 404; asset not in the
   * pair: 400) and the connection's limit (429), sends the acknowledgement, then the current
   * candle or prices. Throws an HttpError for the client.
   */
  subscribe(client: StreamClient, subscription: Subscription): Promise<void>;
  /** Removes a subscription (a no-op when absent) and acknowledges it. */
  unsubscribe(client: StreamClient, subscription: Subscription): void;
  /** Removes every subscription of a connection that closed. */
  drop(client: StreamClient): void;
  /** Subscriptions held, over all connections. */
  subscriptionCount(): number;
  start(): void;
  stop(): void;
};

/** A trade position after every log of its block. */
const END_OF_BLOCK = 2_147_483_647;
/** Rows per read of a pair's new trades (a cycle reads on until the snapshot has no more). */
const TRADE_PAGE = 1000;
/** Commit notices kept per chain for the delay metric (beyond: the oldest are dropped). */
const MAX_NOTICES = 10_000;
/** Known (block, hash) checkpoints kept per chain to find where a missed reorg forked. */
const MAX_SEEN = 256;

type TradeSubscriber = { client: StreamClient; assetIsToken0: boolean; after: number };
type TradeTopic = { pool: PoolRow; cursor: TradePosition; subscribers: Set<TradeSubscriber> };
type CandleTopic = {
  pool: PoolRow;
  side: 0 | 1;
  subscription: Extract<Subscription, { channel: "candles" }>;
  latest: LatestTrade | null;
  text: string | null;
  subscribers: Set<StreamClient>;
};
type PriceTopic = { asset: ChainAddress; text: string | null; subscribers: Set<StreamClient> };

type ChainFeed = {
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
  notices: { block: number; at: number }[];
  /** The chain's task queue: cycles and first reads of subscriptions, one at a time. */
  queue: Promise<void>;
  cycleQueued: boolean;
  /** Consecutive failed cycles (logged once, retried at the poll interval). */
  failures: number;
  /** The primary's checkpoint as last polled (and when), and recent ones, to catch a reorg whose notices were lost. */
  polled: { block: number; hash: string | null; at: number } | null;
  seen: { block: number; hash: string }[];
  /** Compare hashes at the next poll even while listening (notices may have been lost). */
  verify: boolean;
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

export function createStreamFeeder(options: {
  config: Config;
  reads: ReadRouter;
  logger: Logger;
  now: () => Date;
  /** Throws the 400 naming `param` when `chainId` is not configured. */
  requireChain(chainId: number, param: string): void;
}): StreamFeeder {
  const { config, reads, logger } = options;
  const settings = config.api.stream;
  const log = logger.child({ component: "stream" });
  /** After a rollback, reads go to the primary for twice the lag a usable replica may have. */
  const primaryAfterRollbackMs = config.database.replicaMaxLagSeconds * 2000;
  const chains = new Map<number, ChainFeed>();
  const configured = new Set(config.chains.map((c) => c.id));
  let subscriptions = 0;
  let running = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let stopWatching: (() => void) | undefined;

  const feedOf = (chainId: number): ChainFeed => {
    let feed = chains.get(chainId);
    if (!feed) {
      feed = {
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
      chains.set(chainId, feed);
    }
    return feed;
  };
  const hasTopics = (feed: ChainFeed) => feed.trades.size + feed.candles.size + feed.prices.size > 0;

  /** Runs `task` after the chain's earlier tasks; its failure is the caller's. */
  const enqueue = <T>(feed: ChainFeed, task: () => Promise<T>): Promise<T> => {
    const result = feed.queue.then(task);
    feed.queue = result.then(
      () => {},
      () => {},
    );
    return result;
  };

  /**
   * Reads in a snapshot that holds everything this chain's feed has seen or been told of; right
   * after a rollback, on the primary (a replica may still show the undone branch at a block
   * number the new branch reaches too).
   */
  const read = <T>(feed: ChainFeed, fn: (db: DbClient, snapshot: Snapshot) => Promise<T>) => {
    const recentRollback = Date.now() - feed.rollbackAt < primaryAfterRollbackMs;
    const need = recentRollback ? Number.POSITIVE_INFINITY : Math.max(feed.high, feed.notified);
    return reads.readFresh(feed.chainId, need, async (db, snapshot) => {
      const block = snapshot.blockOf(feed.chainId);
      // Below what was already read: the chain was rolled back (the primary is never stale).
      if (block < feed.high) rollback(feed, block);
      feed.high = Math.max(feed.high, block);
      return fn(db, snapshot);
    });
  };

  /** Drops the known checkpoints above `block` (they were undone). */
  const forgetAbove = (feed: ChainFeed, block: number) => {
    feed.seen = feed.seen.filter((s) => s.block <= block);
  };

  /** Tells the chain's subscribers that data after `block` was undone, and rewinds every topic to it. */
  const rollback = (feed: ChainFeed, block: number) => {
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
    feed.rollbackAt = Date.now();
    feed.rolledBackTo = block;
    if (feed.pendingRollback !== null && feed.pendingRollback >= block) feed.pendingRollback = null;
    log.info({ chain_id: feed.chainId, block, subscribers: told.size }, "stream rollback sent");
  };

  // -------------------------------------------------------------------------------------------
  // Feed cycles

  const scheduleCycle = (feed: ChainFeed) => {
    if (feed.cycleQueued || !running) return;
    feed.cycleQueued = true;
    void enqueue(feed, async () => {
      feed.cycleQueued = false;
      await cycle(feed);
    }).catch((error: unknown) => {
      feed.failures += 1;
      const delay = backoffDelayMs(feed.failures, [settings.pollIntervalMs, MAX_RETRY_MS]);
      // At warn on the first failure and each time the count doubles: a long outage stays visible
      // without a line per attempt.
      if (isPowerOfTwo(feed.failures)) {
        log.warn(
          { err: error, chain_id: feed.chainId, failures: feed.failures, retry_in_ms: delay },
          "stream feed failed; retrying",
        );
      }
      const retry = setTimeout(() => scheduleCycle(feed), delay);
      retry.unref();
    });
  };

  /** The time the commit of `block` was heard (the first notice at or above it), else `fallback`. */
  const heardAt = (notices: readonly { block: number; at: number }[], block: number, fallback: number) =>
    notices.find((n) => n.block >= block)?.at ?? fallback;

  const cycle = async (feed: ChainFeed) => {
    if (!hasTopics(feed)) {
      feed.notices = [];
      feed.pendingRollback = null;
      return;
    }
    if (feed.pendingRollback !== null) rollback(feed, feed.pendingRollback);
    const startedAt = Date.now();
    const result = await read(feed, async (db, snapshot) => {
      const block = snapshot.blockOf(feed.chainId);
      if (block === feed.fedBlock) return { block, trades: [], candles: [], prices: [] };
      return { block, ...(await readChanges(db, feed)) };
    });
    const notices = feed.notices.filter((n) => n.block <= result.block);
    feed.notices = feed.notices.filter((n) => n.block > result.block);
    const since = notices[0]?.at ?? startedAt;

    for (const { topic, rows } of result.trades) {
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
    for (const { topic, latest, texts } of result.candles) {
      topic.latest = latest;
      for (const text of texts) {
        if (text === topic.text) continue;
        topic.text = text;
        for (const client of topic.subscribers) client.send(text, "candle", since);
      }
    }
    for (const { topic, text } of result.prices) {
      if (text === null || text === topic.text) continue;
      topic.text = text;
      for (const client of topic.subscribers) client.send(text, "price", since);
    }
    feed.fedBlock = result.block;
    if (feed.failures > 0) log.info({ chain_id: feed.chainId }, "stream feed recovered");
    feed.failures = 0;
  };

  /** What changed for the chain's topics in this snapshot: one read per pair, pool and chain. */
  const readChanges = async (db: Queryable, feed: ChainFeed) => {
    const trades: { topic: TradeTopic; rows: SwapRow[] }[] = [];
    const followed = [...feed.trades.values()].filter((topic) => topic.subscribers.size > 0);
    const rowsOf = new Map<TradeTopic, SwapRow[]>(followed.map((topic) => [topic, []]));
    // One statement for every pair; a pair with a full page is read on from its last row.
    let pending = followed.map((topic) => ({ topic, after: topic.cursor }));
    while (pending.length > 0) {
      const pages = await findSwapsAfter(db, {
        chainId: feed.chainId,
        cursors: pending.map((p) => ({ pool: p.topic.pool.address, after: p.after })),
        limit: TRADE_PAGE,
      });
      const next: typeof pending = [];
      for (const p of pending) {
        const page = pages.get(p.topic.pool.address) ?? [];
        rowsOf.get(p.topic)?.push(...page);
        const last = page[page.length - 1];
        if (last && page.length === TRADE_PAGE) {
          next.push({
            topic: p.topic,
            after: { block: Number(last.block_number), logIndex: last.log_index },
          });
        }
      }
      pending = next;
    }
    for (const [topic, rows] of rowsOf) if (rows.length > 0) trades.push({ topic, rows });

    const candles: { topic: CandleTopic; latest: LatestTrade | null; texts: string[] }[] = [];
    const latestOf = await findLatestSwaps(db, feed.chainId, [
      ...new Set([...feed.candles.values()].map((topic) => topic.pool.address)),
    ]);
    for (const topic of feed.candles.values()) {
      const latest = latestOf.get(topic.pool.address) ?? null;
      if (topic.text !== null && samePosition(latest, topic.latest)) continue;
      // From the interval of the last trade seen: a commit may end that interval and start others.
      candles.push({ topic, latest, texts: await candleTexts(db, topic, topic.latest ?? latest, latest) });
    }
    const prices: { topic: PriceTopic; text: string | null }[] = [];
    if (feed.prices.size > 0) {
      const topics = [...feed.prices.values()];
      const rows = await findTokens(
        db,
        topics.map((t) => t.asset),
      );
      for (const topic of topics) prices.push({ topic, text: priceText(rows.get(topic.asset.id)) });
    }
    return { trades, candles, prices };
  };

  /** Candle messages of the intervals from the one holding `from`'s trade to the one holding `latest`'s. */
  const candleTexts = async (
    db: Queryable,
    topic: CandleTopic,
    from: LatestTrade | null,
    latest: LatestTrade | null,
  ): Promise<string[]> => {
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
      now: options.now(),
    });
    return records.map((data) =>
      JSON.stringify({
        type: "candle",
        pair_id: s.pair.id,
        asset_id: s.asset.id,
        interval: s.interval,
        currency: s.currency,
        data,
      }),
    );
  };

  // -------------------------------------------------------------------------------------------
  // Commit notices and the poll

  const onCommit = (notice: CommitNotice) => {
    if (!configured.has(notice.chainId)) return;
    const feed = feedOf(notice.chainId);
    if (notice.block < feed.notified) {
      feed.pendingRollback = Math.min(feed.pendingRollback ?? notice.block, notice.block);
      // The undone branch's commits: the new branch's trades are timed from their own notices.
      feed.notices = feed.notices.filter((n) => n.block <= notice.block);
    }
    feed.notified = notice.block;
    if (!hasTopics(feed)) return;
    feed.notices.push({ block: notice.block, at: Date.now() });
    if (feed.notices.length > MAX_NOTICES) feed.notices.splice(0, feed.notices.length - MAX_NOTICES);
    scheduleCycle(feed);
  };

  /**
   * Every poll interval, per chain with subscribers: the primary's checkpoint as its sync watch
   * last read it. While notifications are down (or right after they came back) a change is fed
   * like a notice; a lower block, or a hash of a known block that changed, is a rollback.
   */
  const poll = async () => {
    const listening = reads.listening();
    for (const feed of chains.values()) {
      if (!hasTopics(feed)) continue;
      const state = reads.primary.sync.get(feed.chainId);
      if (!state) continue;
      const current = { block: state.indexedBlock, hash: state.indexedHash, at: Date.now() };
      const previous = feed.polled;
      feed.polled = current;
      if (current.hash) {
        feed.seen.push({ block: current.block, hash: current.hash });
        if (feed.seen.length > MAX_SEEN) feed.seen.shift();
      }
      const verify = !listening || feed.verify;
      feed.verify = false;
      if (!verify || !previous) continue;
      if (current.block === previous.block && current.hash === previous.hash) continue;
      if (current.block < previous.block) {
        // A read may have met the lower checkpoint first and sent this rollback already (the
        // indexer commits a rollback on its own before the new branch): one rollback, not two.
        if (feed.rollbackAt >= previous.at && feed.rolledBackTo <= current.block) {
          forgetAbove(feed, current.block);
          onCommit({ chainId: feed.chainId, block: current.block });
          continue;
        }
        feed.pendingRollback = Math.min(feed.pendingRollback ?? current.block, current.block);
        forgetAbove(feed, current.block);
        onCommit({ chainId: feed.chainId, block: current.block });
        continue;
      }
      // A failed check is not "no reorg": the comparison is made again at the next poll (the
      // poll's failure is logged and backed off) rather than feeding a branch change unannounced.
      const forkedAt = await forkPoint(feed).catch((error: unknown) => {
        feed.polled = previous;
        feed.verify = true;
        throw error;
      });
      if (forkedAt !== null) {
        feed.pendingRollback = Math.min(feed.pendingRollback ?? forkedAt, forkedAt);
      }
      onCommit({ chainId: feed.chainId, block: current.block });
    }
  };

  /**
   * When a known checkpoint's hash is no longer the stored canonical one, a reorg happened
   * unheard: the highest known checkpoint that is still canonical is a safe rollback point (at or
   * below the real fork). Null when every known checkpoint still stands.
   */
  const forkPoint = async (feed: ChainFeed): Promise<number | null> => {
    if (feed.seen.length < 2) return null;
    const stored = new Map(
      (await loadStoredBlocks(reads.primary.db, feed.chainId)).map((b) => [b.number, b.hash]),
    );
    const known = feed.seen.slice(0, -1);
    const broken = known.some((s) => stored.has(s.block) && stored.get(s.block) !== s.hash);
    if (!broken) return null;
    const standing = known.filter((s) => stored.get(s.block) === s.hash).map((s) => s.block);
    const lowestStored = Math.min(...stored.keys());
    return standing.length > 0 ? Math.max(...standing) : Math.max(0, lowestStored - 1);
  };

  // -------------------------------------------------------------------------------------------
  // Subscriptions

  const limit = settings.subscriptionsPerConnection;
  const requireRoom = (client: StreamClient, keys: readonly string[]) => {
    const added = keys.filter((k) => !client.subscriptions.has(k)).length;
    if (client.subscriptions.size + added > limit) {
      throw new HttpError(
        429,
        `too many subscriptions: at most ${limit} per connection (this one holds ${client.subscriptions.size})`,
      );
    }
  };

  const addSubscription = (client: StreamClient, key: string, remove: () => void) => {
    if (client.subscriptions.has(key)) return;
    subscriptions += 1;
    client.subscriptions.set(key, () => {
      if (!client.subscriptions.delete(key)) return;
      subscriptions -= 1;
      remove();
    });
  };

  /** The pool of a pair subscription and the side of its asset (404 / 400 worded as the REST routes). */
  const poolOf = async (db: Queryable, pair: ChainAddress, asset: ChainAddress) => {
    const pool = await findPool(db, pair.chainId, pair.address);
    if (!pool) throw notFound(`pair_id ${pair.id} is not a known pair`);
    const side =
      asset.chainId !== pool.chain_id
        ? undefined
        : asset.address === pool.token0
          ? 0
          : asset.address === pool.token1
            ? 1
            : undefined;
    if (side === undefined) {
      throw badRequest(`asset_id ${asset.id} is not one of the two tokens of pair ${pair.id}`);
    }
    return { pool, side: side as 0 | 1 };
  };

  const ack = (client: StreamClient, type: string, subscription: Subscription, extra = {}) =>
    client.send(JSON.stringify({ type, ...subscriptionFields(subscription), ...extra }), type);

  const subscribeTrades = async (client: StreamClient, s: Extract<Subscription, { channel: "trades" }>) => {
    const feed = feedOf(s.pair.chainId);
    await enqueue(feed, async () => {
      const { pool, side, block } = await read(feed, async (db, snapshot) => ({
        ...(await poolOf(db, s.pair, s.asset)),
        block: snapshot.blockOf(s.pair.chainId),
      }));
      if (client.closed()) return;
      const [key] = subscriptionKeys(s) as [string];
      const existing = client.subscriptions.has(key);
      let topic = feed.trades.get(s.pair.id);
      if (!topic) {
        topic = { pool, cursor: { block, logIndex: END_OF_BLOCK }, subscribers: new Set() };
        feed.trades.set(s.pair.id, topic);
      }
      const t = topic;
      if (!existing) {
        const subscriber: TradeSubscriber = { client, assetIsToken0: side === 0, after: block };
        t.subscribers.add(subscriber);
        addSubscription(client, key, () => {
          t.subscribers.delete(subscriber);
          if (t.subscribers.size === 0) feed.trades.delete(s.pair.id);
        });
      }
      const after = existing ? afterOf(t, client, side) : block;
      ack(client, "subscribed", s, { block: after });
    });
  };

  const afterOf = (topic: TradeTopic, client: StreamClient, side: 0 | 1) => {
    for (const s of topic.subscribers)
      if (s.client === client && s.assetIsToken0 === (side === 0)) return s.after;
    return topic.cursor.block;
  };

  const subscribeCandles = async (client: StreamClient, s: Extract<Subscription, { channel: "candles" }>) => {
    const feed = feedOf(s.pair.chainId);
    const [key] = subscriptionKeys(s) as [string];
    await enqueue(feed, async () => {
      const fresh = await read(feed, async (db) => {
        const { pool, side } = await poolOf(db, s.pair, s.asset);
        const latest = await latestTrade(db, s.pair.chainId, pool.address);
        const topic = {
          pool,
          side,
          subscription: s,
          latest,
          text: null,
          subscribers: new Set<StreamClient>(),
        };
        return { topic, text: (await candleTexts(db, topic, latest, latest)).at(-1) ?? null };
      });
      if (client.closed()) return;
      // An existing topic is as its last cycle left it (the next cycle brings it up to date for
      // every subscriber alike); a new one starts from this read.
      let topic = feed.candles.get(key);
      if (!topic) {
        topic = fresh.topic;
        topic.text = fresh.text;
        feed.candles.set(key, topic);
      }
      const t = topic;
      const added = !t.subscribers.has(client);
      t.subscribers.add(client);
      addSubscription(client, key, () => {
        t.subscribers.delete(client);
        if (t.subscribers.size === 0) feed.candles.delete(key);
      });
      ack(client, "subscribed", s);
      if (added && t.text !== null) client.send(t.text, "candle");
    });
  };

  const subscribePrices = async (client: StreamClient, s: Extract<Subscription, { channel: "prices" }>) => {
    const byChain = new Map<number, ChainAddress[]>();
    for (const asset of s.assets) byChain.set(asset.chainId, [...(byChain.get(asset.chainId) ?? []), asset]);
    let acked = false;
    for (const [chainId, assets] of byChain) {
      const feed = feedOf(chainId);
      await enqueue(feed, async () => {
        const rows = await read(feed, (db) => findTokens(db, assets));
        if (client.closed()) return;
        const initial: string[] = [];
        for (const asset of assets) {
          let topic = feed.prices.get(asset.id);
          if (!topic) {
            topic = { asset, text: priceText(rows.get(asset.id)), subscribers: new Set() };
            feed.prices.set(asset.id, topic);
          }
          const t = topic;
          if (!t.subscribers.has(client) && t.text !== null) initial.push(t.text);
          t.subscribers.add(client);
          addSubscription(client, `prices|${asset.id}`, () => {
            t.subscribers.delete(client);
            if (t.subscribers.size === 0) feed.prices.delete(asset.id);
          });
        }
        if (!acked) ack(client, "subscribed", s);
        acked = true;
        for (const text of initial) client.send(text, "price");
      });
    }
  };

  return {
    async subscribe(client, subscription) {
      if (subscription.channel === "prices") {
        for (const asset of subscription.assets) options.requireChain(asset.chainId, "asset_ids");
      } else {
        options.requireChain(subscription.pair.chainId, "pair_id");
        options.requireChain(subscription.asset.chainId, "asset_id");
      }
      requireRoom(client, subscriptionKeys(subscription));
      switch (subscription.channel) {
        case "trades":
          return subscribeTrades(client, subscription);
        case "candles":
          return subscribeCandles(client, subscription);
        case "prices":
          return subscribePrices(client, subscription);
      }
    },
    unsubscribe(client, subscription) {
      for (const key of subscriptionKeys(subscription)) client.subscriptions.get(key)?.();
      ack(client, "unsubscribed", subscription);
    },
    drop(client) {
      for (const remove of [...client.subscriptions.values()]) remove();
    },
    subscriptionCount: () => subscriptions,
    start() {
      if (running) return;
      running = true;
      stopWatching = reads.watchCommits({
        commit: onCommit,
        reconnect: () => {
          for (const feed of chains.values()) feed.verify = true;
        },
      });
      let pollFailures = 0;
      const loop = (delay: number) => {
        pollTimer = setTimeout(() => {
          poll()
            .then(
              () => {
                if (pollFailures > 0) log.info({ failures: pollFailures }, "stream poll recovered");
                pollFailures = 0;
              },
              (error: unknown) => {
                pollFailures += 1;
                if (isPowerOfTwo(pollFailures))
                  log.warn({ err: error, failures: pollFailures }, "stream poll failed");
              },
            )
            .finally(() => {
              if (!running) return;
              loop(
                pollFailures === 0
                  ? settings.pollIntervalMs
                  : backoffDelayMs(pollFailures, [settings.pollIntervalMs, MAX_RETRY_MS]),
              );
            });
        }, delay);
        pollTimer.unref();
      };
      loop(settings.pollIntervalMs);
    },
    stop() {
      running = false;
      clearTimeout(pollTimer);
      stopWatching?.();
    },
  };
}

function samePosition(a: LatestTrade | null, b: LatestTrade | null): boolean {
  if (a === null || b === null) return a === b;
  return a.position.block === b.position.block && a.position.logIndex === b.position.logIndex;
}

/** A trade message: the /api/v1/trades record of `asset`'s side, with the asset it is seen from. */
function tradeText(pool: PoolRow, row: SwapRow, assetIsToken0: boolean): string {
  const asset = `${assetIsToken0 ? pool.token0 : pool.token1}:${pool.chain_id}`;
  return JSON.stringify({ type: "trade", asset_id: asset, data: tradeRecord(pool, row, assetIsToken0) });
}

/** A price message: the token record as /api/v1/assets gives it; null for an unknown token. */
function priceText(row: TokenRow | undefined): string | null {
  if (!row) return null;
  return JSON.stringify({
    type: "price",
    data: { contract: row.address, chain: row.chain_id, ...tokenFields(row) },
  });
}
