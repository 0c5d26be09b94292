import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { logAt } from "../../_test/encode-log.js";
import { publishedTopic, user } from "../../_test/family-logs.js";
import type { Hex, RawLog } from "../../decode/types.js";
import { familyOf } from "../index.js";
import { algebraTopics } from "./abi.js";
import { decodeAlgebraCreation } from "./index.js";

const factory = "0x411b0facc3489691f28ad58c47006af5e3ab3a28" as Hex;
const pool = "0xa374094527e1673a86de625aa59517c5de346d32" as Hex;
const wmatic = "0x0d500b1d8e8ef31e21c99d1db9a6444d3adf1270" as Hex;
const usdc = "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359" as Hex;
const router = "0xf5b509bb0909a69b1c207e495f687a596c168e12" as Hex;

/** Algebra's events as its contracts publish them (IAlgebraFactory, IAlgebraPoolEvents), names included. */
const published = {
  Pool: "event Pool(address indexed token0, address indexed token1, address pool)",
  SwapV1:
    "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick)",
  SwapIntegral:
    "event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)",
  BurnIntegral:
    "event Burn(address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1, uint24 pluginFee)",
  BurnV1:
    "event Burn(address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1)",
} as const;

function encode(signature: string, args: Record<string, unknown>, address: Hex): RawLog {
  const transactionHash = `0x${"01".repeat(32)}` as Hex;
  return logAt(signature, args, { address, blockNumber: 32_610_700, logIndex: 4, transactionHash });
}

const swapArgs = {
  sender: router,
  recipient: user,
  amount0: 5n * 10n ** 18n,
  amount1: -2_750_000n,
  price: 58_000_000_000_000_000_000_000n,
  liquidity: 123_456_789_000n,
  tick: -276_000,
};

describe("Algebra", () => {
  const family = familyOf("algebra");

  it("has the topics of the published signature texts; V1's Swap is Uniswap V3's topic", () => {
    assert.equal(family.creationTopic, publishedTopic(published.Pool));
    assert.equal(algebraTopics.integralSwap, publishedTopic(published.SwapIntegral));
    assert.equal(
      publishedTopic(published.SwapIntegral),
      "0x121cb44ee54098b1a04743c487e7460d8dd429b27f88b1f4d4767396e1a59f79",
      "Integral 1.2's Swap topic0 as its pools log it",
    );
    assert.equal(publishedTopic(published.SwapV1), familyOf("v3").swapTopics[0]);
    assert.ok(family.poolTopics("uniswap").includes(publishedTopic(published.SwapV1)));
    assert.ok(family.poolTopics("integral").includes(publishedTopic(published.SwapIntegral)));
    assert.deepEqual(family.swapTopics, [
      publishedTopic(published.SwapV1),
      publishedTopic(published.SwapIntegral),
    ]);
  });

  it("decodes the factory's Pool event as a new pool", () => {
    const log = encode(published.Pool, { token0: wmatic, token1: usdc, pool }, factory);
    assert.deepEqual(decodeAlgebraCreation(log), {
      factory,
      pool,
      token0: wmatic,
      token1: usdc,
      fee: null,
      tickSpacing: null,
      blockNumber: 32_610_700,
      logIndex: 4,
    });
    assert.equal(family.decodeCreation({ ...log, data: `${log.data}00` as Hex }), null, "malformed data");
    assert.equal(familyOf("v3").decodeCreation(log), null, "not a Uniswap V3 PoolCreated");
  });

  it("decodes a V1 Swap and an Integral 1.2 Swap (with its fees) into the same trade", () => {
    const expected = {
      type: "v3-swap",
      sender: router,
      recipient: user,
      amount0: swapArgs.amount0,
      amount1: swapArgs.amount1,
      sqrtPriceX96: swapArgs.price,
      liquidity: swapArgs.liquidity,
      tick: swapArgs.tick,
      protocolFeesToken0: null,
      protocolFeesToken1: null,
    };
    const v1 = encode(published.SwapV1, swapArgs, pool);
    assert.deepEqual(family.decodeLog(v1, "uniswap"), expected);
    const integral = encode(
      published.SwapIntegral,
      { ...swapArgs, overrideFee: 2_500, pluginFee: 100 },
      pool,
    );
    assert.deepEqual(family.decodeLog(integral, "integral"), expected);
    assert.equal(family.decodeLog(integral, "uniswap"), null, "an Integral 1.2 Swap on a V1-layout DEX");
    const record = family.record(family.decodeLog(integral, "integral"), family.createdState(1));
    assert.deepEqual(record.role === "swap" ? record.trade : null, {
      sender: router,
      recipient: user,
      amount0In: swapArgs.amount0,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 2_750_000n,
      sqrtPriceX96: swapArgs.price,
      liquidity: swapArgs.liquidity,
      tick: swapArgs.tick,
    });
  });

  it("decodes an Integral 1.2 Burn (with the plugin's fee) as V1's Burn; a V1-layout DEX skips it", () => {
    assert.equal(algebraTopics.integralBurn, publishedTopic(published.BurnIntegral));
    assert.ok(family.poolTopics("integral").includes(publishedTopic(published.BurnIntegral)));
    assert.ok(!family.poolTopics("uniswap").includes(publishedTopic(published.BurnIntegral)));
    const args = {
      owner: user,
      bottomTick: -887_220,
      topTick: 887_220,
      liquidityAmount: 7_000_000_000n,
      amount0: 31n * 10n ** 17n,
      amount1: 1_700_000n,
    };
    const expected = {
      type: "v3-burn",
      owner: user,
      tickLower: -887_220,
      tickUpper: 887_220,
      amount: 7_000_000_000n,
      amount0: args.amount0,
      amount1: args.amount1,
    };
    const integral = encode(published.BurnIntegral, { ...args, pluginFee: 0 }, pool);
    assert.deepEqual(family.decodeLog(integral, "integral"), expected);
    assert.equal(family.decodeLog(integral, "uniswap"), null);
    assert.equal(family.decodeLog({ ...integral, data: `${integral.data}00` as Hex }, "integral"), null);
    assert.deepEqual(family.decodeLog(encode(published.BurnV1, args, pool), "integral"), expected);
  });
});
