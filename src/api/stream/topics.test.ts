import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpError } from "../../internal/errors.js";
import type { PoolRow } from "../../store/pools.js";
import type { TokenRow } from "../../store/tokens.js";
import { type CandleTopic, END_OF_BLOCK, newChainFeed, type StreamClient } from "./chain-feed.js";
import type { CandlesSubscription } from "./messages.js";
import { priceText } from "./texts.js";
import { createSubscriptionRegistry, joinCandles, joinPrices, joinTrades } from "./topics.js";

const client = (id: number): StreamClient => ({
  id,
  send: () => true,
  subscriptions: new Map(),
  closed: () => false,
});
const POOL = { chain_id: 1, address: "0xpool", token0: "0xt0", token1: "0xt1" } as PoolRow;
const token = (address: string, usd: number): TokenRow => ({
  chain_id: 1,
  address,
  name: null,
  symbol: null,
  decimals: 18,
  total_supply: null,
  usd_price: usd,
  price_change: null,
  liquidity_usd: null,
});
const asset = (address: `0x${string}`) => ({ id: `${address}:1`, chainId: 1, address });

describe("stream topics", () => {
  it("the registry counts each key of a connection once and refuses keys beyond the limit with a 429", () => {
    const registry = createSubscriptionRegistry(2);
    const a = client(1);
    let removed = 0;
    registry.add(a, "k1", () => removed++);
    registry.add(a, "k1", () => removed++);
    registry.requireRoom(a, ["k1", "k2"]);
    registry.add(a, "k2", () => removed++);
    assert.equal(registry.count(), 2);
    assert.throws(
      () => registry.requireRoom(a, ["k1", "k3"]),
      (error: unknown) =>
        error instanceof HttpError &&
        error.statusCode === 429 &&
        error.message === "too many subscriptions: at most 2 per connection (this one holds 2)",
    );
    a.subscriptions.get("k1")?.();
    a.subscriptions.get("k1")?.();
    assert.equal(registry.count(), 1);
    assert.equal(removed, 1);
  });

  it("trades: one topic per pair; a repeated subscription keeps its block; the topic leaves with its last subscriber", () => {
    const registry = createSubscriptionRegistry(10);
    const feed = newChainFeed(1);
    const [a, b] = [client(1), client(2)];
    const join = { key: "trades|p|t0", pairId: "p", pool: POOL, side: 0 as const, block: 10 };
    assert.equal(joinTrades(registry, feed, a, join), 10);
    assert.deepEqual(feed.trades.get("p")?.cursor, { block: 10, logIndex: END_OF_BLOCK });
    assert.equal(joinTrades(registry, feed, b, { ...join, key: "trades|p|t1", side: 1, block: 12 }), 12);
    assert.equal(
      joinTrades(registry, feed, a, { ...join, block: 15 }),
      10,
      "a's first block, not the new read's",
    );
    assert.equal(feed.trades.size, 1);
    assert.equal(feed.trades.get("p")?.subscribers.size, 2);
    assert.equal(registry.count(), 2);
    a.subscriptions.get("trades|p|t0")?.();
    assert.equal(feed.trades.get("p")?.subscribers.size, 1);
    b.subscriptions.get("trades|p|t1")?.();
    assert.equal(feed.trades.size, 0);
    assert.equal(registry.count(), 0);
  });

  it("candles: the first read makes the topic; a later joiner gets the topic's candle once, not the fresh read", () => {
    const registry = createSubscriptionRegistry(10);
    const feed = newChainFeed(1);
    const [a, b] = [client(1), client(2)];
    const subscription = { channel: "candles" } as CandlesSubscription;
    const fresh = (text: string | null): CandleTopic => ({
      pool: POOL,
      side: 0,
      subscription,
      latest: null,
      text,
      subscribers: new Set(),
    });
    assert.equal(joinCandles(registry, feed, a, "c", fresh("first")), "first");
    assert.equal(joinCandles(registry, feed, b, "c", fresh("second")), "first");
    assert.equal(joinCandles(registry, feed, b, "c", fresh("third")), null, "already joined");
    assert.equal(joinCandles(registry, feed, a, "d", fresh(null)), null, "no candle yet");
    assert.equal(feed.candles.size, 2);
    a.subscriptions.get("c")?.();
    b.subscriptions.get("c")?.();
    assert.deepEqual([...feed.candles.keys()], ["d"]);
  });

  it("prices: one topic per asset; the current prices of the assets newly joined, none for an unknown token", () => {
    const registry = createSubscriptionRegistry(10);
    const feed = newChainFeed(1);
    const [a, b] = [client(1), client(2)];
    const rows = new Map([[asset("0xt0").id, token("0xt0", 3000)]]);
    const both = [asset("0xt0"), asset("0xt1")];
    assert.deepEqual(joinPrices(registry, feed, a, both, rows), [priceText(token("0xt0", 3000))]);
    // The topic is as it was: b gets its price, not the one of b's own read.
    const later = new Map([[asset("0xt0").id, token("0xt0", 3100)]]);
    assert.deepEqual(joinPrices(registry, feed, b, both.slice(0, 1), later), [
      priceText(token("0xt0", 3000)),
    ]);
    assert.deepEqual(joinPrices(registry, feed, a, both, later), [], "already joined");
    assert.equal(registry.count(), 3);
    for (const remove of [...a.subscriptions.values()]) remove();
    assert.deepEqual([...feed.prices.keys()], [asset("0xt0").id]);
  });
});
