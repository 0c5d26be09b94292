import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { toDouble, tradePrice, unitsOf } from "../_test/exact.js";
import { getAssetPairCandles, getPairCandles } from "../api/charts.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import { parseCsv } from "../replay/fixture.js";
import { replayFixture } from "../replay/replay.js";
import { PACKED_PIECE_CANDLES } from "../store/candles.js";
import { createPricing } from "./pricing.js";

const fixtureDir = path.resolve(
  import.meta.dirname,
  "../../fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05",
);
const POOL = "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640";
const USDC: Hex = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const WETH: Hex = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";

/**
 * Candles of WETH in USDC (one-minute ones by default, else of `bucketMs`), computed here from
 * decoded.csv's signed amounts alone: each trade's exact price |USDC|·10^18 / (|WETH|·10^6)
 * rounded once (rounding is monotonic, so the highest and lowest rounded prices are the rounded
 * extremes), and the bucket's WETH volume as its exact sum of raw amounts / 10^18, rounded once.
 */
function expectedCandles(bucketMs = 60_000) {
  const [header, ...rows] = parseCsv(readFileSync(path.join(fixtureDir, "decoded.csv"), "utf8"));
  const col = (name: string) => (header as string[]).indexOf(name);
  const [type, time, a0, a1] = [col("tx_type"), col("block_timestamp"), col("amount0"), col("amount1")];
  const minutes = new Map<number, { prices: number[]; rawVolume: bigint }>();
  for (const row of rows) {
    if (row[type] !== "SWAP") continue;
    const usdc = BigInt(row[a0] as string);
    const weth = BigInt(row[a1] as string);
    const absWeth = weth < 0n ? -weth : weth;
    // A swap whose two flows are not opposite and non-zero is no trade and makes no candle.
    if (usdc === 0n || weth === 0n || usdc > 0n === weth > 0n) continue;
    // Execution price = USDC amount / WETH amount, decimal-adjusted (6 and 18).
    const price = toDouble(tradePrice({ amount: weth, decimals: 18 }, { amount: usdc, decimals: 6 }));
    const minute =
      Math.floor(Date.parse(`${(row[time] as string).replace(" ", "T")}Z`) / bucketMs) * bucketMs;
    const m = minutes.get(minute) ?? { prices: [], rawVolume: 0n };
    m.prices.push(price);
    m.rawVolume += absWeth;
    minutes.set(minute, m);
  }
  return new Map(
    [...minutes].map(([minute, m]) => [minute, { prices: m.prices, volume: unitsOf(m.rawVolume, 18) }]),
  );
}

/** Bit for bit (0 and −0 told apart). */
function exactly(actual: number | undefined, expected: number | undefined, why: string) {
  assert.ok(expected !== undefined && Object.is(actual, expected), `${why}: ${actual} vs ${expected}`);
}

