import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { type ApiClient, listenApi } from "../_test/api-server.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import {
  type Exact,
  exactDiv,
  exactMul,
  exactOfDouble,
  exactSum,
  referenceRatioToNumber,
  toDouble,
  unitsExact,
} from "../_test/exact.js";
import { parseConfig } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { parseCsv, readFixture } from "../replay/fixture.js";
import { replayFixture } from "../replay/replay.js";
import { createApiKey } from "../store/api-keys.js";

/**
 * Acceptance of exact prices on a real mainnet day (USDC/WETH 0.05 %, 2024-01-05, 6,046 swaps):
 * replayed through the indexer's replay source and the pricing, served over real HTTP, every
 * price the API gives for either token of the pair must be the correctly rounded double of its
 * exact rational, computed here from decoded.csv's raw integers with an independent long
 * division (src/_test/exact.ts): compared bit for bit, zero mismatches.
 *
 * The manifest is given plausible starting balances (60 M USDC, 25,000 WETH: the pool held about
 * that), so the V3 pool's depth is known, it qualifies, and WETH gets USD prices from it. Every
 * USD figure the API defines as one exact rational is then checked too (see docs/PRICING.md,
 * "Exact prices", and the comments at each check):
 * - WETH's USD price at a trade and its current price: the spot price of WETH in USDC at the end
 *   of the block (the only qualifying pool, so the liquidity-weighted mean is that pool's price)
 *   times USDC's exact 1: 2^192·10^18 / (sqrtPriceX96²·10^6), from decoded.csv's sqrtPriceX96;
 * - USDC's: the anchor, exactly 1;
 * - a trade's `volume`: valued on the anchor's side (anchor > reference token) at exactly 1, so
 *   the USD value is the USDC amount, |amount0| / 10^6 rounded once (USD values are not exact in
 *   general: amount × price in doubles; with a price of exactly 1 the product adds no rounding);
 * - the USD candle chart's open/high/low/close: each one trade's series price, the token's USD
 *   price at the end of the trade's block (USDC: 1), for trades whose exact price of the token in
 *   USDC × 1 lies within maxDeviation of that price.
 * - every candle volume in token units: the exact sum of the interval's raw amounts, rounded once;
 * - WETH's line chart: each hour's volume-weighted mean Σ p·v / Σ v as documented, exactly (v the
 *   exact amount × p) and rounded once, from the reference series prices and raw amounts.
 */

const fixtureDir = path.resolve(
  import.meta.dirname,
  "../../fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05",
);
const CHAIN = 1;
const POOL = "0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640";
const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const DAY_START = Date.parse("2024-01-05T00:00:00Z");
const DAY_END = Date.parse("2024-01-06T00:00:00Z");
const id = (address: string) => `${address}:${CHAIN}`;
/** Starting balances given to the replay (raw): 60 M USDC and 25,000 WETH. */
const BALANCES = { reserve0: 60_000_000n * 10n ** 6n, reserve1: 25_000n * 10n ** 18n };
const PRICING = { liquidityFloorUsd: 50_000, maxDeviation: 0.05 };

/**
 * WETH's exact USD price at a pool state: the spot price of WETH in USDC, the reciprocal of
 * token0's sqrtPriceX96²·10^6 / (2^192·10^18), times USDC's exact 1; rounded once.
 */
const wethUsdOf = (sqrtPriceX96: bigint) =>
  referenceRatioToNumber(2n ** 192n * 10n ** 18n, sqrtPriceX96 * sqrtPriceX96 * 10n ** 6n);

/** One swap of decoded.csv with its reference prices of each side (null: not a trade). */
type ExpectedTrade = {
  block: number;
  logIndex: number;
  time: number;
  prices: [number | null, number | null];
  /** USDC amount |amount0| / 10^6, rounded once: the trade's USD value (USDC at exactly 1). */
  usdcAmount: number;
  /** |amount| of each token, raw. */
  rawUsdc: bigint;
  rawWeth: bigint;
  /** WETH's USD price at the end of the trade's block (set by `expectedTrades`). */
  wethUsd: number;
  /** The pool's sqrtPriceX96 after this swap. */
  sqrtPriceX96: bigint;
};

