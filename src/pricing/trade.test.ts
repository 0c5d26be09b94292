import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceRatioToNumber } from "../_test/exact.js";
import { seededRandom } from "../_test/random.js";
import { toUnits } from "../exact/ratio.js";
import { balanceBeforeSwap, eventKey, lastKeyOfBlock, tradeOf } from "./trade.js";

describe("tradeOf", () => {
  it("prices token0 in token1 from the net amounts, decimal-adjusted", () => {
    // 1 WETH (18) in, 2,000 USDC (6) out: WETH is token0, price 2,000 USDC per WETH.
    const trade = tradeOf(
      { amount0In: 10n ** 18n, amount1In: 0n, amount0Out: 0n, amount1Out: 2_000_000_000n },
      18,
      6,
    );
    assert.ok(trade);
    assert.equal(trade.price, 2000, "|amount1| / |amount0| in units");
    assert.equal(trade.volume0, 1, "one WETH");
    assert.equal(trade.volume1, 2000, "2,000 USDC");
    assert.equal(trade.buy0, false, "token0 went into the pool: a sell of token0");
  });

  it("uses net amounts when a side is both paid in and out", () => {
    const trade = tradeOf({ amount0In: 5n, amount1In: 0n, amount0Out: 2n, amount1Out: 6n }, 0, 0);
    assert.equal(trade?.price, 2, "6 / (5 − 2)");
    assert.equal(trade?.volume0, 3, "net token0");
  });

  it("marks buys of token0", () => {
    const trade = tradeOf({ amount0In: 0n, amount1In: 100n, amount0Out: 50n, amount1Out: 0n }, 0, 0);
    assert.equal(trade?.buy0, true, "token0 left the pool");
    assert.equal(trade?.price, 2, "100 / 50");
  });

  it("has no price without two opposite flows", () => {
    assert.equal(
      tradeOf({ amount0In: 5n, amount1In: 0n, amount0Out: 0n, amount1Out: 0n }, 0, 0),
      null,
      "one side zero",
    );
    assert.equal(
      tradeOf({ amount0In: 5n, amount1In: 5n, amount0Out: 0n, amount1Out: 0n }, 0, 0),
      null,
      "a donation",
    );
  });

  it("keeps precision on large raw amounts", () => {
    // 123456789.123456789123456789 tokens of 18 decimals against 1 token of 0 decimals.
    const raw = 123456789123456789123456789n;
    const trade = tradeOf({ amount0In: 0n, amount1In: raw, amount0Out: 1n, amount1Out: 0n }, 0, 18);
    assert.equal(trade?.price, 123456789.12345679, "correctly rounded");
    assert.equal(toUnits(raw, 18), 123456789.12345679, "toUnits agrees");
  });

  it("rounds both sides' prices once from the raw amounts, never 1 / a rounded price", () => {
    const random = seededRandom(11);
    let reciprocalDiffers = 0;
    for (let i = 0; i < 3000; i++) {
      const a0 = BigInt(Math.floor(random() * 2 ** 52) + 1) * BigInt(Math.floor(random() * 2 ** 20) + 1);
      const a1 = BigInt(Math.floor(random() * 2 ** 52) + 1) * BigInt(Math.floor(random() * 2 ** 30) + 1);
      const trade = tradeOf({ amount0In: a0, amount1In: 0n, amount0Out: 0n, amount1Out: a1 }, 6, 18);
      assert.ok(trade);
      assert.equal(trade.price, referenceRatioToNumber(a1 * 10n ** 6n, a0 * 10n ** 18n));
      assert.equal(trade.price1, referenceRatioToNumber(a0 * 10n ** 18n, a1 * 10n ** 6n));
      if (trade.price1 !== 1 / trade.price) reciprocalDiffers += 1;
    }
    // The reciprocal of a rounded double is off in the last place for a good share of prices:
    // the reason side 1 is rounded from the exact ratio.
    assert.ok(reciprocalDiffers > 100, `1 / price differs on ${reciprocalDiffers} of 3000`);
  });
});

describe("keys and balances", () => {
  it("orders events by block then log index", () => {
    assert.equal(eventKey(18937382, 169), 1893738200169, "block × 100000 + log index");
    assert.ok(eventKey(10, 99_999) < eventKey(11, 0), "a block's last log is before the next block");
    assert.equal(lastKeyOfBlock(10), eventKey(10, 99_999), "the last key of a block");
  });

  it("reverses a swap to the balance before it", () => {
    assert.equal(balanceBeforeSwap(1_100n, 100n, 0n), 1_000n, "paid in: the pool held less before");
    assert.equal(balanceBeforeSwap(900n, 0n, 100n), 1_000n, "paid out: the pool held more before");
    assert.equal(balanceBeforeSwap(null, 1n, 0n), null, "unknown stays unknown");
  });
});
