import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  amountsForUsd,
  fullRangeTicks,
  MAX_TICK,
  MIN_TICK,
  priceFromSqrtPriceX96,
  rangeTicks,
  rawPriceFromUsd,
  sqrtPriceX96FromPrice,
  tickFromPrice,
  v2InputToReachPrice,
  v3InputToReachPrice,
} from "./pool-math.js";
import { applySwap } from "./pool-state.js";

const weth = { priceUsd: 3000, decimals: 18 };
const usdc = { priceUsd: 1, decimals: 6 };

describe("pool maths", () => {
  it("turns USD prices into raw pool prices and sqrtPriceX96 and back", () => {
    const raw = rawPriceFromUsd(weth, usdc);
    assert.ok(Math.abs(raw / 3e-9 - 1) < 1e-12, "1 wei of WETH is worth 3e-9 USDC units");
    const back = priceFromSqrtPriceX96(sqrtPriceX96FromPrice(raw));
    assert.ok(Math.abs(back / raw - 1) < 1e-12, "sqrtPriceX96 round trip");
    // Mainnet's USDC/WETH 0.05 % pool sits near tick 196,250 when ETH is at $3,000.
    const tick = tickFromPrice(rawPriceFromUsd(usdc, weth));
    assert.ok(Math.abs(tick - 196_250) < 50, `tick ${tick}`);
  });

  it("gives full-range ticks aligned to the spacing and within the bounds", () => {
    for (const spacing of [1, 10, 60, 200]) {
      const { tickLower, tickUpper } = fullRangeTicks(spacing);
      assert.equal(Math.abs(tickLower % spacing), 0);
      assert.equal(Math.abs(tickUpper % spacing), 0);
      assert.ok(tickLower >= MIN_TICK && tickUpper <= MAX_TICK);
      assert.ok(tickLower - spacing < MIN_TICK, "the lowest usable tick");
    }
  });

  it("widens a range outwards to the tick spacing", () => {
    const raw = rawPriceFromUsd(weth, usdc);
    const { tickLower, tickUpper } = rangeTicks(raw, 10, 60);
    assert.equal(Math.abs(tickLower % 60), 0);
    assert.equal(Math.abs(tickUpper % 60), 0);
    assert.ok(1.0001 ** tickLower <= raw * 0.9 && 1.0001 ** tickUpper >= raw * 1.1, "covers ±10 %");
  });

  it("splits a full-range deposit half and half, and a range above the price all in token0", () => {
    const raw = rawPriceFromUsd(weth, usdc);
    const full = amountsForUsd({
      usd: 1_000_000,
      rawPrice: raw,
      ...fullRangeTicks(10),
      token0: weth,
      token1: usdc,
    });
    const value0 = (Number(full.amount0) / 1e18) * 3000;
    const value1 = Number(full.amount1) / 1e6;
    assert.ok(
      Math.abs(value0 - 500_000) < 1000 && Math.abs(value1 - 500_000) < 1000,
      `${value0} / ${value1}`,
    );
    const above = tickFromPrice(raw) + 600;
    const high = amountsForUsd({
      usd: 10_000,
      rawPrice: raw,
      tickLower: above,
      tickUpper: above + 600,
      token0: weth,
      token1: usdc,
    });
    assert.equal(high.amount1, 0n, "a range above the price holds only token0");
    assert.ok(Math.abs((Number(high.amount0) / 1e18) * 3000 - 10_000) < 1);
  });

  it("sizes a V2 trade that moves the pair to a target price (the pair's own maths confirms)", () => {
    const state = { protocol: "v2" as const, reserve0: 1000n * 10n ** 18n, reserve1: 3_000_000n * 10n ** 6n };
    const price = Number(state.reserve1) / Number(state.reserve0);
    for (const target of [price * 1.02, price * 0.97]) {
      const move = v2InputToReachPrice(Number(state.reserve0), Number(state.reserve1), target);
      assert.equal(move.zeroForOne, target < price, "selling token0 lowers its price");
      const after = applySwap(state, 3000, move.zeroForOne, BigInt(Math.floor(move.amountIn)));
      assert.equal(after.state.protocol, "v2");
      if (after.state.protocol !== "v2") return;
      const reached = Number(after.state.reserve1) / Number(after.state.reserve0);
      // The fee stays in the pair, so the move falls short of the target by about the fee.
      assert.ok(Math.abs(reached / target - 1) < 0.004, `reached ${reached}, target ${target}`);
    }
  });

  it("sizes a V3 trade that moves the price with constant liquidity", () => {
    const sqrtPriceX96 = sqrtPriceX96FromPrice(3e-9);
    const state = { protocol: "v3" as const, sqrtPriceX96, liquidity: 10n ** 18n };
    for (const target of [3.09e-9, 2.91e-9]) {
      const move = v3InputToReachPrice(1e18, 3e-9, target);
      const after = applySwap(state, 0, move.zeroForOne, BigInt(Math.floor(move.amountIn)));
      assert.equal(after.state.protocol, "v3");
      if (after.state.protocol !== "v3") return;
      const reached = priceFromSqrtPriceX96(after.state.sqrtPriceX96);
      assert.ok(Math.abs(reached / target - 1) < 1e-6, `reached ${reached}, target ${target}`);
      assert.ok(after.amountOut > 0n);
    }
  });

  it("applies a V2 swap with the pair's integer formula", () => {
    const state = { protocol: "v2" as const, reserve0: 5_000n, reserve1: 10_000n };
    const { state: next, amountOut } = applySwap(state, 3000, true, 100n);
    // getAmountOut: 100·997·10000 / (5000·1000 + 100·997) = 195.5… → 195
    assert.equal(amountOut, 195n);
    assert.deepEqual(next, { protocol: "v2", reserve0: 5_100n, reserve1: 9_805n });
  });
});
