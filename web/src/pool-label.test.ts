import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { Pair, TokenMarket, Windows } from "./api.js";
import { pairName } from "./market.js";
import { basePrice, baseQuote, isPoolId, pairVenues, poolVenue, poolVenueTitle } from "./pool-label.js";

const weth = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const poolId = `0x1234${"5".repeat(56)}abcd`;

/** USDC/WETH in address order, named by the API as traders read it: WETH/USDC. */
const pair = (over: Partial<Pair> = {}): Pair => ({
  pair_id: `0x${"a".repeat(40)}:1`,
  chain: 1,
  change: 1.25,
  factory_address: `0x${"f".repeat(40)}`,
  factory_name: "Uniswap V3",
  liquidity_value: 1e6,
  pair_address: `0x${"a".repeat(40)}`,
  token0_address: `${usdc}:1`,
  token1_address: `${weth}:1`,
  token0_price: 1,
  token1_price: 3000.5,
  token0_reserves: 1,
  token1_reserves: 1,
  token0_symbol: "USDC",
  token1_symbol: "WETH",
  protocol: "v3",
  name: "WETH/USDC",
  base_address: `${weth}:1`,
  quote_address: `${usdc}:1`,
  hooks: null,
  volume: 5,
  ...over,
});

const windows = (change24h: number | null): Windows => {
  const w = { price_change: change24h, volume_usd: 1, buys: 1, sells: 1, makers: 1 };
  return { "5m": { ...w, price_change: 0.5 }, "1h": w, "6h": w, "24h": w };
};

describe("pool names", () => {
  it("names a pool base/quote as the API does, whatever the address order", () => {
    const p = pair();
    assert.equal(pairName(p), "WETH/USDC");
    assert.deepEqual(baseQuote(p), {
      symbols: ["WETH", "USDC"],
      tokenIds: [`${weth}:1`, `${usdc}:1`],
    });
    const reversed = pair({
      token0_address: `${weth}:1`,
      token1_address: `${usdc}:1`,
      token0_symbol: "WETH",
      token1_symbol: "USDC",
      token0_price: 3000.5,
      token1_price: 1,
    });
    assert.deepEqual(baseQuote(reversed).symbols, ["WETH", "USDC"]);
  });

  it("shows the base's USD price and the base token's own USD change, not token0's nor the pool ratio's", () => {
    const markets = new Map<string, TokenMarket>([
      [`${weth}:1`, { token_id: `${weth}:1`, windows: windows(-4) } as TokenMarket],
    ]);
    assert.deepEqual(basePrice(pair(), markets, "24h"), {
      price: "$3,000.50",
      change: { text: "−4.00%", direction: "down" },
    });
    assert.equal(basePrice(pair(), markets, "5m").change.text, "+0.50%");
    assert.equal(basePrice(pair(), new Map(), "24h").change.text, "—", "no market record: a dash");
  });
});

describe("pool venues", () => {
  it("shows the DEX, the family where the DEX's name does not say it, the hook and a pool id shortened", () => {
    assert.equal(poolVenue(pair()), "Uniswap V3");
    assert.equal(
      poolVenue(pair({ factory_name: "QuickSwap V3", protocol: "algebra" })),
      "QuickSwap V3 · Algebra",
    );
    assert.equal(poolVenue(pair({ factory_name: "PancakeSwap V3", protocol: "v3" })), "PancakeSwap V3");
    const v4 = { factory_name: "Uniswap V4", protocol: "v4" as const, pair_address: poolId };
    assert.equal(poolVenue(pair(v4)), "Uniswap V4 · 0x1234…abcd");
    assert.equal(
      poolVenue(pair({ ...v4, hooks: `0x${"0".repeat(36)}1080` })),
      "Uniswap V4 · hook · 0x1234…abcd",
    );
    assert.equal(
      poolVenue(pair({ ...v4, hooks: `0x${"0".repeat(38)}08`, hook_may_rewrite_amounts: true })),
      "Uniswap V4 · delta hook · 0x1234…abcd",
    );
    assert.equal(
      poolVenue(
        pair({ factory_name: "PancakeSwap Infinity", protocol: "infinity-cl", pair_address: poolId }),
      ),
      "PancakeSwap Infinity · Infinity CL · 0x1234…abcd",
    );
    assert.ok(isPoolId(poolId) && !isPoolId(weth));
    assert.match(poolVenueTitle(pair(v4)), /Family: V4\nPool id: 0x12345{56}abcd$/);
  });

  it("adds the short address where pools of one DEX and pair would look alike", () => {
    const a = pair({ pair_id: "0xa:1", pair_address: `0x${"a".repeat(40)}` });
    const b = pair({ pair_id: "0xb:1", pair_address: `0x${"b".repeat(40)}` });
    const c = pair({
      pair_id: "0xc:1",
      pair_address: `0x${"c".repeat(40)}`,
      factory_name: "Uniswap V2",
      protocol: "v2",
    });
    const venues = pairVenues([a, b, c]);
    assert.equal(venues.get("0xa:1"), "Uniswap V3 · 0xaaaa…aaaa");
    assert.equal(venues.get("0xc:1"), "Uniswap V2");
  });
});
