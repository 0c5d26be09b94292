/**
 * Every candle volume and every trade amount the API answers is the correctly rounded double of
 * its exact value, computed here independently from the stored raw amounts with bigint rationals
 * (src/_test/exact.ts): a token volume is Σ |net raw amount| / 10^decimals, a USD volume the exact
 * sum of the trades' `volume_usd` doubles (docs/PRICING.md, *Exact sums*), each rounded once. On
 * the devnet demo's history and on the real recorded mainnet day, over HTTP, for every pool,
 * interval (rolled-up ones included), side and currency.
 */
import * as assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type Exact, exact, exactAdd, exactOfDouble, toDouble, unitsExact, unitsOf } from "../_test/exact.js";
import { createApiClient } from "../_test/http-client.js";
import { type Pipeline, startPipeline } from "../_test/pipeline.js";
import { createApiServer } from "../api/server.js";
import { parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { CANDLE_INTERVALS } from "../model/index.js";
import { replayFixture } from "../replay/replay.js";
import { createApiKey } from "../store/api-keys.js";
import type { Db } from "../store/db.js";
import { createPricing } from "./pricing.js";

type Client = Awaited<ReturnType<typeof createApiClient>>;
type ApiCandle = { time: number; volume: number };
type ApiTrade = {
  block_number: number;
  log_index: number;
  token0_amount: number | null;
  token1_amount: number | null;
  token0_reserves: number | null;
  token1_reserves: number | null;
  volume: number | null;
};

/** A stored swap with its pool's tokens and decimals, as raw integers. */
type RawSwap = {
  pool: string;
  token0: string;
  token1: string;
  d0: number | null;
  d1: number | null;
  block: number;
  logIndex: number;
  time: number;
  net0: bigint;
  net1: bigint;
  reserve0: bigint | null;
  reserve1: bigint | null;
  volumeUsd: number | null;
  usd0: boolean;
  usd1: boolean;
  /** The trade entered token0's (token1's) USD series. */
  series0: boolean;
  series1: boolean;
};

async function rawSwaps(db: Db, chainId: number): Promise<RawSwap[]> {
  const { rows } = await db.query<{
    pool: string;
    token0: string;
    token1: string;
    d0: number | null;
    d1: number | null;
    block: string;
    log_index: number;
    time: Date;
    a0in: string;
    a0out: string;
    a1in: string;
    a1out: string;
    r0: string | null;
    r1: string | null;
    volume_usd: number | null;
    usd0: boolean;
    usd1: boolean;
    series0: boolean;
    series1: boolean;
  }>(
    `SELECT s.pool, p.token0, p.token1, t0.decimals AS d0, t1.decimals AS d1, s.block_number::text AS block,
       s.log_index, s.block_time AS time, s.amount0_in::text AS a0in, s.amount0_out::text AS a0out,
       s.amount1_in::text AS a1in, s.amount1_out::text AS a1out, s.reserve0::text AS r0, s.reserve1::text AS r1,
       s.volume_usd, s.token0_usd IS NOT NULL AS usd0, s.token1_usd IS NOT NULL AS usd1,
       s.token0_series_usd IS NOT NULL AS series0, s.token1_series_usd IS NOT NULL AS series1
     FROM swaps s JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
     LEFT JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
     LEFT JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
     WHERE s.chain_id = $1 ORDER BY s.pool, s.block_number, s.log_index`,
    [chainId],
  );
  return rows.map((r) => ({
    pool: r.pool,
    token0: r.token0,
    token1: r.token1,
    d0: r.d0,
    d1: r.d1,
    block: Number(r.block),
    logIndex: r.log_index,
    time: r.time.getTime(),
    net0: BigInt(r.a0in) - BigInt(r.a0out),
    net1: BigInt(r.a1in) - BigInt(r.a1out),
    reserve0: r.r0 === null ? null : BigInt(r.r0),
    reserve1: r.r1 === null ? null : BigInt(r.r1),
    volumeUsd: r.volume_usd,
    usd0: r.usd0,
    usd1: r.usd1,
    series0: r.series0,
    series1: r.series1,
  }));
}

const abs = (v: bigint) => (v < 0n ? -v : v);

/** A swap is a trade (makes candles) when both net amounts are non-zero and opposite, decimals known. */
const isTrade = (s: RawSwap) =>
  s.d0 !== null && s.d1 !== null && s.net0 !== 0n && s.net1 !== 0n && s.net0 > 0n !== s.net1 > 0n;

/** Per interval start, the exact volume of one side of a pool's trades (token units or USD). */
function exactVolumes(
  swaps: readonly RawSwap[],
  seconds: number,
  side: 0 | 1,
  currency: "token" | "usd",
): Map<number, Exact> {
  const out = new Map<number, Exact>();
  for (const s of swaps) {
    if (!isTrade(s)) continue;
    if (currency === "usd" && !(side === 0 ? s.usd0 : s.usd1)) continue;
    const term =
      currency === "usd"
        ? exactOfDouble(s.volumeUsd ?? 0)
        : side === 0
          ? unitsExact(abs(s.net0), s.d0 as number)
          : unitsExact(abs(s.net1), s.d1 as number);
    const bucket = Math.floor(s.time / (seconds * 1000)) * seconds * 1000;
    out.set(bucket, exactAdd(out.get(bucket) ?? exact(0n), term));
  }
  return out;
}

/**
 * Checks every candle volume and trade of every traded pool over HTTP; returns how many volumes
 * and trades were compared.
 */
async function checkEveryVolume(
  api: Client,
  db: Db,
  chainId: number,
  now: number,
): Promise<{ candles: number; trades: number; pools: number }> {
  const all = await rawSwaps(db, chainId);
  const byPool = new Map<string, RawSwap[]>();
  for (const s of all) byPool.set(s.pool, [...(byPool.get(s.pool) ?? []), s]);
  let candles = 0;
  let trades = 0;
  const wrong: string[] = [];
  for (const [pool, swaps] of byPool) {
    const first = swaps[0] as RawSwap;
    const pair = `${pool}:${chainId}`;
    if (swaps.some(isTrade)) {
      const start = Math.min(...swaps.map((s) => s.time));
      for (const [interval, seconds] of Object.entries(CANDLE_INTERVALS)) {
        for (const side of [0, 1] as const) {
          for (const currency of ["token", "usd"] as const) {
            const expected = exactVolumes(swaps, seconds, side, currency);
            const asset = `${side === 0 ? first.token0 : first.token1}:${chainId}`;
            // Ranges of at most 4,000 intervals (an answer holds up to 5,000).
            const size = seconds * 1000;
            for (let from = Math.floor(start / size) * size; from < now; from += 4000 * size) {
              const to = Math.min(now, from + 4000 * size);
              const answer = await api.get("/api/v1/candles", {
                asset_id: asset,
                pair_id: pair,
                interval,
                currency,
                from: new Date(from).toISOString(),
                to: new Date(to).toISOString(),
              });
              if (answer.status === 404) continue;
              assert.equal(answer.status, 200, `${pair} ${interval} ${currency}: ${answer.text}`);
              for (const c of answer.body as ApiCandle[]) {
                const e = expected.get(c.time);
                const want = e === undefined ? 0 : toDouble(e);
                if (!Object.is(c.volume, want))
                  wrong.push(
                    `${pair} ${interval} side ${side} ${currency} ${c.time}: ${c.volume} vs ${want}`,
                  );
                if (e !== undefined) candles += 1;
              }
            }
          }
        }
      }
    }
    // Trades of the pool, every page.
    const stored = new Map(swaps.map((s) => [`${s.block}:${s.logIndex}`, s]));
    let cursor: string | undefined;
    let seen = 0;
    do {
      const answer = await api.get("/api/v1/trades", {
        asset_id: `${first.token0}:${chainId}`,
        pair_id: pair,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      assert.equal(answer.status, 200, answer.text);
      for (const t of answer.body as ApiTrade[]) {
        const s = stored.get(`${t.block_number}:${t.log_index}`);
        assert.ok(s, `trade ${t.block_number}:${t.log_index} is a stored swap`);
        const units = (raw: bigint | null, d: number | null) =>
          raw === null || d === null ? null : unitsOf(raw, d);
        const checks: [string, number | null, number | null][] = [
          ["token0_amount", t.token0_amount, units(abs(s.net0), s.d0)],
          ["token1_amount", t.token1_amount, units(abs(s.net1), s.d1)],
          ["token0_reserves", t.token0_reserves, units(s.reserve0, s.d0)],
          ["token1_reserves", t.token1_reserves, units(s.reserve1, s.d1)],
          ["volume", t.volume, s.volumeUsd],
        ];
        for (const [field, actual, want] of checks)
          if (!Object.is(actual, want))
            wrong.push(`${pair} trade ${t.block_number}:${t.log_index} ${field}: ${actual} vs ${want}`);
        seen += 1;
      }
      cursor = answer.headers.get("x-next-cursor") ?? undefined;
    } while (cursor);
    assert.equal(seen, swaps.length, `${pair}: every swap answered once`);
    trades += seen;
  }
  assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} numbers differ from their exact value`);
  return { candles, trades, pools: byPool.size };
}

/**
 * Checks the token volume `v` of every USD series candle of the deprecated chart (5, 15, 30 and
 * 60 minutes, the last 90 days) of every token: Σ |net raw amount| / 10^decimals of the trades
 * that entered the token's series, rounded once. Returns how many volumes were compared.
 */
async function checkSeriesVolumes(api: Client, db: Db, chainId: number): Promise<number> {
  const all = (await rawSwaps(db, chainId)).filter(isTrade);
  const points = new Map<string, { time: number; raw: bigint; decimals: number }[]>();
  for (const s of all) {
    for (const [token, entered, net, decimals] of [
      [s.token0, s.series0, s.net0, s.d0],
      [s.token1, s.series1, s.net1, s.d1],
    ] as const) {
      if (!entered) continue;
      points.set(token, [
        ...(points.get(token) ?? []),
        { time: s.time, raw: abs(net), decimals: decimals as number },
      ]);
    }
  }
  let compared = 0;
  const wrong: string[] = [];
  for (const [token, list] of points) {
    for (const minutes of [5, 15, 30, 60]) {
      const size = minutes * 60_000;
      const expected = new Map<number, Exact>();
      for (const p of list) {
        const bucket = Math.floor(p.time / size) * size;
        expected.set(bucket, exactAdd(expected.get(bucket) ?? exact(0n), unitsExact(p.raw, p.decimals)));
      }
      const answer = await api.get("/v1/tokens/candle-chart", {
        tokenId: `${token}:${chainId}`,
        days: 90,
        interval: minutes,
      });
      assert.equal(answer.status, 200, `${token} ${minutes} min: ${answer.text}`);
      const candles = answer.body as { _id: { date: string }; v: number }[];
      assert.equal(
        candles.length,
        expected.size,
        `${token} ${minutes} min: one candle per interval with trades`,
      );
      for (const c of candles) {
        const e = expected.get(Date.parse(c._id.date));
        const want = e === undefined ? undefined : toDouble(e);
        if (!Object.is(c.v, want)) wrong.push(`${token} ${minutes} min ${c._id.date}: ${c.v} vs ${want}`);
        compared += 1;
      }
    }
  }
  assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} series volumes differ from their exact value`);
  return compared;
}

async function serve(config: Config, db: Db, now: Date): Promise<{ app: FastifyInstance; api: Client }> {
  const { key } = await createApiKey(db, "exact-volumes");
  const app = createApiServer({ config, db, logger: createSilentLogger(), now: () => now });
  await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, api: await createApiClient(app, { key }) };
}

