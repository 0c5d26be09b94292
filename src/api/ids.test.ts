import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpError } from "../internal/errors.js";
import {
  assetSide,
  MAX_LIST_ITEMS,
  parseAddress,
  parseAddressList,
  parseChainList,
  parseId,
  parseIdList,
  parsePairId,
  parsePairIdList,
  patterns,
  quote,
} from "./ids.js";

const usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
const weth = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";

/** A parsed id: the address lowercased, with its chain. */
const lowercased = (address: string, chainId: number) => ({
  chainId,
  address: address.toLowerCase(),
  id: `${address.toLowerCase()}:${chainId}`,
});

const isBadRequest = (pattern: RegExp) => (error: unknown) =>
  error instanceof HttpError && error.statusCode === 400 && pattern.test(error.message);

describe("parseId", () => {
  it("lowercases the address and keeps the chain", () => {
    assert.deepEqual(parseId(`${usdc}:1`, "tokenId"), lowercased(usdc, 1));
  });
  it("rejects malformed ids with a 400 naming the parameter", () => {
    for (const bad of [
      usdc,
      `${usdc}:0`,
      `${usdc}:-1`,
      `${usdc}:1.5`,
      `${usdc.slice(0, 41)}:1`,
      `0x${"g".repeat(40)}:1`,
      "",
    ]) {
      assert.throws(
        () => parseId(bad, "tokenId"),
        isBadRequest(/^tokenId must be an id <address>:<chainId>/),
        bad,
      );
    }
  });
});

describe("parseIdList", () => {
  it("keeps request order, drops duplicates whatever their case and trims spaces", () => {
    const ids = parseIdList(`${weth}:1, ${usdc}:1,${weth.toUpperCase().replace("0X", "0x")}:1`, "asset_ids");
    assert.deepEqual(
      ids.map((i) => i.id),
      [`${weth}:1`, `${usdc.toLowerCase()}:1`],
    );
  });
  it(`allows ${MAX_LIST_ITEMS} ids and refuses one more`, () => {
    const id = (i: number) => `0x${i.toString(16).padStart(40, "0")}:1`;
    const ok = Array.from({ length: MAX_LIST_ITEMS }, (_, i) => id(i)).join(",");
    assert.equal(parseIdList(ok, "tokenId").length, MAX_LIST_ITEMS);
    assert.throws(
      () => parseIdList(`${ok},${id(999)}`, "tokenId"),
      isBadRequest(/^tokenId lists 101 items; at most 100/),
    );
  });
});

describe("parseAddress and lists", () => {
  it("lowercases and validates", () => {
    assert.equal(parseAddress(` ${usdc} `, "contract"), usdc.toLowerCase());
    assert.throws(() => parseAddress("0x123", "contract"), isBadRequest(/^contract must be an address/));
    assert.deepEqual(parseAddressList(`${usdc},${weth},${usdc.toLowerCase()}`, "wallets"), [
      usdc.toLowerCase(),
      weth,
    ]);
  });
  it("parses chain lists", () => {
    assert.deepEqual(parseChainList("1, 56,1", "chains"), [1, 56]);
    assert.throws(() => parseChainList("1,x", "chains"), isBadRequest(/^chains must be/));
  });
});

describe("patterns", () => {
  it("match what the parsers accept", () => {
    const idList = new RegExp(patterns.idList, "u");
    assert.ok(idList.test(`${usdc}:1`));
    assert.ok(idList.test(`${usdc}:1, ${weth}:56`));
    assert.ok(!idList.test(`${usdc}:1,`));
    assert.ok(!idList.test(`${usdc}:01`));
    assert.ok(new RegExp(patterns.chainList, "u").test("1,56 , 137"));
  });
});

describe("quote", () => {
  it("cuts long values", () => {
    assert.equal(quote("x".repeat(100)).length, 62);
    assert.equal(quote(["a", "b"]), JSON.stringify('["a","b"]'));
  });
});

describe("assetSide", () => {
  const a = `0x${"a".repeat(40)}`;
  const b = `0x${"b".repeat(40)}`;
  const pool = { chain_id: 1, token0: a, token1: b };
  const pair = parsePairId(`0x${"c".repeat(40)}:1`, "pair_id");
  it("answers the asset's side of the pair", () => {
    assert.equal(assetSide(pool, parseId(`${a}:1`, "asset_id"), pair), 0);
    assert.equal(assetSide(pool, parseId(`${b.toUpperCase().replace("0X", "0x")}:1`, "asset_id"), pair), 1);
  });
  it("is a 400 naming asset_id for another token or another chain's", () => {
    for (const id of [`0x${"d".repeat(40)}:1`, `${a}:56`]) {
      assert.throws(
        () => assetSide(pool, parseId(id, "asset_id"), pair),
        (e: unknown) =>
          e instanceof HttpError &&
          e.statusCode === 400 &&
          e.message === `asset_id ${id} is not one of the two tokens of pair ${pair.id}`,
      );
    }
  });
});

const pair = "0xB4e16d0168e52d35CaCD2c6185b44Ac22D5bD1bD";
/** A Uniswap V4 PoolId (32 bytes). */
const poolId = "0x21C67E77068DE97969BA93D4AAB21826D33CA12BB9F565D8496E8FDA8A82CA27";

describe("pair ids", () => {
  it("take a pool's address or a 32-byte pool id, lowercased", () => {
    assert.deepEqual(parsePairId(`${pair}:1`, "pair_id"), lowercased(pair, 1));
    assert.deepEqual(parsePairId(` ${poolId}:56 `, "pair_id"), lowercased(poolId, 56));
    assert.deepEqual(
      parsePairIdList(`${poolId}:1,${pair}:1,${poolId.toLowerCase()}:1`, "pair_id").map((p) => p.id),
      [`${poolId.toLowerCase()}:1`, `${pair.toLowerCase()}:1`],
    );
    assert.match(`${poolId}:1`, new RegExp(patterns.pairId));
    assert.match(`${pair}:1,${poolId}:137`, new RegExp(patterns.marketPairIdList));
  });

  it("refuse other lengths with a 400 naming the parameter, and token ids stay 40 hex digits", () => {
    for (const bad of [`${poolId.slice(0, -2)}:1`, `${poolId}00:1`, `${pair.slice(0, -1)}:1`, poolId]) {
      assert.throws(
        () => parsePairId(bad, "pair_id"),
        isBadRequest(/^pair_id must be an id <address>:<chainId> \(/),
      );
    }
    assert.throws(() => parseId(`${poolId}:1`, "asset_id"), isBadRequest(/^asset_id must be/));
    assert.doesNotMatch(`${poolId}:1`, new RegExp(patterns.id));
  });
});
