import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PoolRow } from "../../store/pools.js";
import type { SwapRow } from "../../store/swaps.js";
import {
  type CandleTopic,
  type ChainFeed,
  deliver,
  END_OF_BLOCK,
  forkPoint,
  heardAt,
  MAX_SEEN,
  newChainFeed,
  noteCommit,
  pollCheck,
  rewind,
  type StreamClient,
} from "./chain-feed.js";
import type { CandlesSubscription } from "./messages.js";
import { tradeText } from "./texts.js";

type Sent = { text: string; type: string; since: number | undefined };
const client = (id: number): StreamClient & { sent: Sent[] } => {
  const sent: Sent[] = [];
  return {
    id,
    sent,
    send: (text, type, since) => {
      sent.push({ text, type, since });
      return true;
    },
    subscriptions: new Map(),
    closed: () => false,
  };
};

const PAIR = "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc";
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const POOL: PoolRow = {
  chain_id: 1,
  address: PAIR,
  dex: "uniswap_v2",
  factory: "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
  token0: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
  token1: WETH,
  reserve0: null,
  reserve1: null,
  symbol0: "USDC",
  symbol1: "WETH",
  decimals0: 6,
  decimals1: 18,
  usd_price0: null,
  usd_price1: null,
  volume_usd_24h: null,
  liquidity_usd: null,
  price_change_24h: null,
};
const swap = (block: number, logIndex: number): SwapRow => ({
  block_number: block,
  log_index: logIndex,
  block_time: new Date(Date.UTC(2026, 0, 1, 0, 0, block)),
  tx_hash: `0x${block.toString(16).padStart(64, "0")}`,
  maker: null,
  exchange: null,
  amount0_in: "3000000000",
  amount1_in: "0",
  amount0_out: "0",
  amount1_out: "1000000000000000000",
  reserve0: null,
  reserve1: null,
  token0_usd: null,
  token1_usd: null,
  volume_usd: null,
});
const candleSubscription: CandlesSubscription = {
  channel: "candles",
  pair: { id: `${PAIR}:1`, chainId: 1, address: PAIR },
  asset: { id: `${WETH}:1`, chainId: 1, address: WETH },
  interval: "1m",
  currency: "token",
};

/** A feed with one trades topic (a on token0 after 10, b on token1 after 12), one candle topic (a, c) and one price topic (c). */
function feedWithTopics() {
  const [a, b, c] = [client(1), client(2), client(3)];
  const feed = newChainFeed(1);
  feed.trades.set("pair", {
    pool: POOL,
    cursor: { block: 12, logIndex: END_OF_BLOCK },
    subscribers: new Set([
      { client: a, assetIsToken0: true, after: 10 },
      { client: b, assetIsToken0: false, after: 12 },
    ]),
  });
  const candle: CandleTopic = {
    pool: POOL,
    side: 1,
    subscription: candleSubscription,
    latest: { position: { block: 12, logIndex: 0 }, time: new Date(0) },
    text: "old candle",
    subscribers: new Set([a, c]),
  };
  feed.candles.set("candle", candle);
  const asset = { id: `${WETH}:1`, chainId: 1, address: WETH } as const;
  feed.prices.set(asset.id, { asset, text: "old price", subscribers: new Set([c]) });
  return { feed, a, b, c, candle };
}