describe("exact volumes and amounts over HTTP", { timeout: 900_000 }, () => {
  describe("the real mainnet day (USDC/WETH 0.05 %, 2024-01-05)", () => {
    let t: TestDb;
    let app: FastifyInstance | undefined;
    const now = new Date("2024-01-06T00:00:00Z");
    const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
    const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
    const config = parseConfig({
      devnet: { enabled: false },
      pricing: { liquidityFloorUsd: 50_000, maxDeviation: 0.05 },
      chains: [
        {
          id: 1,
          name: "Ethereum",
          rpc: ["http://127.0.0.1:9"],
          dexes: [
            { name: "Uniswap V3", protocol: "v3", factory: "0x1f98431c8ad98523631ae4a59f267346ea31f984" },
          ],
          referenceTokens: { stablecoins: [USDC], wrappedNative: WETH, wrappedBtc: [] },
        },
      ],
    });
    before(async () => {
      t = await createTestDb();
      await replayFixture({
        db: t.db,
        dir: path.resolve(import.meta.dirname, "../../fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05"),
        derived: createPricing({ config, logger: createSilentLogger(), now: () => now }),
        logger: createSilentLogger(),
        blocksPerBatch: 500,
      });
    });
    after(async () => {
      await app?.close();
      await t?.drop();
    });

    it("every candle volume and trade amount is its exact value rounded once", async (c) => {
      const served = await serve(config, t.db, now);
      app = served.app;
      const checked = await checkEveryVolume(served.api, t.db, 1, now.getTime());
      const series = await checkSeriesVolumes(served.api, t.db, 1);
      c.diagnostic(
        `${checked.candles} candle volumes, ${checked.trades} trades, ${series} series volumes compared`,
      );
      assert.equal(checked.trades, 6046, "the manifest's 6,046 swaps");
      assert.ok(checked.candles > 5000, `${checked.candles} candle volumes compared`);
    });
  });

  describe("the devnet demo's history", () => {
    let t: TestDb;
    let pipeline: Pipeline | undefined;
    let app: FastifyInstance | undefined;
    before(async () => {
      t = await createTestDb({ max: 10 });
      pipeline = await startPipeline({ db: t.db });
    });
    after(async () => {
      await app?.close();
      await pipeline?.close();
      await t?.drop();
    });

    it("every candle volume and trade amount is its exact value rounded once", async (c) => {
      const p = pipeline as Pipeline;
      const served = await serve(p.config, t.db, p.until);
      app = served.app;
      const checked = await checkEveryVolume(
        served.api,
        t.db,
        p.config.chains[0]?.id as number,
        p.until.getTime(),
      );
      const series = await checkSeriesVolumes(served.api, t.db, p.config.chains[0]?.id as number);
      c.diagnostic(
        `${checked.pools} pools: ${checked.candles} candle volumes, ${checked.trades} trades, ${series} series volumes compared`,
      );
      assert.ok(series > 100, `${series} series volumes compared`);
      assert.ok(
        checked.pools >= 2 && checked.trades > 100,
        `${checked.pools} pools, ${checked.trades} trades`,
      );
      assert.ok(checked.candles > 1000, `${checked.candles} candle volumes compared`);
    });
  });
});
