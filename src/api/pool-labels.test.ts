import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import type { ReferenceTokens } from "../config/schema.js";
import { NATIVE_COIN } from "../model/index.js";
import { baseSide, hookMayRewriteAmounts, hookOf, pairNaming } from "./pool-labels.js";

const a = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const [USDC, USDT, WETH, WBTC, CBBTC, KIBL, FROG] = [1, 2, 3, 4, 5, 6, 7].map(a) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const reference: ReferenceTokens = {
  stablecoins: [USDC, USDT],
  wrappedNative: WETH as `0x${string}`,
  wrappedBtc: [WBTC, CBBTC],
  others: [],
} as ReferenceTokens;
const symbols: Record<string, string> = {
  [USDC]: "USDC",
  [USDT]: "USDT",
  [WETH]: "WETH",
  [WBTC]: "WBTC",
  [CBBTC]: "cbBTC",
  [KIBL]: "KIBL",
  [FROG]: "FROG",
  [NATIVE_COIN]: "ETH",
};
const nameOf = (token0: string, token1: string, ref: { chain?: ReferenceTokens } = { chain: reference }) =>
  pairNaming(ref.chain, {
    chainId: 1,
    token0,
    token1,
    symbol0: symbols[token0] ?? null,
    symbol1: symbols[token1] ?? null,
  }).name;

describe("pairNaming: base/quote as traders read a pool", () => {
  it("quotes in the reference token whatever the address order: stablecoin, then wrapped native, then wrapped BTC", () => {
    // [token0, token1] → the name, both orders of the same two tokens.
    const cases: [string, string, string][] = [
      [USDC, WETH, "WETH/USDC"],
      [WETH, USDT, "WETH/USDT"],
      [WETH, WBTC, "WBTC/WETH"],
      [WBTC, USDC, "WBTC/USDC"],
      [KIBL, WETH, "KIBL/WETH"],
      [KIBL, WBTC, "KIBL/WBTC"],
      [KIBL, USDT, "KIBL/USDT"],
      [NATIVE_COIN, USDC, "ETH/USDC"],
      [NATIVE_COIN, FROG, "FROG/ETH"],
      [NATIVE_COIN, WETH, "ETH/WETH"],
      [NATIVE_COIN, WBTC, "WBTC/ETH"],
      // Within a group, the configuration's order: its first stablecoin, its first wrapped BTC.
      [USDC, USDT, "USDT/USDC"],
      [WBTC, CBBTC, "cbBTC/WBTC"],
    ];
    for (const [x, y, name] of cases) {
      assert.equal(nameOf(x, y), name, `${symbols[x]}, ${symbols[y]}`);
      assert.equal(nameOf(y, x), name, `${symbols[y]}, ${symbols[x]}`);
    }
  });

  it("keeps the pool's order where neither token is a reference, or the chain has none", () => {
    assert.equal(nameOf(KIBL, FROG), "KIBL/FROG");
    assert.equal(nameOf(FROG, KIBL), "FROG/KIBL");
    assert.equal(nameOf(USDC, WETH, {}), "USDC/WETH");
    assert.equal(baseSide(reference, KIBL, FROG), 0);
  });

  it("gives the base and quote ids with the chain, and a short address for a token without a symbol", () => {
    const unnamed = `0xabcdef${"0".repeat(30)}1234`;
    assert.deepEqual(
      pairNaming(reference, { chainId: 56, token0: USDC, token1: unnamed, symbol0: "USDC", symbol1: null }),
      { name: "0xabcd…1234/USDC", base_address: `${unnamed}:56`, quote_address: `${USDC}:56` },
    );
    assert.equal(baseSide(reference, USDC, unnamed), 1);
  });
});

describe("a pool's hook", () => {
  it("is the hook contract of a pool inside a manager, null for none or the zero address", () => {
    const hooks = `0x${"00".repeat(18)}1080`;
    assert.equal(hookOf({ hooks }), hooks);
    assert.equal(hookOf({ hooks: NATIVE_COIN }), null);
    assert.equal(hookOf({ hooks: null }), null);
    assert.equal(hookOf({}), null);
  });

  it("may rewrite amounts as its family judges it: a V4 hook with a return-delta permission", () => {
    // Uniswap V4 keeps the permissions in the hook address's low bits: bit 3 beforeSwapReturnDelta.
    assert.equal(hookMayRewriteAmounts({ protocol: "v4", hooks: `0x${"00".repeat(19)}08` }), true);
    assert.equal(hookMayRewriteAmounts({ protocol: "v4", hooks: `0x${"00".repeat(18)}1080` }), false);
    assert.equal(hookMayRewriteAmounts({ protocol: "v3" }), false);
    assert.equal(hookMayRewriteAmounts({}), false);
  });
});
