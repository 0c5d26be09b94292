import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Network, TokenMarket, TopPool, Windows } from "./api.js";
import {
  baseTokenIds,
  listedPools,
  networkSummary,
  type PoolList,
  poolLists,
  poolRow,
  poolTokenHref,
} from "./pools.js";
import { parseRoute } from "./route.js";

const stats = (change: number, volume: number) => ({
  price_change: change,
  volume_usd: volume,
  buys: 5,
  sells: 7,
  makers: 9,
});
const windows: Windows = {
  "5m": stats(0, 10),
  "1h": stats(3.5, 2000),
  "6h": stats(1, 9000),
  "24h": stats(-4, 1.5e6),
};
const weth = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const usdc = "0x0165878a594ca255338adfa4d48449f69242eb8f";
/** USDC/WETH in address order; the API names it WETH/USDC, WETH the base. */
const pool: TopPool = {
  pair_id: "0x1111111111111111111111111111111111111111:31337",
  chain: 31337,
  pair_address: "0x1111111111111111111111111111111111111111",
  factory_name: "Uniswap V2",
  factory_address: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
  protocol: "v2",
  token0_address: `${usdc}:31337`,
  token1_address: `${weth}:31337`,
  token0_symbol: "USDC",
  token1_symbol: "WETH",
  name: "WETH/USDC",
  base_address: `${weth}:31337`,
  quote_address: `${usdc}:31337`,
  hooks: null,
  price: 1 / 3000,
  token0_usd_price: 1,
  token1_usd_price: 3001.5,
  // The pool's own figures: USDC's price in WETH went up 4 % (WETH's down).
  windows: { ...windows, "24h": stats(4.2, 1.5e6) },
  liquidity_usd: 2.5e6,
  created_block: 10,
  created_at: "2026-03-08T07:00:00Z",
  first_trade_at: "2026-03-08T07:01:00Z",
  rank: 1,
};
/** WETH's own market record: its USD change per window. */
const markets = new Map<string, TokenMarket>([[`${weth}:31337`, { windows } as TokenMarket]]);

describe("pool rows", () => {
  const now = Date.parse("2026-03-08T10:00:00Z");
  const [top, trending, fresh] = poolLists;

  it("links each token of the pool to its page, opened on that pool and that token's side", () => {
    const route0 = parseRoute(poolTokenHref(pool, 0));
    const route1 = parseRoute(poolTokenHref(pool, 1));
    assert.equal(route0.name === "token" && route0.tokenId, `${usdc}:31337`);
    assert.equal(route0.name === "token" && route0.pairId, pool.pair_id);
    assert.equal(route1.name === "token" && route1.tokenId, `${weth}:31337`);
    assert.equal(route1.name === "token" && route1.pairId, pool.pair_id);
  });

  it("names the pool base/quote, base first in the links, with the base's USD price and USD change", () => {
    assert.ok(top && trending && fresh);
    const row = poolRow(pool, top, now, markets);
    assert.deepEqual(row.symbols, ["WETH", "USDC"]);
    assert.deepEqual(row.hrefs, [poolTokenHref(pool, 1), poolTokenHref(pool, 0)]);
    assert.equal(row.price, "$3,001.50");
    assert.deepEqual(
      row.change,
      { text: "−4.00%", direction: "down" },
      "WETH's change, not the pool's +4.20 %",
    );
    assert.equal(row.volume, "$1.5M");
    assert.equal(row.liquidity, "$2.5M");
    assert.equal(row.venue, "Uniswap V2");
    assert.equal(row.protocol, "v2");
    const hot = poolRow(pool, trending, now, markets);
    assert.equal(hot.change.text, "+3.50%", "the list's window: 1 h for trending");
    assert.equal(hot.volume, "$2K");
    assert.equal(poolRow(pool, fresh, now).venue, "Uniswap V2 · created 3 h ago");
    assert.equal(poolRow(pool, top, now).change.text, "—", "no market record of the base: a dash");
    assert.deepEqual(baseTokenIds([pool, { ...pool, pair_id: "0x2:31337" }]), [`${weth}:31337`]);
  });

  it("shows a token without a symbol by its short address, and unknown figures as dashes", () => {
    assert.ok(top);
    const row = poolRow(
      { ...pool, token0_symbol: null, token1_usd_price: null, liquidity_usd: null },
      top,
      now,
    );
    assert.equal(row.symbols[1], "0x0165…eb8f");
    assert.equal(row.price, "—");
    assert.equal(row.liquidity, "—");
  });
});

describe("networkSummary", () => {
  it("says how far the network is indexed and what it holds", () => {
    const network: Network = {
      chain: 1,
      name: "Ethereum",
      native_symbol: "ETH",
      explorer_url: null,
      indexed_block: 19_000_000,
      indexed_at: null,
      ready: true,
      dexes: 1,
      pools: 1234,
      tokens: 567,
    };
    assert.equal(networkSummary(network), "block 19,000,000 · 1 DEX · 1,234 pools · 567 tokens");
    assert.equal(
      networkSummary({ ...network, indexed_block: null, dexes: 2 }),
      "2 DEXes · 1,234 pools · 567 tokens",
    );
  });
});

describe("listedPools", () => {
  const [top, trending] = poolLists as [PoolList, PoolList];
  const unpriced: TopPool = {
    ...pool,
    pair_id: "0x2222222222222222222222222222222222222222:31337",
    liquidity_usd: null,
  };
  const empty: TopPool = {
    ...pool,
    pair_id: "0x3333333333333333333333333333333333333333:31337",
    liquidity_usd: 0,
  };

  it("leaves pools without a USD liquidity out of trending only", () => {
    assert.deepEqual(
      listedPools([unpriced, pool, empty], trending).map((p) => p.pair_id),
      [pool.pair_id],
    );
    assert.deepEqual(
      listedPools([unpriced, pool, empty], top).map((p) => p.pair_id),
      [unpriced.pair_id, pool.pair_id, empty.pair_id],
    );
  });
});
