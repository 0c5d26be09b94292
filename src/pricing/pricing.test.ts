import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { pairWindowOf } from "../_test/aggregates.js";
import { exactly, v2Out } from "../_test/bit-exact.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import {
  exact,
  exactMul,
  integerSqrt,
  reservesPrice,
  roundedSum,
  sqrtPriceOf,
  toDouble,
  tradePrice,
  unitsOf,
} from "../_test/exact.js";
import {
  createSyntheticChain,
  ingestSyntheticChain,
  prepareSyntheticChain,
  type SyntheticChain,
} from "../_test/synthetic-chain.js";
import { getPairCandles, getTokenLineChart, getTokenUsdCandles } from "../api/charts.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import type { CandleSeconds } from "../model/index.js";
import { createPricing, type Pricing } from "./pricing.js";

const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

const T0 = Date.parse("2024-03-01T00:00:00Z") / 1000;

describe("pricing over a scripted market", () => {
  let t: TestDb;
  let chain: SyntheticChain;
  let pricing: Pricing;
  let now: Date;
  const tok: Record<string, Hex> = {};
  const pool: Record<string, Hex> = {};
  /** The UW pool's candles on `side` (0: USDC's, in WETH), as of `at`. */
  const uwCandles = (side: 0 | 1, intervalSeconds: CandleSeconds, from: string, to: string, at = now) =>
    getPairCandles(t.db, {
      chainId: 901,
      pool: pool.UW as string,
      side,
      intervalSeconds,
      from: new Date(from),
      to: new Date(to),
      now: at,
    });

  before(async () => {
    t = await createTestDb();
    chain = createSyntheticChain({ chainId: 901, startBlock: 1, startTime: T0 });
    for (const [symbol, decimals] of [
      ["USDC", 6],
      ["WETH", 18],
      ["WBTC", 8],
      ["KIBL", 9],
      ["TKN", 18],
      ["DUST", 12],
    ] as const) {
      tok[symbol] = chain.token(symbol, decimals);
    }
    const { USDC, WETH, WBTC, KIBL, TKN, DUST } = tok as Record<string, Hex>;
    pool.UW = chain.pool(USDC as Hex, WETH as Hex);
    pool.BU = chain.pool(WBTC as Hex, USDC as Hex);
    pool.KW = chain.pool(KIBL as Hex, WETH as Hex);
    pool.TU = chain.pool(TKN as Hex, USDC as Hex, { protocol: "v3" });
    pool.DW = chain.pool(DUST as Hex, WETH as Hex);
    chain.mint(pool.UW, { [USDC as Hex]: 3_000_000n * E6, [WETH as Hex]: 1000n * E18 });
    chain.mint(pool.BU, { [WBTC as Hex]: 20n * 10n ** 8n, [USDC as Hex]: 1_200_000n * E6 });
    chain.mint(pool.KW, { [KIBL as Hex]: 50_000_000n * 10n ** 9n, [WETH as Hex]: 50n * E18 });
    chain.mint(pool.TU, { [TKN as Hex]: 100_000n * E18, [USDC as Hex]: 200_000n * E6 });
    chain.mint(pool.DW, { [DUST as Hex]: 1_000_000n * 10n ** 12n, [WETH as Hex]: E18 });
    chain.mine(12); // block 1
    chain.swap(pool.UW, USDC as Hex, 30_000n * E6);
    chain.mine(90_000); // block 2, 25 hours before block 3
    chain.swap(pool.UW, WETH as Hex, 2n * E18);
    chain.swap(pool.KW, WETH as Hex, E18);
    chain.mine(12); // block 3
    now = new Date((T0 + 12 + 90_000 + 30) * 1000);
    pricing = createPricing({
      config: {
        pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 },
        chains: [
          {
            id: 901,
            referenceTokens: {
              stablecoins: [USDC as Hex],
              wrappedNative: WETH as Hex,
              wrappedBtc: [WBTC as Hex],
              others: [],
            },
          },
        ],
      },
      logger: createSilentLogger(),
      now: () => now,
    });
    await prepareSyntheticChain(t.db, 901, 1);
    await ingestSyntheticChain(t.db, pricing, chain, { batchSize: () => 1 });
  });
  after(() => t.drop());

  // The pools' raw reserves after each block, by hand.
  const usdcAfter2 = 3_030_000n * E6;
  const wethOut2 = v2Out(30_000n * E6, 3_000_000n * E6, 1000n * E18);
  const wethAfter2 = 1000n * E18 - wethOut2;
  const usdcOut3 = v2Out(2n * E18, wethAfter2, usdcAfter2);
  const usdcAfter3 = usdcAfter2 - usdcOut3;
  const wethAfter3 = wethAfter2 + 2n * E18;
  // Exact references: spot prices from the raw reserves, one pool each (so the liquidity-weighted
  // mean is that pool's price), times the quote's exact USD price; rounded once where compared.
  const wethUsd2 = reservesPrice({ reserve: wethAfter2, decimals: 18 }, { reserve: usdcAfter2, decimals: 6 });
  const wethUsd3 = reservesPrice({ reserve: wethAfter3, decimals: 18 }, { reserve: usdcAfter3, decimals: 6 });
  const kiblOut3 = v2Out(E18, 50n * E18, 50_000_000n * 10n ** 9n);
  const kiblUsd3 = exactMul(
    reservesPrice(
      { reserve: 50_000_000n * 10n ** 9n - kiblOut3, decimals: 9 },
      { reserve: 51n * E18, decimals: 18 },
    ),
    wethUsd3,
  );
  /** The trades' own prices, from the raw amounts that moved. */
  const usdcInWeth2 = tradePrice({ amount: 30_000n * E6, decimals: 6 }, { amount: wethOut2, decimals: 18 });
  const wethInUsdc3 = tradePrice({ amount: 2n * E18, decimals: 18 }, { amount: usdcOut3, decimals: 6 });
  const kiblInWeth3 = tradePrice({ amount: kiblOut3, decimals: 9 }, { amount: E18, decimals: 18 });

  const priceOf = async (token: string) =>
    (
      await t.db.query<{
        usd_price: number | null;
        provenance: { method: string; route: string[]; pools: { pool: string }[] };
      }>("SELECT usd_price, provenance FROM token_prices WHERE chain_id = 901 AND token = $1", [token])
    ).rows[0];

  it("prices a stablecoin pair, WETH, a WETH-only token two hops away and WBTC", async () => {
    assert.equal((await priceOf(tok.USDC as string))?.usd_price, 1, "USDC is an anchor");
    exactly(
      (await priceOf(tok.WETH as string))?.usd_price,
      wethUsd3,
      "WETH from the USDC pool's reserves after block 3",
    );
    exactly((await priceOf(tok.WBTC as string))?.usd_price, 60_000, "WBTC = 1.2M USDC / 20 WBTC");
    // The V3 pool's sqrtPriceX96 as the synthetic chain sets it (⌊√(reserve1·2^192 / reserve0)⌋),
    // read back as its spot price of TKN (about 2 USDC, not exactly: the root is floored).
    const tu = chain.reserves(pool.TU as Hex);
    const tuSqrt = integerSqrt((tu.reserve1 * 2n ** 192n) / tu.reserve0);
    const tknIs0 = tu.token0 === tok.TKN;
    exactly(
      (await priceOf(tok.TKN as string))?.usd_price,
      sqrtPriceOf(tuSqrt, tknIs0 ? 18 : 6, tknIs0 ? 6 : 18, tknIs0 ? 0 : 1),
      "TKN = 200k USDC / 100k TKN (V3 sqrtPrice)",
    );
    const kibl = await priceOf(tok.KIBL as string);
    exactly(kibl?.usd_price, kiblUsd3, "KIBL = WETH per KIBL × WETH in USD");
    assert.deepEqual(kibl?.provenance.route, [tok.KIBL, tok.WETH, tok.USDC], "KIBL → WETH → USDC");
    assert.deepEqual(
      kibl?.provenance.pools.map((p) => p.pool),
      [pool.KW],
      "one pool",
    );
    const dust = await priceOf(tok.DUST as string);
    assert.equal(dust?.usd_price, null, "DUST's pool holds $6,000 of WETH: below the floor");
    assert.equal(dust?.provenance.method, "none", "no method");
  });

  it("values each trade with the prices of its block", async () => {
    const { rows } = await t.db.query<{
      block_number: number;
      pool: string;
      token0_usd: number;
      token1_usd: number;
      volume_usd: number;
      token0_series_usd: number | null;
      token1_series_usd: number | null;
    }>(
      `SELECT block_number, pool, token0_usd, token1_usd, volume_usd, token0_series_usd, token1_series_usd
       FROM swaps WHERE chain_id = 901 ORDER BY block_number, log_index`,
    );
    const [a, b, c] = rows;
    assert.equal(a?.token0_usd, 1, "USDC at 1");
    exactly(a?.token1_usd, wethUsd2, "WETH at the end of block 2");
    assert.equal(a?.volume_usd, 30_000, "30,000 USDC paid in: valued on the anchor side");
    assert.equal(a?.token0_series_usd, 1, "USDC's series records its trades at 1 USD");
    exactly(a?.token1_series_usd, wethUsd2, "WETH's series: its USD price at the trade, not the trade's own");
    exactly(b?.volume_usd, unitsOf(usdcOut3, 6), "2 WETH sold for USDC: the USDC received");
    exactly(
      c?.volume_usd,
      exactMul(exact(1n), wethUsd3),
      "1 WETH for KIBL: valued on the WETH side (reference before other)",
    );
    exactly(c?.token1_usd, kiblUsd3, "KIBL at the end of block 3");
  });

  it("keeps candles at 1 minute, 1 hour and 1 day", async () => {
    const { rows } = await t.db.query<{
      resolution: number;
      bucket: Date;
      open: number;
      volume0: number;
      volume1: number;
      trades: number;
      buys0: number;
    }>(
      "SELECT resolution, bucket, open, volume0, volume1, trades, buys0 FROM candles WHERE chain_id = 901 AND pool = $1 ORDER BY resolution, bucket",
      [pool.UW],
    );
    assert.deepEqual(
      rows.map((r) => [r.resolution, r.bucket.toISOString(), r.trades, r.buys0]),
      [
        [60, "2024-03-01T00:00:00.000Z", 1, 0],
        [60, "2024-03-02T01:00:00.000Z", 1, 1],
        [3600, "2024-03-01T00:00:00.000Z", 1, 0],
        [3600, "2024-03-02T01:00:00.000Z", 1, 1],
        [86400, "2024-03-01T00:00:00.000Z", 1, 0],
        [86400, "2024-03-02T00:00:00.000Z", 1, 1],
      ],
      "one trade in each bucket; the second buys token0 (USDC)",
    );
    assert.equal(chain.reserves(pool.UW as Hex).token0, tok.USDC, "USDC is the pool's token0");
    exactly(rows[0]?.open, usdcInWeth2, "USDC in WETH: WETH out / USDC in");
    assert.equal(rows[0]?.volume0, 30_000, "USDC traded");
    exactly(rows[0]?.volume1, unitsOf(wethOut2, 18), "WETH traded");
    const side1 = await uwCandles(1, 14_400, "2024-03-02T00:00:00Z", "2024-03-02T04:00:00Z");
    assert.equal(side1.length, 1, "one 4-hour candle from 00:00");
    exactly(side1[0]?.open, wethInUsdc3, "WETH in USDC: the exact reciprocal, rounded once");
    assert.equal(side1[0]?.volume, 2, "WETH volume on WETH's side");
  });

  it("computes 24-hour pair and token statistics", async () => {
    const pair = await pairWindowOf(t.db, 901, pool.UW as string);
    exactly(pair?.volume_usd_24h, unitsOf(usdcOut3, 6), "only block 3's trade is in the last 24 hours");
    assert.equal(pair?.buys_24h, 1, "one buy of token0");
    assert.equal(pair?.sells_24h, 0, "no sell");
    // Exactly: USDC + WETH × (USDC / WETH) = 2 × USDC, rounded once.
    exactly(
      pair?.liquidity_usd,
      exactMul(exact(2n), exact(usdcAfter3, E6)),
      "USDC + WETH at its price: twice the USDC",
    );
    // The change is the pool's price after the trades (swaps.price), which the synthetic chain's
    // swaps do not carry (the indexer's decoding sets it): none here. Measured exactly on decoded
    // trades in devnet-scenario.test.ts.
    assert.equal(pair?.price_change_24h, null, "no pool price after the trades");
    const weth = (
      await t.db.query<{ volume_usd_24h: number; price_change_24h: number; liquidity_usd: number }>(
        "SELECT * FROM token_windows WHERE chain_id = 901 AND token = $1",
        [tok.WETH],
      )
    ).rows[0];
    exactly(
      weth?.volume_usd_24h,
      roundedSum([unitsOf(usdcOut3, 6), toDouble(wethUsd3)]),
      "WETH's pools: the USDC pool and the KIBL pool, summed exactly and rounded once",
    );
    exactly(
      weth?.price_change_24h,
      (toDouble(wethUsd3) / toDouble(wethUsd2) - 1) * 100,
      "price now against its series 25 hours ago (its USD price at that trade)",
    );
    assert.ok((weth?.liquidity_usd ?? 0) > 6_000_000, "USDC pool + KIBL pool, not the thin DUST pool");
  });

  it("serves the hourly line chart and the USD candles", async () => {
    const chart = await getTokenLineChart(t.db, { chainId: 901, token: tok.KIBL as string, days: 2, now });
    assert.deepEqual(chart.labels, ["2024-03-02T01:00:00.000Z"], "hours before the first price are left out");
    // The hour's point is its volume-weighted mean Σ p·v / Σ v, exactly (docs/PRICING.md): for one
    // trade p itself, p KIBL's USD price at the trade (the end of block 3), not the trade's own
    // price in WETH × WETH's USD price.
    exactly(chart.data[0], kiblUsd3, "KIBL's USD price at its one trade");
    assert.notEqual(
      chart.data[0],
      toDouble(exactMul(kiblInWeth3, wethUsd3)),
      "not the trade's own USD price",
    );
    const weth = await getTokenLineChart(t.db, { chainId: 901, token: tok.WETH as string, days: 2, now });
    assert.equal(weth.labels.length, 26, "from the first trade (00:00 the day before) to the current hour");
    assert.equal(weth.data[1], weth.data[0], "an hour without trades carries the previous point");
    const empty = await getTokenLineChart(t.db, {
      chainId: 901,
      token: tok.KIBL as string,
      days: 1,
      now: new Date("2024-03-10T00:00:00Z"),
    });
    assert.deepEqual(empty, { labels: [], data: [] }, "no trade in range");
    const usd = await getTokenUsdCandles(t.db, {
      chainId: 901,
      token: tok.WETH as string,
      days: 2,
      intervalMinutes: 15,
      now,
    });
    assert.deepEqual(
      usd.map((c) => c.date),
      ["2024-03-01T00:00:00.000Z", "2024-03-02T01:00:00.000Z"],
      "one 15-minute candle per trade",
    );
    assert.equal(usd[1]?.v, 2, "token units, qualifying pools only: the KIBL pool does not price WETH");
  });

  it("fills empty intervals up to now with the previous close", async () => {
    const candles = await uwCandles(0, 60, "2024-03-02T00:58:00Z", "2024-03-02T02:00:00Z");
    assert.deepEqual(
      candles.map((c) => new Date(c.time).toISOString()),
      ["2024-03-02T01:00:00.000Z"],
      "from the first trade in range to now (01:00:42): the current minute only",
    );
    const later = await uwCandles(
      0,
      300,
      "2024-03-02T01:00:00Z",
      "2024-03-02T01:20:00Z",
      new Date("2024-03-03T00:00:00Z"),
    );
    assert.deepEqual(
      later.map((c) => [c.volume > 0, c.close === later[0]?.close]),
      [
        [true, true],
        [false, true],
        [false, true],
        [false, true],
      ],
      "four 5-minute intervals up to `to`, the empty ones at the previous close",
    );
    const none = await uwCandles(0, 86_400, "2024-03-05T00:00:00Z", "2024-03-06T00:00:00Z");
    assert.deepEqual(none, [], "no trade in range");
  });
});