/**
 * The swaps of decoded.csv (signed raw amounts from the pool's view, decoded by an independent
 * tool). A trade has two opposite non-zero flows; its price of USDC (side 0) is
 * |WETH|·10^6 / (|USDC|·10^18), of WETH (side 1) the exact reciprocal, each rounded once.
 */
function expectedTrades(): ExpectedTrade[] {
  const [header, ...rows] = parseCsv(readFileSync(path.join(fixtureDir, "decoded.csv"), "utf8"));
  const col = (name: string) => {
    const i = (header as string[]).indexOf(name);
    assert.ok(i >= 0, `decoded.csv has ${name}`);
    return i;
  };
  const c = {
    type: col("tx_type"),
    block: col("block_number"),
    logIndex: col("pool_log_index"),
    time: col("block_timestamp"),
    a0: col("amount0"),
    a1: col("amount1"),
    sqrt: col("sqrtPriceX96"),
  };
  const out: ExpectedTrade[] = [];
  for (const row of rows) {
    if (row[c.type] !== "SWAP") continue;
    const usdc = BigInt(row[c.a0] as string);
    const weth = BigInt(row[c.a1] as string);
    const isTrade = usdc !== 0n && weth !== 0n && usdc > 0n !== weth > 0n;
    const absUsdc = usdc < 0n ? -usdc : usdc;
    const absWeth = weth < 0n ? -weth : weth;
    const num = absWeth * 10n ** 6n;
    const den = absUsdc * 10n ** 18n;
    out.push({
      block: Number(row[c.block]),
      logIndex: Number(row[c.logIndex]),
      time: Date.parse(`${(row[c.time] as string).replace(" ", "T")}Z`),
      prices: isTrade ? [referenceRatioToNumber(num, den), referenceRatioToNumber(den, num)] : [null, null],
      usdcAmount: referenceRatioToNumber(absUsdc, 10n ** 6n),
      rawUsdc: absUsdc,
      rawWeth: absWeth,
      wethUsd: Number.NaN,
      sqrtPriceX96: BigInt(row[c.sqrt] as string),
    });
  }
  out.sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
  // Prices are those of the end of the block: the state after the block's last swap (mints,
  // burns and collects do not move sqrtPriceX96).
  const endOfBlock = new Map<number, bigint>();
  for (const e of out) endOfBlock.set(e.block, e.sqrtPriceX96);
  for (const e of out) e.wethUsd = wethUsdOf(endOfBlock.get(e.block) as bigint);
  return out;
}

/**
 * The USD candles of one token (the deprecated candle chart) from the reference: each trade's
 * series price is WETH's USD price at the end of its block (WETH), or 1 (USDC, the anchor, in a
 * pool whose USDC side is above the floor: always here); a WETH trade whose exact price in USDC ×
 * USDC's 1 lies further than maxDeviation from that price is an outlier and left out.
 */
function expectedUsdCandles(trades: readonly ExpectedTrade[], token: "USDC" | "WETH", seconds: number) {
  const points: { time: number; price: number }[] = [];
  for (const t of trades) {
    const tradePrice = t.prices[1];
    if (tradePrice === null) continue;
    if (token === "WETH" && Math.abs(tradePrice / t.wethUsd - 1) > PRICING.maxDeviation) continue;
    points.push({ time: t.time, price: token === "WETH" ? t.wethUsd : 1 });
  }
  return ohlcBuckets(points, seconds);
}

type Ohlc = { open: number; high: number; low: number; close: number };

/** Candles of one side from the reference prices: rounding is monotonic, so max/min commute with it. */
function expectedCandles(trades: readonly ExpectedTrade[], side: 0 | 1, seconds: number) {
  const points: { time: number; price: number }[] = [];
  for (const t of trades) {
    const price = t.prices[side];
    if (price !== null) points.push({ time: t.time, price });
  }
  return ohlcBuckets(points, seconds);
}