describe("a chain's feed", () => {
  it("rewind: one rollback per connection, every topic rewound to the block, checkpoints above it forgotten", () => {
    const { feed, a, b, c, candle } = feedWithTopics();
    feed.seen = [
      { block: 8, hash: "0x08" },
      { block: 9, hash: "0x09" },
      { block: 11, hash: "0x11" },
    ];
    feed.high = 12;
    feed.fedBlock = 12;
    feed.pendingRollback = 9;
    const told = rewind(feed, 9, 1234);
    assert.equal(told, 3);
    const rollback = {
      text: JSON.stringify({ type: "rollback", chain: 1, block: 9 }),
      type: "rollback",
      since: undefined,
    };
    assert.deepEqual(a.sent, [rollback]);
    assert.deepEqual(b.sent, [rollback]);
    assert.deepEqual(c.sent, [rollback]);
    const topic = feed.trades.get("pair");
    assert.deepEqual(topic?.cursor, { block: 9, logIndex: END_OF_BLOCK });
    assert.deepEqual(
      [...(topic?.subscribers ?? [])].map((s) => s.after),
      [9, 9],
    );
    assert.equal(candle.latest, null);
    assert.equal(candle.text, null);
    assert.equal([...feed.prices.values()][0]?.text, null);
    assert.deepEqual(
      feed.seen.map((s) => s.block),
      [8, 9],
    );
    assert.equal(feed.fedBlock, -1);
    assert.equal(feed.high, 9);
    assert.equal(feed.rollbackAt, 1234);
    assert.equal(feed.rolledBackTo, 9);
    assert.equal(feed.pendingRollback, null);
  });

  it("rewind keeps a pending rollback deeper than the one sent, and a cursor already below the block", () => {
    const { feed } = feedWithTopics();
    feed.pendingRollback = 5;
    const topic = feed.trades.get("pair");
    if (topic) topic.cursor = { block: 7, logIndex: 3 };
    rewind(feed, 9, 0);
    assert.equal(feed.pendingRollback, 5);
    assert.deepEqual(topic?.cursor, { block: 7, logIndex: 3 });
  });

  it("noteCommit: a lower block holds a rollback and drops the undone branch's notices; no cycle without topics", () => {
    const feed = newChainFeed(1);
    assert.equal(noteCommit(feed, 10, 100), false);
    assert.equal(feed.notified, 10);
    assert.deepEqual(feed.notices, []);
    const { feed: busy } = feedWithTopics();
    assert.equal(noteCommit(busy, 10, 100), true);
    assert.equal(noteCommit(busy, 11, 110), true);
    assert.equal(noteCommit(busy, 12, 120), true);
    assert.equal(busy.pendingRollback, null);
    assert.equal(noteCommit(busy, 10, 130), true);
    assert.equal(busy.pendingRollback, 10);
    assert.deepEqual(busy.notices, [
      { block: 10, at: 100 },
      { block: 10, at: 130 },
    ]);
    noteCommit(busy, 11, 140);
    noteCommit(busy, 8, 150);
    noteCommit(busy, 9, 160);
    assert.equal(busy.pendingRollback, 8, "the lowest rollback heard stays pending");
    assert.equal(busy.notified, 9);
  });

  it("heardAt: the first notice at or above the block, else the fallback", () => {
    const notices = [
      { block: 10, at: 100 },
      { block: 13, at: 130 },
    ];
    assert.equal(heardAt(notices, 9, 1), 100);
    assert.equal(heardAt(notices, 11, 1), 130);
    assert.equal(heardAt(notices, 13, 1), 130);
    assert.equal(heardAt(notices, 14, 1), 1);
  });

  it("deliver: each trade after a subscriber's block, from its side, timed by its notice; changed candles and prices only", () => {
    const { feed, a, b, c, candle } = feedWithTopics();
    feed.notices = [
      { block: 12, at: 120 },
      { block: 13, at: 130 },
      { block: 20, at: 200 },
    ];
    const topic = feed.trades.get("pair");
    assert.ok(topic);
    const price = [...feed.prices.values()][0];
    assert.ok(price);
    const rows = [swap(11, 0), swap(13, 1), swap(13, 2)];
    const latest = { position: { block: 13, logIndex: 2 }, time: new Date(13_000) };
    deliver(
      feed,
      {
        block: 13,
        trades: [{ topic, rows }],
        candles: [{ topic: candle, latest, texts: ["old candle", "new candle"] }],
        prices: [{ topic: price, text: "new price" }],
      },
      999,
    );
    const trade = (row: SwapRow, token0: boolean, since: number) => ({
      text: tradeText(POOL, row, token0),
      type: "trade",
      since,
    });
    // a follows from block 10 (token0 side): all three; b from block 12 (token1): block 13's two.
    assert.deepEqual(a.sent, [
      trade(swap(11, 0), true, 120),
      trade(swap(13, 1), true, 130),
      trade(swap(13, 2), true, 130),
      { text: "new candle", type: "candle", since: 120 },
    ]);
    assert.deepEqual(b.sent, [trade(swap(13, 1), false, 130), trade(swap(13, 2), false, 130)]);
    assert.deepEqual(c.sent, [
      { text: "new candle", type: "candle", since: 120 },
      { text: "new price", type: "price", since: 120 },
    ]);
    assert.deepEqual(topic.cursor, { block: 13, logIndex: 2 });
    assert.equal(candle.latest, latest);
    assert.equal(candle.text, "new candle");
    assert.equal(price.text, "new price");
    assert.equal(feed.fedBlock, 13);
    assert.deepEqual(feed.notices, [{ block: 20, at: 200 }], "the notices fed are consumed");
  });

  it("deliver without notices times data from the cycle's start; an unknown price (null) is not sent", () => {
    const { feed, c } = feedWithTopics();
    const price = [...feed.prices.values()][0];
    assert.ok(price);
    deliver(feed, { block: 14, trades: [], candles: [], prices: [{ topic: price, text: null }] }, 999);
    assert.deepEqual(c.sent, []);
    assert.equal(price.text, "old price");
    const candle = feed.candles.get("candle");
    assert.ok(candle);
    deliver(
      feed,
      { block: 15, trades: [], candles: [{ topic: candle, latest: null, texts: ["x"] }], prices: [] },
      777,
    );
    assert.deepEqual(c.sent, [{ text: "x", type: "candle", since: 777 }]);
  });
});

