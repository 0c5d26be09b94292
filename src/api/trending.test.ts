import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rankTrending, trendingLiquidityUsd, trendingScore } from "./trending.js";

describe("trending", () => {
  const state = {
    reserve0: 10n ** 18n,
    reserve1: 3000n * 10n ** 6n,
    sqrtPriceX96: null,
    swapBlock: 5,
    preSwapReserve0: 10n ** 17n,
    preSwapReserve1: 300n * 10n ** 6n,
    stateBlock: 5,
    stateLogIndex: 0,
    stateTime: 0,
  };
  const pool = {
    protocol: "v2" as const,
    decimals0: 18,
    decimals1: 6,
    state,
    usd0: 3000,
    usd1: 1,
  };

  it("scores the last hour against the day's average hour", () => {
    assert.equal(trendingScore(100, 2400), 1);
    assert.equal(trendingScore(2400, 2400), 24);
    assert.equal(trendingScore(0, 0), null);
  });

  it("measures liquidity at the pool's depth: one block of trades cannot lift it", () => {
    // Now 3,000 + 3,000 USD; before the latest block's first swap 300 + 300.
    assert.equal(trendingLiquidityUsd(pool), 600);
  });

  it("never values a side at the pool's own (pushable) price", () => {
    // Token0 unpriced: only token1's side counts, twice; neither priced: no liquidity.
    assert.equal(trendingLiquidityUsd({ ...pool, usd0: null }), 600);
    assert.equal(trendingLiquidityUsd({ ...pool, usd0: null, usd1: 1000 }), 600_000);
    assert.equal(trendingLiquidityUsd({ ...pool, usd0: null, usd1: null }), null);
    // The smaller side decides.
    assert.equal(trendingLiquidityUsd({ ...pool, usd0: 30 }), 6);
  });

  it("ranks only pools at or above the floor and the minimum volume, ties by address", () => {
    const candidates = [
      { ...pool, pool: "0xb", volumeUsd1h: 2000, volumeUsd24h: 4000 },
      { ...pool, pool: "0xa", volumeUsd1h: 2000, volumeUsd24h: 4000 },
      { ...pool, pool: "0xc", volumeUsd1h: 500, volumeUsd24h: 500 },
      { ...pool, pool: "0xd", volumeUsd1h: 2000, volumeUsd24h: 2000, state: { ...state, swapBlock: null } },
    ];
    assert.deepEqual(rankTrending(candidates, { liquidityFloorUsd: 500, minVolumeUsd1h: 1000 }), [
      { pool: "0xd", score: 24 },
      { pool: "0xa", score: 12 },
      { pool: "0xb", score: 12 },
    ]);
    assert.deepEqual(
      rankTrending(candidates, { liquidityFloorUsd: 1000, minVolumeUsd1h: 1000 }).map((r) => r.pool),
      ["0xd"],
      "the pools measured at 600 USD of depth are below a 1,000 USD floor",
    );
  });
});
