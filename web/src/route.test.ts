import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import {
  defaultDays,
  defaultInterval,
  formatRoute,
  parseId,
  parsePairId,
  parseRoute,
  tokenHref,
} from "./route.js";

const weth = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2";
const pair = "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc";

describe("parseRoute", () => {
  it("reads the home page", () => {
    assert.deepEqual(parseRoute(""), { name: "home" });
    assert.deepEqual(parseRoute("#/"), { name: "home" });
  });
  it("reads a token page with defaults, lowercasing the address", () => {
    assert.deepEqual(parseRoute(`#/token/${weth}:1`), {
      name: "token",
      tokenId: `${weth.toLowerCase()}:1`,
      interval: defaultInterval,
      days: defaultDays,
    });
  });
  it("reads the chosen pair, side, interval and days", () => {
    const route = parseRoute(`#/token/${weth}:1?pair=${pair}:1&side=1&interval=4h&days=30`);
    assert.deepEqual(route, {
      name: "token",
      tokenId: `${weth.toLowerCase()}:1`,
      pairId: `${pair}:1`,
      side: 1,
      interval: "4h",
      days: 30,
    });
  });
  it("ignores invalid choices instead of failing", () => {
    const route = parseRoute(`#/token/${weth}:1?pair=nope&side=2&interval=2m&days=3`);
    assert.deepEqual(route, { name: "token", tokenId: `${weth.toLowerCase()}:1`, interval: "15m", days: 7 });
  });
  it("says not found for malformed ids and unknown paths", () => {
    assert.equal(parseRoute("#/token/0x1234:1").name, "notFound");
    assert.equal(parseRoute(`#/token/${weth}:0`).name, "notFound");
    assert.equal(parseRoute("#/wallet/1").name, "notFound");
  });
});

describe("formatRoute", () => {
  it("round-trips and leaves defaults out", () => {
    const hash = `#/token/${weth.toLowerCase()}:1?pair=${pair}:1&side=0&interval=1h&days=90`;
    assert.equal(formatRoute(parseRoute(hash)), hash);
    assert.equal(formatRoute(parseRoute(`#/token/${weth}:1`)), `#/token/${weth.toLowerCase()}:1`);
    assert.equal(tokenHref(weth, "1"), `#/token/${weth.toLowerCase()}:1`);
  });
  it("parses ids", () => {
    assert.equal(parseId(` ${weth}:137 `), `${weth.toLowerCase()}:137`);
    assert.equal(parseId(weth), undefined);
  });
  it("takes a pool id of 32 bytes (a Uniswap V4 pool) as a pair, never as a token", () => {
    const poolId = `0x${"Ab".repeat(32)}`;
    assert.equal(parsePairId(`${poolId}:1`), `${poolId.toLowerCase()}:1`);
    assert.equal(parsePairId(`${weth}:1`), `${weth.toLowerCase()}:1`);
    assert.equal(parsePairId(`0x${"ab".repeat(31)}:1`), undefined, "62 hex digits");
    assert.equal(parseId(`${poolId}:1`), undefined);
    const hash = `#/token/${weth.toLowerCase()}:1?pair=${poolId.toLowerCase()}:1`;
    assert.equal(formatRoute(parseRoute(hash)), hash);
  });
});
