import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { referenceRatioToNumber } from "../_test/exact.js";
import { seededRandom } from "../_test/random.js";
import {
  createSyntheticChain,
  ingestSyntheticChain,
  prepareSyntheticChain,
} from "../_test/synthetic-chain.js";
import { getPairCandles } from "../api/charts.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import { CANDLE_INTERVALS } from "../model/index.js";
import { createPricing } from "./pricing.js";

const CHAIN = 904;

type RawSwap = {
  pool: string;
  block_number: number;
  log_index: number;
  block_time: Date;
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
};

/** Price of token0 in token1 from raw amounts, computed apart from the code under test. */
/** A side's execution price, the correctly rounded double of the exact ratio (independent reference). */
function rawPrice(s: RawSwap, decimals0: number, decimals1: number, side: 0 | 1): number {
  const net0 = BigInt(s.amount0_in) - BigInt(s.amount0_out);
  const net1 = BigInt(s.amount1_in) - BigInt(s.amount1_out);
  const a0 = net0 < 0n ? -net0 : net0;
  const a1 = net1 < 0n ? -net1 : net1;
  const [num, den] = [a1 * 10n ** BigInt(decimals0), a0 * 10n ** BigInt(decimals1)];
  return side === 0 ? referenceRatioToNumber(num, den) : referenceRatioToNumber(den, num);
}

function exact(actual: number | undefined, expected: number | undefined, why: string) {
  assert.ok(Object.is(actual, expected), `${why}: ${actual} vs exactly ${expected}`);
}

describe("candles in the database: property", () => {
  let t: TestDb;
  const pools: { address: Hex; decimals0: number; decimals1: number }[] = [];
  let end: Date;

  before(async () => {
    t = await createTestDb();
    const random = seededRandom(11);
    const chain = createSyntheticChain({
      chainId: CHAIN,
      startTime: Date.parse("2024-07-01T21:17:00Z") / 1000,
    });
    const usdc = chain.token("USDC", 6);
    const weth = chain.token("WETH", 18);
    const tkn = chain.token("TKN", 9);
    const v2 = chain.pool(usdc, weth);
    chain.mint(v2, { [usdc]: 3_000_000n * 10n ** 6n, [weth]: 1000n * 10n ** 18n });
    const v3 = chain.pool(weth, tkn, { protocol: "v3" });
    chain.mint(v3, { [weth]: 500n * 10n ** 18n, [tkn]: 10_000_000n * 10n ** 9n });
    pools.push({ address: v2, decimals0: 6, decimals1: 18 }, { address: v3, decimals0: 18, decimals1: 9 });
    chain.mine();
    for (let b = 0; b < 400; b++) {
      const n = random() < 0.3 ? 0 : 1 + Math.floor(random() * 3);
      for (let i = 0; i < n; i++) {
        const p = pools[Math.floor(random() * pools.length)]?.address as Hex;
        const r = chain.reserves(p);
        const zeroIn = random() < 0.5;
        const amount =
          ((zeroIn ? r.reserve0 : r.reserve1) * BigInt(1 + Math.floor(random() * 20_000))) / 1_000_000n;
        chain.swap(p, zeroIn ? r.token0 : r.token1, amount);
      }
      chain.mine(random() < 0.05 ? 3 * 3600 + Math.floor(random() * 7200) : 12 + Math.floor(random() * 300));
    }
    end = new Date(((chain.blocks[chain.blocks.length - 1]?.timestamp ?? 0) + 3600) * 1000);
    const pricing = createPricing({
      config: {
        pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 },
        chains: [
          {
            id: CHAIN,
            referenceTokens: { stablecoins: [usdc], wrappedNative: weth, wrappedBtc: [], others: [] },
          },
        ],
      },
      logger: createSilentLogger(),
      now: () => end,
    });
    await prepareSyntheticChain(t.db, CHAIN, 1);
    const batches = seededRandom(5);
    await ingestSyntheticChain(t.db, pricing, chain, { batchSize: () => 1 + Math.floor(batches() * 25) });
  });
  after(() => t.drop());

  it("every interval, both sides, equals a direct aggregation of the stored swaps", async () => {
    for (const pool of pools) {
      const { rows } = await t.db.query<RawSwap>(
        `SELECT pool, block_number, log_index, block_time, amount0_in, amount1_in, amount0_out, amount1_out
         FROM swaps WHERE chain_id = $1 AND pool = $2 ORDER BY block_number, log_index`,
        [CHAIN, pool.address],
      );
      assert.ok(rows.length > 150, `${rows.length} trades`);
      const first = (rows[0] as RawSwap).block_time;
      for (const interval of Object.values(CANDLE_INTERVALS)) {
        for (const side of [0, 1] as const) {
          const candles = await getPairCandles(t.db, {
            chainId: CHAIN,
            pool: pool.address,
            side,
            intervalSeconds: interval,
            from: first,
            to: end,
            now: end,
          });
          const groups = new Map<number, RawSwap[]>();
          for (const s of rows) {
            const bucket = Math.floor(s.block_time.getTime() / (interval * 1000)) * interval * 1000;
            groups.set(bucket, [...(groups.get(bucket) ?? []), s]);
          }
          const what = `pool ${pools.indexOf(pool)}, ${interval}s, side ${side}`;
          let previousClose: number | undefined;
          for (const c of candles) {
            const group = groups.get(c.time);
            if (!group) {
              assert.equal(c.volume, 0, `${what}: an empty interval has no volume`);
              assert.equal(c.open, previousClose, `${what}: and the previous close`);
              assert.equal(c.close, previousClose, `${what}: close too`);
              continue;
            }
            const prices = group.map((s) => rawPrice(s, pool.decimals0, pool.decimals1, side));
            // The exact sum of the side's raw amounts, rounded once.
            const rawVolume = group.reduce((sum, s) => {
              const net =
                side === 0
                  ? BigInt(s.amount0_in) - BigInt(s.amount0_out)
                  : BigInt(s.amount1_in) - BigInt(s.amount1_out);
              return sum + (net < 0n ? -net : net);
            }, 0n);
            const volume = referenceRatioToNumber(
              rawVolume,
              10n ** BigInt(side === 0 ? pool.decimals0 : pool.decimals1),
            );
            exact(c.open, prices[0], `${what}: open is the first trade`);
            exact(c.close, prices[prices.length - 1], `${what}: close is the last trade`);
            exact(c.high, Math.max(...prices), `${what}: high`);
            exact(c.low, Math.min(...prices), `${what}: low`);
            exact(c.volume, volume, `${what}: volume of the side's token`);
            previousClose = c.close;
          }
          assert.equal(
            candles.filter((c) => c.volume > 0).length,
            groups.size,
            `${what}: one candle per interval with trades`,
          );
          const trades = await t.db.query<{ n: number }>(
            "SELECT COALESCE(sum(trades), 0)::int AS n FROM candles WHERE chain_id = $1 AND pool = $2 AND resolution = $3",
            [CHAIN, pool.address, interval >= 86_400 ? 86_400 : interval >= 3600 ? 3600 : 60],
          );
          assert.equal(trades.rows[0]?.n, rows.length, `${what}: every trade counted once`);
        }
      }
    }
  });
});