/** Open, high, low and close of prices in trade order, by bucket of `seconds` from the epoch. */
function ohlcBuckets(points: readonly { time: number; price: number }[], seconds: number) {
  const size = seconds * 1000;
  const buckets = new Map<number, Ohlc>();
  for (const { time, price } of points) {
    const bucket = Math.floor(time / size) * size;
    const c = buckets.get(bucket);
    if (!c) buckets.set(bucket, { open: price, high: price, low: price, close: price });
    else {
      c.high = Math.max(c.high, price);
      c.low = Math.min(c.low, price);
      c.close = price;
    }
  }
  return buckets;
}

const INTERVALS = { "1m": 60, "5m": 300, "15m": 900, "30m": 1800, "1h": 3600, "4h": 14_400, "1d": 86_400 };

describe("exact prices over HTTP on a real mainnet day, both sides of the pair", { timeout: 300_000 }, () => {
  let t: TestDb;
  let app: FastifyInstance;
  let api: ApiClient;
  const expected = expectedTrades();

  before(async () => {
    t = await createTestDb();
    const pricingConfig = {
      pricing: PRICING,
      chains: [
        {
          id: CHAIN,
          referenceTokens: { stablecoins: [USDC], wrappedNative: WETH, wrappedBtc: [], others: [] },
        },
      ],
    };
    const fixture = readFixture(fixtureDir);
    await replayFixture({
      db: t.db,
      dir: fixtureDir,
      fixture: { ...fixture, manifest: { ...fixture.manifest, balances: BALANCES } },
      derived: createPricing({
        config: pricingConfig,
        logger: createSilentLogger(),
        now: () => new Date(DAY_END),
      }),
      logger: createSilentLogger(),
      blocksPerBatch: 500,
    });
    const { key } = await createApiKey(t.db, "exact-prices");
    const config = parseConfig({
      devnet: { enabled: false },
      pricing: pricingConfig.pricing,
      coins: { ETH: { chain: CHAIN, token: WETH } },
      chains: [
        {
          id: CHAIN,
          name: "Ethereum",
          rpc: ["http://127.0.0.1:9"],
          dexes: [
            { name: "Uniswap V3", protocol: "v3", factory: "0x1f98431c8ad98523631ae4a59f267346ea31f984" },
          ],
          referenceTokens: { stablecoins: [USDC], wrappedNative: WETH, wrappedBtc: [] },
        },
      ],
    });
    ({ app, api } = await listenApi(
      { config, db: t.db, logger: createSilentLogger(), now: () => new Date(DAY_END) },
      key,
    ));
  });
  after(async () => {
    await app?.close();
    await t?.drop();
  });

  it("reads 6,046 swaps from decoded.csv, some of them no trade", () => {
    assert.equal(expected.length, 6046, "the manifest's swaps");
    assert.ok(expected.filter((e) => e.prices[0] !== null).length > 6000, "nearly all are trades");
  });

  for (const [side, asset] of [
    [0, USDC],
    [1, WETH],
  ] as const) {
    const name = side === 0 ? "USDC" : "WETH";
    /** The day's candles of this side at `interval`. */
    const dayCandles = async (interval: string) => {
      const answer = await api.get("/api/v1/candles", {
        asset_id: id(asset),
        pair_id: id(POOL),
        from: new Date(DAY_START).toISOString(),
        to: new Date(DAY_END).toISOString(),
        interval,
      });
      assert.equal(answer.status, 200, answer.text);
      return answer.body as (Ohlc & { time: number; volume: number })[];
    };

    it(`/api/v1/trades of ${name}: every price and USD price bit for bit`, async () => {
      const byKey = new Map(expected.map((e) => [`${e.block}.${e.logIndex}`, e]));
      let cursor: string | null = null;
      let seen = 0;
      const mismatches: string[] = [];
      do {
        const answer = await api.get("/api/v1/trades", {
          asset_id: id(asset),
          pair_id: id(POOL),
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        });
        assert.equal(answer.status, 200, answer.text);
        for (const trade of answer.body as Record<string, unknown>[]) {
          seen += 1;
          const e = byKey.get(`${trade.block_number}.${trade.log_index}`);
          assert.ok(e, `trade ${trade.block_number}.${trade.log_index} is in decoded.csv`);
          const where = `${trade.block_number}.${trade.log_index}`;
          if (!Object.is(trade.price, e.prices[side])) {
            mismatches.push(`${where}: price ${trade.price} vs ${e.prices[side]}`);
          }
          // USDC is the anchor: exactly 1 (1/1). WETH: the pool's spot price at the end of the
          // block. The USD value: the USDC amount (the anchor's side at exactly 1).
          if (!Object.is(trade.token0_price, 1))
            mismatches.push(`${where}: token0_price ${trade.token0_price}`);
          if (!Object.is(trade.token1_price, e.wethUsd))
            mismatches.push(`${where}: token1_price ${trade.token1_price} vs ${e.wethUsd}`);
          if (!Object.is(trade.volume, e.usdcAmount))
            mismatches.push(`${where}: volume ${trade.volume} vs ${e.usdcAmount}`);
        }
        cursor = answer.headers.get("x-next-cursor");
      } while (cursor);
      assert.equal(seen, expected.length, "every swap, once");
      assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} mismatches`);
    });

    it(`/api/v1/candles of ${name}: every volume the exact sum of its trades' raw amounts, rounded once`, async () => {
      const wrong: string[] = [];
      for (const [interval, seconds] of Object.entries(INTERVALS)) {
        const candles = await dayCandles(interval);
        const raw = new Map<number, bigint>();
        for (const t of expected) {
          if (t.prices[side] === null) continue;
          const b = Math.floor(t.time / (seconds * 1000)) * seconds * 1000;
          raw.set(b, (raw.get(b) ?? 0n) + (side === 0 ? t.rawUsdc : t.rawWeth));
        }
        for (const c of candles) {
          const sum = raw.get(c.time);
          const want = sum === undefined ? 0 : referenceRatioToNumber(sum, 10n ** (side === 0 ? 6n : 18n));
          if (!Object.is(c.volume, want)) wrong.push(`${interval} ${c.time}: ${c.volume} vs ${want}`);
        }
      }
      assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} volumes differ`);
    });

    it(`/api/v1/candles of ${name}: every OHLC of every interval bit for bit`, async () => {
      let compared = 0;
      for (const [interval, seconds] of Object.entries(INTERVALS)) {
        const candles = await dayCandles(interval);
        const want = expectedCandles(expected, side, seconds);
        assert.equal(candles.length, 86_400 / seconds, `${interval}: every interval of the day`);
        assert.equal(candles.filter((c) => c.volume > 0).length, want.size, `${interval}: traded intervals`);
        const mismatches: string[] = [];
        let previous: Ohlc | undefined;
        for (const c of candles) {
          const e = want.get(c.time);
          // An interval without trades carries the previous close (volume 0).
          const ref: Ohlc | undefined =
            e ??
            (previous && {
              open: previous.close,
              high: previous.close,
              low: previous.close,
              close: previous.close,
            });
          assert.ok(ref, `${interval} ${c.time}: an interval after the first trade`);
          for (const field of ["open", "high", "low", "close"] as const) {
            compared += 1;
            if (!Object.is(c[field], ref[field]))
              mismatches.push(`${interval} ${c.time} ${field}: ${c[field]} vs ${ref[field]}`);
          }
          previous = ref;
        }
        assert.deepEqual(mismatches.slice(0, 10), [], `${interval}: ${mismatches.length} mismatches`);
      }
      assert.ok(compared > 4 * 1440, `${compared} prices compared`);
    });
  }

  it("the reference tells the old rounding apart: 1 / the side-0 price misses on many trades", () => {
    // Not a check of the API: evidence that the comparisons above can fail. The reciprocal of the
    // rounded USDC price (the old side-1 candles) differs from the exact WETH price on many trades.
    const trades = expected.filter((e) => e.prices[0] !== null);
    const off = trades.filter((e) => 1 / (e.prices[0] as number) !== e.prices[1]).length;
    assert.ok(off > trades.length / 20, `${off} of ${trades.length}`);
  });

  it("the USD reference tells roundings and states apart: 1 / the rounded spot, the swap's own state", () => {
    // Not a check of the API: evidence that the USD comparisons can fail. WETH's USD price as the
    // reciprocal of the rounded USDC spot price differs from the exact one at many swaps, and so
    // does the price after the swap itself from the end-of-block price the pricing defines.
    const usdcSpot = (sqrt: bigint) =>
      referenceRatioToNumber(sqrt * sqrt * 10n ** 6n, 2n ** 192n * 10n ** 18n);
    const offRounding = expected.filter(
      (e) => 1 / usdcSpot(e.sqrtPriceX96) !== wethUsdOf(e.sqrtPriceX96),
    ).length;
    assert.ok(offRounding > expected.length / 20, `${offRounding} of ${expected.length}`);
    const offState = expected.filter((e) => wethUsdOf(e.sqrtPriceX96) !== e.wethUsd).length;
    assert.ok(offState > expected.length / 20, `${offState} of ${expected.length}`);
  });

  it("current USD prices: every endpoint that gives one, bit for bit", async () => {
    // The current price: the state after the recording's last event, so the last swap's sqrtPriceX96.
    const last = expected[expected.length - 1] as ExpectedTrade;
    const want = new Map([
      [USDC, 1],
      [WETH, wethUsdOf(last.sqrtPriceX96)],
    ]);
    assert.ok((want.get(WETH) as number) > 2000 && (want.get(WETH) as number) < 2500, `${want.get(WETH)}`);
    const mismatches: string[] = [];
    const check = (where: string, got: unknown, token: string) => {
      if (!Object.is(got, want.get(token))) mismatches.push(`${where}: ${got} vs ${want.get(token)}`);
    };

    const assets = await api.get("/api/v1/assets", { asset_ids: `${id(USDC)},${id(WETH)}` });
    assert.equal(assets.status, 200, assets.text);
    const assetList = assets.body as { contract: string; usd_price: number | null }[];
    assert.equal(assetList.length, 2, assets.text);
    for (const a of assetList) check(`assets ${a.contract}`, a.usd_price, a.contract);

    const several = await api.get("/v1/tokens/metadata", { tokenId: `${id(USDC)},${id(WETH)}` });
    assert.equal(several.status, 200, several.text);
    const severalList = several.body as { contract: string; usd_price: number | null }[];
    assert.equal(severalList.length, 2, several.text);
    for (const m of severalList) check(`metadata (several) ${m.contract}`, m.usd_price, m.contract);
    for (const token of [USDC, WETH]) {
      const one = await api.get("/v1/tokens/metadata", { tokenId: id(token) });
      assert.equal(one.status, 200, one.text);
      check(`metadata ${token}`, (one.body as { usd_price: number | null }).usd_price, token);

      const search = await api.get("/v1/tokens/search", { searchString: token, chains: String(CHAIN) });
      assert.equal(search.status, 200, search.text);
      const found = (search.body as { contract: string; usd_price: number | null }[]).find(
        (s) => s.contract === token,
      );
      assert.ok(found, search.text);
      check(`search ${token}`, found.usd_price, token);

      const provenance = await api.get("/v1/tokens/price-provenance", { tokenId: id(token) });
      assert.equal(provenance.status, 200, provenance.text);
      const p = provenance.body as {
        usd_price: number | null;
        provenance: { pools?: { pool: string; price_usd: number }[] };
      };
      check(`provenance ${token}`, p.usd_price, token);
      // WETH's one qualifying pool quotes it at the same exact price.
      if (token === WETH) {
        assert.deepEqual(
          p.provenance.pools?.map((q) => q.pool),
          [POOL],
          provenance.text,
        );
        check("provenance WETH pool price_usd", p.provenance.pools?.[0]?.price_usd, WETH);
      }
    }

    const pairs = await api.get("/api/v1/pairs", { asset_id: id(WETH) });
    assert.equal(pairs.status, 200, pairs.text);
    const pair = (
      pairs.body as { pair_id?: string; token0_price: number | null; token1_price: number | null }[]
    )[0];
    assert.ok(pair, pairs.text);
    check("pairs token0_price", pair.token0_price, USDC);
    check("pairs token1_price", pair.token1_price, WETH);

    // Decimal text with the shortest round-trip digits: parsing it gives the double back.
    const coin = await api.get("/v1/coins/price", { symbol: "ETH" });
    assert.equal(coin.status, 200, coin.text);
    check("coin price ETH", Number((coin.body as { price: string }).price), WETH);

    assert.deepEqual(mismatches, []);
  });

  for (const token of ["USDC", "WETH"] as const) {
    const address = token === "USDC" ? USDC : WETH;

    it(`/v1/tokens/candle-chart of ${token}: every USD open/high/low/close bit for bit`, async () => {
      let compared = 0;
      for (const minutes of [5, 15, 30, 60]) {
        const answer = await api.get("/v1/tokens/candle-chart", {
          tokenId: id(address),
          days: 1,
          interval: minutes,
        });
        assert.equal(answer.status, 200, answer.text);
        const candles = answer.body as {
          _id: { date: string };
          o: number;
          h: number;
          l: number;
          c: number;
        }[];
        const want = expectedUsdCandles(expected, token, minutes * 60);
        assert.equal(candles.length, want.size, `${minutes} min: intervals with a series point`);
        const mismatches: string[] = [];
        for (const c of candles) {
          const time = Date.parse(c._id.date);
          const e = want.get(time);
          if (!e) {
            mismatches.push(`${minutes} min ${c._id.date}: not expected`);
            continue;
          }
          for (const [field, ref] of [
            ["o", e.open],
            ["h", e.high],
            ["l", e.low],
            ["c", e.close],
          ] as const) {
            compared += 1;
            if (!Object.is(c[field], ref))
              mismatches.push(`${minutes} min ${c._id.date} ${field}: ${c[field]} vs ${ref}`);
          }
        }
        assert.deepEqual(mismatches.slice(0, 10), [], `${minutes} min: ${mismatches.length} mismatches`);
      }
      assert.ok(compared > 4 * 288, `${compared} prices compared`);
    });
  }

  it("/v1/tokens/line-chart: USDC exactly 1; WETH's hourly means bit for bit", async () => {
    // USDC's series records its trades at exactly 1: sum_pv_exact and sum_v_exact are the same
    // sums, so every hourly mean is exactly 1.
    const usdc = await api.get("/v1/tokens/line-chart", { tokenId: id(USDC), days: 1 });
    assert.equal(usdc.status, 200, usdc.text);
    const usdcLine = usdc.body as { labels: string[]; data: number[] };
    assert.equal(usdcLine.data.length, 24, usdc.text);
    assert.ok(
      usdcLine.data.every((v) => Object.is(v, 1)),
      usdc.text,
    );

    // WETH's hourly point is its volume-weighted mean as docs/PRICING.md defines it, exactly:
    // Σ p·v / Σ v over the trades entering WETH's series in the hour, p the trade's series price
    // (WETH's USD price at the end of its block) and v the WETH traded (raw / 10^18) × p, summed
    // as exact rationals and rounded once. Bit for bit.
    const weth = await api.get("/v1/tokens/line-chart", { tokenId: id(WETH), days: 1 });
    assert.equal(weth.status, 200, weth.text);
    const wethLine = weth.body as { labels: string[]; data: number[] };
    assert.equal(wethLine.data.length, 24, weth.text);
    const sums = new Map<number, { pv: Exact[]; v: Exact[] }>();
    for (const t of expected) {
      const implied = t.prices[1];
      if (implied === null || Math.abs(implied / t.wethUsd - 1) > PRICING.maxDeviation) continue;
      const p = exactOfDouble(t.wethUsd);
      const v = exactMul(unitsExact(t.rawWeth, 18), p);
      const hour = Math.floor(t.time / 3_600_000) * 3_600_000;
      const sum = sums.get(hour) ?? { pv: [], v: [] };
      sum.pv.push(exactMul(p, v));
      sum.v.push(v);
      sums.set(hour, sum);
    }
    let bounded = 0;
    wethLine.labels.forEach((label, i) => {
      const sum = sums.get(Date.parse(label));
      if (!sum) return; // an hour without a trade carries the previous point (the last label, 00:00 next day)
      const mean = toDouble(exactDiv(exactSum(sum.pv), exactSum(sum.v)));
      assert.ok(
        Object.is(wethLine.data[i], mean),
        `${label}: Σ p·v / Σ v = ${mean}, got ${wethLine.data[i]}`,
      );
      bounded += 1;
    });
    assert.equal(bounded, 23, "every hour of the range on the recorded day");
  });
});
