/**
 * Joining a connection to a chain's topics once the subscription's first read is done, and the
 * count of subscriptions held. A topic is shared by every connection following the same pair,
 * candle or asset, and leaves its chain's feed with its last subscriber.
 */
import { HttpError } from "../../internal/errors.js";
import type { PoolRow } from "../../store/pools.js";
import type { TokenRow } from "../../store/tokens.js";
import type { ChainAddress } from "../ids.js";
import {
  type CandleTopic,
  type ChainFeed,
  END_OF_BLOCK,
  type StreamClient,
  type TradeSubscriber,
  type TradeTopic,
} from "./chain-feed.js";
import { priceText } from "./texts.js";

/** The subscriptions of every connection: each key of a connection counted once. */
export type SubscriptionRegistry = {
  /** Throws the 429 when the keys not yet held would take the connection over `limit`. */
  requireRoom(client: StreamClient, keys: readonly string[]): void;
  /** Registers `key` for `client` (a no-op when held); `remove` runs when it is removed. */
  add(client: StreamClient, key: string, remove: () => void): void;
  count(): number;
};

export function createSubscriptionRegistry(limit: number): SubscriptionRegistry {
  let count = 0;
  return {
    requireRoom(client, keys) {
      const added = keys.filter((k) => !client.subscriptions.has(k)).length;
      if (client.subscriptions.size + added > limit) {
        throw new HttpError(
          429,
          `too many subscriptions: at most ${limit} per connection (this one holds ${client.subscriptions.size})`,
        );
      }
    },
    add(client, key, remove) {
      if (client.subscriptions.has(key)) return;
      count += 1;
      client.subscriptions.set(key, () => {
        if (!client.subscriptions.delete(key)) return;
        count -= 1;
        remove();
      });
    },
    count: () => count,
  };
}

/**
 * Joins `client` to the trades of `pairId` as seen from `side`, read at `block`. Returns the block
 * its trades start after: `block` for a new subscription, the one it already had otherwise.
 */
export function joinTrades(
  registry: SubscriptionRegistry,
  feed: ChainFeed,
  client: StreamClient,
  join: { key: string; pairId: string; pool: PoolRow; side: 0 | 1; block: number },
): number {
  const existing = client.subscriptions.has(join.key);
  let topic = feed.trades.get(join.pairId);
  if (!topic) {
    topic = {
      pool: join.pool,
      cursor: { block: join.block, logIndex: END_OF_BLOCK },
      subscribers: new Set(),
    };
    feed.trades.set(join.pairId, topic);
  }
  const t = topic;
  if (existing) return afterOf(t, client, join.side);
  const subscriber: TradeSubscriber = { client, assetIsToken0: join.side === 0, after: join.block };
  t.subscribers.add(subscriber);
  registry.add(client, join.key, () => {
    t.subscribers.delete(subscriber);
    if (t.subscribers.size === 0) feed.trades.delete(join.pairId);
  });
  return join.block;
}

function afterOf(topic: TradeTopic, client: StreamClient, side: 0 | 1): number {
  for (const s of topic.subscribers)
    if (s.client === client && s.assetIsToken0 === (side === 0)) return s.after;
  return topic.cursor.block;
}

/**
 * Joins `client` to the candle topic `key`; `fresh` (the topic as just read, with its current
 * candle) becomes the topic when there is none. An existing topic is as its last cycle left it
 * (the next cycle brings it up to date for every subscriber alike). Returns the candle to send
 * the client now, if it newly joined and there is one.
 */
export function joinCandles(
  registry: SubscriptionRegistry,
  feed: ChainFeed,
  client: StreamClient,
  key: string,
  fresh: CandleTopic,
): string | null {
  let topic = feed.candles.get(key);
  if (!topic) {
    topic = fresh;
    feed.candles.set(key, topic);
  }
  const t = topic;
  const added = !t.subscribers.has(client);
  t.subscribers.add(client);
  registry.add(client, key, () => {
    t.subscribers.delete(client);
    if (t.subscribers.size === 0) feed.candles.delete(key);
  });
  return added ? t.text : null;
}

/**
 * Joins `client` to the price topics of `assets` (`rows`: their token records as just read, for a
 * topic not yet followed). Returns the prices to send the client now, for the assets it newly joined.
 */
export function joinPrices(
  registry: SubscriptionRegistry,
  feed: ChainFeed,
  client: StreamClient,
  assets: readonly ChainAddress[],
  rows: ReadonlyMap<string, TokenRow>,
): string[] {
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
    registry.add(client, `prices|${asset.id}`, () => {
      t.subscribers.delete(client);
      if (t.subscribers.size === 0) feed.prices.delete(asset.id);
    });
  }
  return initial;
}