describe("the poll's check of a chain", () => {
  const at = (feed: ChainFeed, block: number, hash: string | null, listening: boolean, time = 0) =>
    pollCheck(feed, { block, hash, at: time }, listening);

  it("while listening, only records (unless asked to verify once); the first poll has nothing to compare", () => {
    const feed = newChainFeed(1);
    assert.deepEqual(at(feed, 10, "0x10", false), { kind: "none" });
    assert.deepEqual(at(feed, 11, "0x11", true), { kind: "none" });
    feed.verify = true;
    const previous = feed.polled;
    assert.deepEqual(at(feed, 12, "0x12", true), { kind: "moved", block: 12, previous });
    assert.equal(feed.verify, false);
    assert.deepEqual(at(feed, 13, "0x13", true), { kind: "none" });
    assert.deepEqual(
      feed.seen.map((s) => s.block),
      [10, 11, 12, 13],
    );
  });

  it("polling: unchanged is nothing, a new hash at the same block is a move, a lower block a rollback", () => {
    const feed = newChainFeed(1);
    at(feed, 10, "0x10", false);
    assert.deepEqual(at(feed, 10, "0x10", false), { kind: "none" });
    assert.equal(at(feed, 10, "0x10b", false).kind, "moved");
    feed.seen.push({ block: 12, hash: "0x12" });
    assert.deepEqual(at(feed, 8, "0x08", false, 50), { kind: "lowered", block: 8 });
    assert.equal(feed.pendingRollback, 8);
    assert.deepEqual(
      feed.seen.map((s) => s.block),
      [8],
      "checkpoints above the new one forgotten",
    );
  });

  it("a lowered checkpoint whose rollback a read already sent since the last poll is not held again", () => {
    const feed = newChainFeed(1);
    at(feed, 10, "0x10", false, 100);
    rewind(feed, 7, 150);
    assert.deepEqual(at(feed, 8, "0x08", false, 200), { kind: "lowered", block: 8 });
    assert.equal(feed.pendingRollback, null);
    // A rollback sent before that poll does not count.
    const stale = newChainFeed(1);
    rewind(stale, 7, 50);
    at(stale, 10, "0x10", false, 100);
    at(stale, 8, "0x08", false, 200);
    assert.equal(stale.pendingRollback, 8);
  });

  it("keeps the newest MAX_SEEN checkpoints", () => {
    const feed = newChainFeed(1);
    for (let block = 0; block < MAX_SEEN + 5; block++) at(feed, block, `0x${block}`, true);
    assert.equal(feed.seen.length, MAX_SEEN);
    assert.equal(feed.seen[0]?.block, 5);
  });

  it("forkPoint: the highest known checkpoint still canonical once one changed; below the stored ones when none stands", () => {
    const seen = [
      { block: 5, hash: "0x05" },
      { block: 7, hash: "0x07" },
      { block: 9, hash: "0x09" },
      { block: 11, hash: "0x11" },
    ];
    const stored = (hashes: Record<number, string>) =>
      new Map(Object.entries(hashes).map(([block, hash]) => [Number(block), hash]));
    assert.equal(
      forkPoint(seen.slice(0, 1), stored({ 5: "0xff" })),
      null,
      "one checkpoint: nothing to compare",
    );
    const newest = stored({ 5: "0x05", 7: "0x07", 9: "0x09", 11: "0xnew" });
    assert.equal(forkPoint(seen, newest), null, "the newest checkpoint (just polled) is not compared");
    assert.equal(forkPoint(seen, stored({ 5: "0x05", 7: "0x07", 9: "0xnew" })), 7);
    const noneStanding = stored({ 6: "0x06", 7: "0xnew" });
    assert.equal(forkPoint(seen, noneStanding), 5, "none standing: below the lowest stored block");
    assert.equal(
      forkPoint(seen, stored({ 4: "0x04" })),
      null,
      "checkpoints no longer stored are not a reorg",
    );
  });
});