describe("candles of a real mainnet day (USDC/WETH 0.05 %, 2024-01-05)", () => {
  let t: TestDb;
  before(async () => {
    t = await createTestDb();
    const pricing = createPricing({
      config: {
        pricing: { liquidityFloorUsd: 50_000, maxDeviation: 0.05 },
        chains: [
          {
            id: 1,
            referenceTokens: { stablecoins: [USDC], wrappedNative: WETH, wrappedBtc: [], others: [] },
          },
        ],
      },
      logger: createSilentLogger(),
      now: () => new Date("2024-01-06T00:00:00Z"),
    });
    await replayFixture({
      db: t.db,
      dir: fixtureDir,
      derived: pricing,
      logger: createSilentLogger(),
      blocksPerBatch: 500,
    });
  });
  after(() => t.drop());

  /** The pool's 1-minute candles of the fixture's day, priced on the token1 side. */
  const dayMinuteCandles = () =>
    getPairCandles(t.db, {
      chainId: 1,
      pool: POOL,
      side: 1,
      intervalSeconds: 60,
      from: new Date("2024-01-05T00:00:00Z"),
      to: new Date("2024-01-06T00:00:00Z"),
      now: new Date("2024-01-06T00:00:00Z"),
    });

  it("equal 1-minute candles computed from decoded.csv", async () => {
    const expected = expectedCandles();
    const candles = await dayMinuteCandles();
    const traded = candles.filter((c) => c.volume > 0);
    assert.equal(traded.length, expected.size, "one candle per minute with swaps");
    for (const c of traded) {
      const e = expected.get(c.time);
      const at = new Date(c.time).toISOString();
      assert.ok(e, `a minute with trades: ${at}`);
      exactly(c.open, e.prices[0], `${at} open`);
      exactly(c.close, e.prices[e.prices.length - 1], `${at} close`);
      exactly(c.high, Math.max(...e.prices), `${at} high`);
      exactly(c.low, Math.min(...e.prices), `${at} low`);
    }
    assert.equal(candles.length, 1440, "every minute of the day: the quiet ones at the previous close");
    const trades = await t.db.query<{ n: number }>(
      "SELECT sum(trades)::int AS n FROM candles WHERE chain_id = 1 AND pool = $1 AND resolution = 86400",
      [POOL],
    );
    assert.equal(trades.rows[0]?.n, 6046, "the manifest's 6,046 swaps in the day's candle");
  });

  it("roll up to 15 minutes (from the 1-minute candles) and 4 hours (from the hourly ones) bit for bit", async () => {
    let compared = 0;
    for (const intervalSeconds of [900, 14_400] as const) {
      const expected = expectedCandles(intervalSeconds * 1000);
      const candles = await getPairCandles(t.db, {
        chainId: 1,
        pool: POOL,
        side: 1,
        intervalSeconds,
        from: new Date("2024-01-05T00:00:00Z"),
        to: new Date("2024-01-06T00:00:00Z"),
        now: new Date("2024-01-06T00:00:00Z"),
      });
      const traded = candles.filter((c) => c.volume > 0);
      assert.equal(traded.length, expected.size, `${intervalSeconds} s: one candle per interval with swaps`);
      for (const c of traded) {
        const e = expected.get(c.time);
        const at = `${intervalSeconds} s ${new Date(c.time).toISOString()}`;
        assert.ok(e, `an interval with trades: ${at}`);
        exactly(c.open, e.prices[0], `${at} open`);
        exactly(c.close, e.prices[e.prices.length - 1], `${at} close`);
        exactly(c.high, Math.max(...e.prices), `${at} high`);
        exactly(c.low, Math.min(...e.prices), `${at} low`);
        exactly(c.volume, e.volume, `${at} volume`);
        compared += 1;
      }
    }
    assert.ok(compared >= 96 + 6, `${compared} intervals compared`);
  });

  it("carry each minute's WETH volume as the exact sum of its trades' raw amounts, rounded once", async () => {
    const expected = expectedCandles();
    const candles = await dayMinuteCandles();
    const wrong = candles
      .filter((c) => c.volume > 0)
      .filter((c) => !Object.is(c.volume, expected.get(c.time)?.volume))
      .map((c) => `${new Date(c.time).toISOString()}: ${c.volume} vs ${expected.get(c.time)?.volume}`);
    assert.deepEqual(wrong, [], "every minute's volume bit for bit");
  });

  it("reads the same candles with the pool looked up in the statement (getAssetPairCandles)", async () => {
    const range = {
      chainId: 1,
      pool: POOL,
      from: new Date("2024-01-05T00:00:00Z"),
      to: new Date("2024-01-06T00:00:00Z"),
      now: new Date("2024-01-06T00:00:00Z"),
    };
    let compared = 0;
    for (const currency of ["token", "usd"] as const) {
      for (const intervalSeconds of [60, 900, 3600, 14_400, 86_400] as const) {
        for (const [asset, side] of [
          [USDC, 0],
          [WETH, 1],
        ] as const) {
          const read = { ...range, currency, intervalSeconds };
          const expected = await getPairCandles(t.db, { ...read, side });
          const found = await getAssetPairCandles(t.db, { ...read, asset });
          assert.equal(found?.side, side, `${asset} is side ${side}`);
          assert.ok(found && found.side !== null);
          // The same candles in the same order (the rows may carry the side as well).
          const plain = found.candles.map(({ time, open, high, low, close, volume }) => ({
            time,
            open,
            high,
            low,
            close,
            volume,
          }));
          assert.deepEqual(plain, expected, `${currency} ${intervalSeconds} s, side ${side}`);
          if (expected.length > 0) compared += 1;
        }
      }
    }
    assert.ok(compared >= 10, `${compared} non-empty reads compared`);
    // The minute read comes in several pieces of packed candles (rows of the statement).
    const { rows: minutes } = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM candles WHERE chain_id = 1 AND pool = $1 AND resolution = 60",
      [POOL],
    );
    assert.ok(
      (minutes[0]?.n ?? 0) > PACKED_PIECE_CANDLES,
      `${minutes[0]?.n} stored minutes: more than one piece of ${PACKED_PIECE_CANDLES}`,
    );
    const quiet = await getAssetPairCandles(t.db, {
      ...range,
      asset: WETH,
      intervalSeconds: 3600,
      from: new Date("2023-01-05T00:00:00Z"),
      to: new Date("2023-01-06T00:00:00Z"),
    });
    assert.deepEqual(quiet, { side: 1, candles: [] }, "a range without trades: the side, no candle");
    const upsideDown = await getAssetPairCandles(t.db, {
      ...range,
      asset: WETH,
      intervalSeconds: 3600,
      from: new Date("2024-01-06T00:00:00Z"),
      to: new Date("2024-01-05T00:00:00Z"),
    });
    assert.deepEqual(upsideDown, { side: 1, candles: [] }, "an empty range still looks the pool up");
    assert.deepEqual(
      await getAssetPairCandles(t.db, { ...range, asset: `0x${"12".repeat(20)}`, intervalSeconds: 60 }),
      { side: null },
      "a token not of the pair",
    );
    assert.equal(
      await getAssetPairCandles(t.db, {
        ...range,
        pool: `0x${"34".repeat(20)}`,
        asset: WETH,
        intervalSeconds: 60,
      }),
      undefined,
      "an unknown pool",
    );
    // A stored NULL (the USD columns may hold one) reads as null, as the rows read it: the packed
    // read's marker for it is not a double of the candle.
    const hour = { ...range, currency: "usd" as const, intervalSeconds: 3600 as const };
    const [bucket] = (await getPairCandles(t.db, { ...hour, side: 0 })).map((c) => c.time);
    const at = [POOL, new Date(bucket as number).toISOString()];
    const where = "chain_id = 1 AND pool = $1 AND resolution = 3600 AND bucket = $2";
    const { rows: kept } = await t.db.query<{ volume_usd0: number }>(
      `SELECT volume_usd0 FROM candles WHERE ${where}`,
      at,
    );
    await t.db.query(`UPDATE candles SET volume_usd0 = NULL WHERE ${where}`, at);
    try {
      const expected = await getPairCandles(t.db, { ...hour, side: 0 });
      assert.equal(expected[0]?.volume, null, "the rows read the NULL");
      const found = await getAssetPairCandles(t.db, { ...hour, asset: USDC });
      assert.ok(found && found.side === 0);
      assert.deepEqual(found.candles, expected, "the packed read gives the same candles, the NULL as null");
    } finally {
      await t.db.query(`UPDATE candles SET volume_usd0 = $3 WHERE ${where}`, [...at, kept[0]?.volume_usd0]);
    }
  });

  it("values every trade on its USDC side", async () => {
    const { rows } = await t.db.query<{ n: number; priced: number }>(
      "SELECT count(*)::int AS n, count(volume_usd)::int AS priced FROM swaps WHERE chain_id = 1 AND pool = $1",
      [POOL],
    );
    assert.equal(rows[0]?.priced, rows[0]?.n, "USDC is an anchor: every swap has a USD value");
  });
});
