/**
 * The native coin and the wrapped native token on the demo, over real HTTP: the same USD price in
 * every answer that carries one (assets, token market records, line chart, USD candles, the trades
 * of a native-coin pool beside WETH's at the same block). The demo holds native ETH in the V4 pools
 * ETH/USDC and FROG/ETH. On the same demo, every token's USD series (the line chart's hours, the USD
 * candles) against the trades it is made of.
 */
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import {
  type Exact,
  exactDiv,
  exactMul,
  exactOfDouble,
  exactSum,
  toDouble,
  unitsExact,
} from "../_test/exact.js";
import { createApiClient } from "../_test/http-client.js";
import { type Pipeline, startPipeline } from "../_test/pipeline.js";
import { createApiServer } from "../api/server.js";
import { createSilentLogger } from "../internal/logger.js";
import { NATIVE_COIN } from "../model/index.js";
import { createApiKey } from "../store/api-keys.js";

type Row = Record<string, unknown>;

describe("the native coin answers the wrapped native token's USD price on the demo", () => {
  let testDb: TestDb;
  let pipeline: Pipeline;
  let app: FastifyInstance;
  let api: Awaited<ReturnType<typeof createApiClient>>;
  const chain = 31337;
  const id = (address: string) => `${address.toLowerCase()}:${chain}`;
  let weth: string;

  before(async () => {
    testDb = await createTestDb({ max: 10 });
    pipeline = await startPipeline({ db: testDb.db, historyDays: 1 });
    await pipeline.waitIndexed();
    const { key } = await createApiKey(testDb.db, "native");
    app = createApiServer({ config: pipeline.config, db: testDb.db, logger: createSilentLogger() });
    await app.listen({ host: "127.0.0.1", port: 0 });
    api = await createApiClient(app, { key });
    weth = pipeline.deployment.tokens.WETH.address.toLowerCase();
  });
  after(async () => {
    await app?.close();
    await pipeline?.close();
    await testDb?.drop();
  });

  const both = async (path: string, query: (token: string) => Record<string, string | number>) => {
    const [eth, wrapped] = await Promise.all([api.get(path, query(NATIVE_COIN)), api.get(path, query(weth))]);
    assert.equal(eth.status, 200, `${path} ETH: ${JSON.stringify(eth.body)}`);
    assert.equal(wrapped.status, 200, `${path} WETH: ${JSON.stringify(wrapped.body)}`);
    return [eth.body, wrapped.body] as const;
  };

  it("assets, token market records and token records: the same USD price", async () => {
    const [eth, wrapped] = (await both("/api/v1/assets", (t) => ({ asset_ids: id(t) }))) as [Row[], Row[]];
    assert.ok(typeof wrapped[0]?.usd_price === "number" && wrapped[0].usd_price > 0);
    assert.ok(
      Object.is(eth[0]?.usd_price, wrapped[0]?.usd_price),
      `${eth[0]?.usd_price} ${wrapped[0]?.usd_price}`,
    );
    const [ethMarket, wethMarket] = (await both("/v1/tokens/market", (t) => ({ tokenId: id(t) }))) as [
      Row[],
      Row[],
    ];
    assert.ok(Object.is(ethMarket[0]?.usd_price, wethMarket[0]?.usd_price));
    // Their market windows' price changes too (each window's volumes and counts are its own trades').
    type Windows = Record<string, { price_change: number | null }>;
    const ethWindows = ethMarket[0]?.windows as Windows;
    const wethWindows = wethMarket[0]?.windows as Windows;
    assert.equal(typeof wethWindows["24h"]?.price_change, "number", JSON.stringify(wethWindows));
    for (const name of ["5m", "1h", "6h", "24h"]) {
      assert.ok(
        Object.is(ethWindows[name]?.price_change, wethWindows[name]?.price_change),
        `${name}: ETH ${ethWindows[name]?.price_change}, WETH ${wethWindows[name]?.price_change}`,
      );
    }
    // Token records (metadata, assets): the USD price and its 24-hour change (the native coin's
    // measured against the wrapped token's series, as its price is the wrapped token's).
    const [ethRecord, wethRecord] = (await both("/v1/tokens/metadata", (t) => ({ tokenId: id(t) }))) as [
      Row,
      Row,
    ];
    assert.ok(
      Object.is(ethRecord.usd_price, wethRecord.usd_price),
      `${ethRecord.usd_price} ${wethRecord.usd_price}`,
    );
    assert.equal(typeof wethRecord.price_change, "number", JSON.stringify(wethRecord));
    assert.ok(
      Object.is(ethRecord.price_change, wethRecord.price_change),
      `metadata price_change: ETH ${ethRecord.price_change}, WETH ${wethRecord.price_change}`,
    );
    assert.ok(
      Object.is(eth[0]?.price_change, wrapped[0]?.price_change),
      `assets price_change: ETH ${eth[0]?.price_change}, WETH ${wrapped[0]?.price_change}`,
    );
  });

  it("line chart and USD candles: the same points", async () => {
    const [eth, wrapped] = (await both("/v1/tokens/line-chart", (t) => ({ tokenId: id(t), days: 2 }))) as [
      { data: number[] },
      { data: number[] },
    ];
    assert.ok(wrapped.data.length > 0);
    assert.deepEqual(eth, wrapped);
    const [ethCandles, wethCandles] = (await both("/v1/tokens/candle-chart", (t) => ({
      tokenId: id(t),
      days: 2,
      interval: 60,
    }))) as [Row[], Row[]];
    assert.ok(wethCandles.length > 0);
    // The same candles, each under its own id.
    const untagged = (candles: Row[]) =>
      candles.map(({ _id, ...rest }) => ({ date: (_id as Row).date, ...rest }));
    assert.deepEqual(untagged(ethCandles), untagged(wethCandles));
  });

  it("trades of a native-coin pool carry WETH's USD price of their block", async () => {
    const trades = async (key: string, asset: string) => {
      const pool = pipeline.deployment.pools.find((p) => p.key === key);
      assert.ok(pool, key);
      const answer = await api.get("/api/v1/trades", {
        pair_id: id(pool.address),
        asset_id: id(asset),
        limit: 1000,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      // The USD price of `asset` at each trade's block.
      return (answer.body as Row[]).map((t) => ({
        block: Number(t.block_number),
        usd: t.token0_address === asset.toLowerCase() ? t.token0_price : t.token1_price,
      }));
    };
    const wethAt = new Map<number, unknown>();
    for (const key of ["v3:WETH/USDC:500", "v3:WETH/USDC:3000", "v2:WETH/USDC"]) {
      for (const t of await trades(key, weth)) wethAt.set(t.block, t.usd);
    }
    let compared = 0;
    let native = 0;
    for (const key of ["v4:ETH/USDC:3000", "v4:FROG/ETH:10000"]) {
      for (const t of await trades(key, NATIVE_COIN)) {
        native += 1;
        assert.ok(typeof t.usd === "number" && t.usd > 0, `block ${t.block}: ETH priced`);
        if (!wethAt.has(t.block)) continue;
        compared += 1;
        assert.ok(
          Object.is(t.usd, wethAt.get(t.block)),
          `block ${t.block}: ETH ${t.usd}, WETH ${wethAt.get(t.block)}`,
        );
      }
    }
    assert.ok(
      native > 0 && compared > 0,
      `${native} native trades, ${compared} in a block with a WETH trade`,
    );
  });

  it("every USD series bucket lies within its trades' USD prices; its average is Σ p·v / Σ v exactly", async () => {
    // Each side of each priced swap: the token's USD price at the trade (token*_usd), the series
    // price when the trade entered the token's series, and the exact amount.
    const { rows } = await testDb.db.query<{
      token: string;
      hour: Date;
      minute5: Date;
      usd: number;
      series: number | null;
      raw: string;
      decimals: number;
    }>(
      `SELECT p.token0 AS token, s.token0_usd AS usd, s.token0_series_usd AS series,
         abs(s.amount0_in - s.amount0_out)::text AS raw, t.decimals,
         date_bin('1 hour', s.block_time, 'epoch') AS hour, date_bin('5 minutes', s.block_time, 'epoch') AS minute5,
         s.block_number, s.log_index
       FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
       JOIN tokens t ON t.chain_id = p.chain_id AND t.address = p.token0
       WHERE s.chain_id = $1 AND s.token0_usd IS NOT NULL
       UNION ALL
       SELECT p.token1, s.token1_usd, s.token1_series_usd, abs(s.amount1_in - s.amount1_out)::text, t.decimals,
         date_bin('1 hour', s.block_time, 'epoch'), date_bin('5 minutes', s.block_time, 'epoch'),
         s.block_number, s.log_index
       FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
       JOIN tokens t ON t.chain_id = p.chain_id AND t.address = p.token1
       WHERE s.chain_id = $1 AND s.token1_usd IS NOT NULL
       ORDER BY block_number, log_index`,
      [chain],
    );
    type Bucket = { lo: number; hi: number; pv: Exact[]; v: Exact[] };
    const buckets = new Map<string, Bucket>();
    for (const r of rows) {
      for (const [resolution, start] of [
        [3600, r.hour],
        [300, r.minute5],
      ] as const) {
        const key = `${r.token}|${resolution}|${start.getTime()}`;
        const b = buckets.get(key) ?? { lo: r.usd, hi: r.usd, pv: [], v: [] };
        b.lo = Math.min(b.lo, r.usd);
        b.hi = Math.max(b.hi, r.usd);
        if (r.series !== null) {
          const p = exactOfDouble(r.series);
          const v = exactMul(unitsExact(BigInt(r.raw), r.decimals), p);
          b.pv.push(exactMul(p, v));
          b.v.push(v);
        }
        buckets.set(key, b);
      }
    }
    const series = await testDb.db.query<{
      token: string;
      resolution: number;
      bucket: Date;
      open: number;
      high: number;
      low: number;
      close: number;
    }>(
      `SELECT token, resolution, bucket, open, high, low, close
       FROM token_usd_candles WHERE chain_id = $1 AND sum_v_exact > 0`,
      [chain],
    );
    assert.ok(series.rows.length > 100, `${series.rows.length} series buckets`);
    const outside: string[] = [];
    let averages = 0;
    for (const c of series.rows) {
      const b = buckets.get(`${c.token}|${c.resolution}|${c.bucket.getTime()}`);
      assert.ok(
        b && b.v.length > 0,
        `${c.token} ${c.resolution} ${c.bucket.toISOString()}: a bucket of priced trades`,
      );
      for (const price of [c.open, c.high, c.low, c.close]) {
        if (price < b.lo || price > b.hi)
          outside.push(`${c.token} ${c.bucket.toISOString()}: ${price} ∉ [${b.lo}, ${b.hi}]`);
      }
      if (c.resolution !== 3600) continue;
      // The line chart's point of this hour, over HTTP: Σ p·v / Σ v of the exact sums, rounded once.
      const mean = toDouble(exactDiv(exactSum(b.pv), exactSum(b.v)));
      if (mean < b.lo || mean > b.hi)
        outside.push(`${c.token} ${c.bucket.toISOString()}: mean ${mean} ∉ [${b.lo}, ${b.hi}]`);
      averages += 1;
    }
    assert.deepEqual(outside, [], `${outside.length} of ${series.rows.length} buckets`);
    assert.ok(averages > 50, `${averages} hourly averages`);
    // The line chart over HTTP: each hour with a bucket is its exact mean, bit for bit.
    let compared = 0;
    for (const token of new Set(series.rows.map((c) => c.token))) {
      const answer = await api.get("/v1/tokens/line-chart", { tokenId: id(token), days: 2 });
      if (answer.status === 404) continue;
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const line = answer.body as { labels: string[]; data: number[] };
      line.labels.forEach((label, i) => {
        const b = buckets.get(`${token}|3600|${Date.parse(label)}`);
        if (!b || b.v.length === 0) return; // an hour without a series point carries the one before
        const mean = toDouble(exactDiv(exactSum(b.pv), exactSum(b.v)));
        assert.ok(Object.is(line.data[i], mean), `${token} ${label}: ${line.data[i]}, Σ p·v / Σ v = ${mean}`);
        compared += 1;
      });
    }
    assert.ok(compared >= averages, `${compared} line chart points compared, ${averages} hourly buckets`);
  });

  it("USD liquidity: each pair's Σ balance × USD price and each token's Σ over its pools, exactly, rounded once", async () => {
    // Each pool's balances (raw) and both tokens' stored USD prices, as the API answers them.
    const { rows } = await testDb.db.query<{
      pool: string;
      token0: string;
      token1: string;
      reserve0: string;
      reserve1: string;
      decimals0: number;
      decimals1: number;
      usd0: number;
      usd1: number;
    }>(
      `SELECT p.address AS pool, p.token0, p.token1, s.reserve0::text, s.reserve1::text,
         t0.decimals AS decimals0, t1.decimals AS decimals1, tp0.usd_price AS usd0, tp1.usd_price AS usd1
       FROM pools p JOIN pool_price_state s ON s.chain_id = p.chain_id AND s.pool = p.address
       JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
       JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
       JOIN token_prices tp0 ON tp0.chain_id = p.chain_id AND tp0.token = p.token0
       JOIN token_prices tp1 ON tp1.chain_id = p.chain_id AND tp1.token = p.token1
       WHERE p.chain_id = $1 AND s.reserve0 IS NOT NULL AND s.reserve1 IS NOT NULL
         AND tp0.usd_price IS NOT NULL AND tp1.usd_price IS NOT NULL`,
      [chain],
    );
    const expected = new Map<string, number>();
    for (const r of rows) {
      const value = exactSum([
        exactMul(unitsExact(BigInt(r.reserve0), r.decimals0), exactOfDouble(r.usd0)),
        exactMul(unitsExact(BigInt(r.reserve1), r.decimals1), exactOfDouble(r.usd1)),
      ]);
      expected.set(r.pool, toDouble(value));
    }
    const answer = await api.get("/api/v1/pairs", { asset_id: id(weth), limit: 100 });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const pairs = answer.body as { pair_address: string; liquidity_value: number | null }[];
    let compared = 0;
    for (const pair of pairs) {
      const want = expected.get(pair.pair_address.toLowerCase());
      if (want === undefined) continue;
      assert.ok(
        Object.is(pair.liquidity_value, want),
        `${pair.pair_address}: ${pair.liquidity_value} vs ${want}`,
      );
      compared += 1;
    }
    assert.ok(compared >= 5, `${compared} of WETH's ${pairs.length} pairs compared`);
    // WETH's liquidity: the exact sum of its pools' at or above the floor with both tokens priced.
    const floor = pipeline.config.pricing.liquidityFloorUsd;
    const pools = rows.filter(
      (r) => (r.token0 === weth || r.token1 === weth) && (expected.get(r.pool) ?? 0) >= floor,
    );
    const total = toDouble(exactSum(pools.map((r) => exactOfDouble(expected.get(r.pool) as number))));
    const market = await api.get("/v1/tokens/market", { tokenId: id(weth) });
    assert.equal(market.status, 200, JSON.stringify(market.body));
    const record = (market.body as { liquidity_usd: number | null }[])[0];
    assert.ok(
      Object.is(record?.liquidity_usd, total),
      `WETH: ${record?.liquidity_usd} vs ${total} over ${pools.length} pools`,
    );
  });
});
