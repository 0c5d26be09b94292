/**
 * A subscription's first read and its joining: on the chain's queue (after the cycles before it),
 * the pool or tokens are read in a snapshot of the chain's feed, then the connection joins the
 * topics (see topics.ts), is acknowledged, and gets the current candle or prices.
 */
import type { DbClient } from "../../store/db.js";
import { findTokens } from "../../store/tokens.js";
import type { ChainAddress } from "../ids.js";
import type { Snapshot } from "../read-replicas.js";
import { latestTrade } from "./candles.js";
import {
  type CandleTopic,
  type ChainFeed,
  enqueue,
  type StreamClient,
  subscriptionKeys,
} from "./chain-feed.js";
import { candleTexts, poolOf } from "./feed-reads.js";
import { type Subscription, subscriptionFields } from "./messages.js";
import { joinCandles, joinPrices, joinTrades, type SubscriptionRegistry } from "./topics.js";

export type SubscriberDeps = {
  feedOf(chainId: number): ChainFeed;
  /** Reads in a snapshot holding all the chain's feed has seen (the feeder's read). */
  read<T>(feed: ChainFeed, fn: (db: DbClient, snapshot: Snapshot) => Promise<T>): Promise<T>;
  registry: SubscriptionRegistry;
  now: () => Date;
};

/** Sends `client` the acknowledgement `type` (subscribed, unsubscribed) echoing the subscription's parameters. */
export const ack = (client: StreamClient, type: string, subscription: Subscription, extra = {}): boolean =>
  client.send(JSON.stringify({ type, ...subscriptionFields(subscription), ...extra }), type);

/** The function that reads, joins and acknowledges a (checked) subscription of a connection. */
export function createSubscriber(deps: SubscriberDeps) {
  const { feedOf, read, registry } = deps;

  const subscribeTrades = async (client: StreamClient, s: Extract<Subscription, { channel: "trades" }>) => {
    const feed = feedOf(s.pair.chainId);
    await enqueue(feed, async () => {
      const { pool, side, block } = await read(feed, async (db, snapshot) => ({
        ...(await poolOf(db, s.pair, s.asset)),
        block: snapshot.blockOf(s.pair.chainId),
      }));
      if (client.closed()) return;
      const [key] = subscriptionKeys(s) as [string];
      const after = joinTrades(registry, feed, client, { key, pairId: s.pair.id, pool, side, block });
      ack(client, "subscribed", s, { block: after });
    });
  };

  const subscribeCandles = async (client: StreamClient, s: Extract<Subscription, { channel: "candles" }>) => {
    const feed = feedOf(s.pair.chainId);
    const [key] = subscriptionKeys(s) as [string];
    await enqueue(feed, async () => {
      const fresh = await read(feed, async (db): Promise<CandleTopic> => {
        const { pool, side } = await poolOf(db, s.pair, s.asset);
        const latest = await latestTrade(db, s.pair.chainId, pool.address);
        const texts = await candleTexts(db, { side, subscription: s }, latest, latest, deps.now());
        return { pool, side, subscription: s, latest, text: texts.at(-1) ?? null, subscribers: new Set() };
      });
      if (client.closed()) return;
      const initial = joinCandles(registry, feed, client, key, fresh);
      ack(client, "subscribed", s);
      if (initial !== null) client.send(initial, "candle");
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
        const initial = joinPrices(registry, feed, client, assets, rows);
        if (!acked) ack(client, "subscribed", s);
        acked = true;
        for (const text of initial) client.send(text, "price");
      });
    }
  };

  return (client: StreamClient, subscription: Subscription): Promise<void> => {
    switch (subscription.channel) {
      case "trades":
        return subscribeTrades(client, subscription);
      case "candles":
        return subscribeCandles(client, subscription);
      case "prices":
        return subscribePrices(client, subscription);
    }
  };
}
