import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type ApiClient, type ApiPipeline, startApiPipeline } from "../_test/api-server.js";
import type { TestDb } from "../_test/db.js";
import { exact, exactSum, roundedSum, toDouble, tradePrice } from "../_test/exact.js";
import type { ApiAnswer } from "../_test/http-client.js";
import type { Pipeline } from "../_test/pipeline.js";
import { type ReferenceTrade, referenceConfigOf, referenceTrades } from "../_test/reference-prices.js";
import { CANDLE_USD_COLUMNS, loadSwapsWithUsd, reapplyCandleUsdMigration } from "../_test/sql.js";
import { CANDLE_INTERVALS, type CandleInterval } from "../model/index.js";
import type { CandleRecord as Candle } from "./candle-records.js";

/**
 * The options of /api/v1/candles beyond the specification, over real HTTP on devnet data (two
 * days of simulated trading on the real Uniswap contracts, indexed and priced): `currency=usd`
 * against an independent computation from the stored swaps, count-back paging with `limit` and
 * `before` against one from/to request, unix seconds against ISO, the errors, and migration 010
 * filling an upgraded database's history exactly as the ingest does.
 */

type Swap = Awaited<ReturnType<typeof loadSwapsWithUsd>>[number];
/** A trade of the candles with its reference figures and its decimals. */
type Trade = ReferenceTrade & { swap: Swap };

const CHAIN = 31337;

const bucket = (ms: number, seconds: number) => Math.floor(ms / (seconds * 1000)) * seconds * 1000;
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

function assertError(answer: ApiAnswer, status: number, message: RegExp) {
  assert.equal(answer.status, status, answer.text);
  const body = answer.body as { statusCode: number; message: string };
  assert.equal(body.statusCode, status);
  assert.match(body.message, message);
}

/**
 * A swap is a trade of the candles when both net amounts are non-zero and flow opposite ways and
 * both tokens' decimals are known; written here apart from src/pricing/trade.ts.
 */
function isTrade(s: Swap): boolean {
  if (s.decimals0 === null || s.decimals1 === null) return false;
  const net0 = BigInt(s.amount0_in) - BigInt(s.amount0_out);
  const net1 = BigInt(s.amount1_in) - BigInt(s.amount1_out);
  return net0 !== 0n && net1 !== 0n && net0 > 0n !== net1 > 0n;
}

/**
 * The reference USD candles of one token of a pool, from the raw swaps and the reference prices
 * (src/_test/reference-prices.ts: the documented routing recomputed from the stored raw rows, not
 * the stored token0_usd / token1_usd): each trade with a USD price of the token gives that price
 * as of the end of its block; open/close the first/last in (block, log index) order, high/low the
 * extremes; volume the exact sum of those trades' USD values as the trades carry them (the
 * exact amount × the exact USD price, rounded once, docs/PRICING.md; a trade no side can value counts 0),
 * rounded once. Every interval from the first USD-priced trade up to `end`
 * (exclusive), empty ones carrying the previous close at volume 0.
 */
function referenceUsdCandles(trades: readonly Trade[], side: 0 | 1, seconds: number, end: number): Candle[] {
  const priced = trades.filter((s) => (side === 0 ? s.usd0 : s.usd1) !== null);
  const price = (s: Trade) => (side === 0 ? s.usd0 : s.usd1)?.usdDouble as number;
  const groups = new Map<number, Trade[]>();
  for (const s of priced) {
    const b = bucket(s.time, seconds);
    const group = groups.get(b);
    if (group) group.push(s);
    else groups.set(b, [s]);
  }
  const first = priced[0];
  if (!first) return [];
  const out: Candle[] = [];
  let previous: number | undefined;
  const size = seconds * 1000;
  for (let t = bucket(first.time, seconds); t < end; t += size) {
    const group = groups.get(t);
    if (group) {
      const prices = group.map(price);
      out.push({
        open: prices[0] as number,
        high: Math.max(...prices),
        low: Math.min(...prices),
        close: prices[prices.length - 1] as number,
        volume: roundedSum(group.map((g) => g.volumeUsdDouble ?? 0)),
        date: iso(t),
        time: t,
      });
      previous = prices[prices.length - 1];
    } else {
      const close = previous as number;
      out.push({ open: close, high: close, low: close, close, volume: 0, date: iso(t), time: t });
    }
  }
  return out;
}

describe("/api/v1/candles options: currency=usd, limit + before, unix seconds", { timeout: 600_000 }, () => {
  let testDb: TestDb;
  let pipeline: Pipeline;
  let served: ApiPipeline | undefined;
  let api: ApiClient;
  /** Trades of the candles per pool, ascending, with their reference figures. */
  const tradesOf = new Map<string, Trade[]>();
  const pools: { address: string; token0: string; token1: string }[] = [];
  const id = (address: string) => `${address}:${CHAIN}`;

  before(async () => {
    served = await startApiPipeline({
      keyName: "candles-options",
      // The history is written; nothing trades any more, so every answer below stays put.
      ready: (p) => p.stopIndexing(),
    });
    ({ testDb, pipeline, api } = served);
    const reference = await referenceTrades(testDb.db, CHAIN, referenceConfigOf(pipeline.config, CHAIN));
    const swaps = await loadSwapsWithUsd(testDb.db, CHAIN);
    assert.equal(reference.length, swaps.length, "the reference values every stored swap");
    for (const [i, s] of swaps.entries()) {
      const r = reference[i] as ReferenceTrade;
      assert.deepEqual([r.block, r.logIndex], [Number(s.block_number), s.log_index], "in key order");
      if (!isTrade(s)) continue;
      const list = tradesOf.get(s.pool);
      if (list) list.push({ ...r, swap: s });
      else tradesOf.set(s.pool, [{ ...r, swap: s }]);
    }
    for (const p of pipeline.deployment.pools) {
      const address = p.address.toLowerCase();
      if (tradesOf.has(address)) {
        pools.push({ address, token0: p.token0.toLowerCase(), token1: p.token1.toLowerCase() });
      }
    }
  });
  after(() => served?.close());

  const candles = (query: Record<string, string | number>) => api.get("/api/v1/candles", query);
  /**
   * The whole history of a pool in one request: from before the chain's start (two days and an
   * hour before `until`) to the end of the history; 4,321 one-minute intervals at most.
   */
  const everything = () => ({
    from: iso(pipeline.until.getTime() - 3 * 86_400_000),
    to: iso(pipeline.until.getTime()),
  });

  /** Every USD candle's volume that differs from the reference's (filled by the next test). */
  const volumes: string[] = [];
  let volumesCompared = 0;

  it("currency=usd: every interval of every pool, both sides, equals the reference bit for bit", async (t) => {
    assert.ok(pools.length > 0, "pools traded");
    const end = pipeline.until.getTime();
    let compared = 0;
    let leftOut = 0;
    let unpricedSides = 0;
    for (const pool of pools) {
      const trades = tradesOf.get(pool.address) as Trade[];
      for (const side of [0, 1] as const) {
        const asset = side === 0 ? pool.token0 : pool.token1;
        leftOut += trades.filter((s) => (side === 0 ? s.usd0 : s.usd1) === null).length;
        for (const [interval, seconds] of Object.entries(CANDLE_INTERVALS)) {
          const want = referenceUsdCandles(trades, side, seconds, end);
          const query = {
            asset_id: id(asset),
            pair_id: id(pool.address),
            interval,
            currency: "usd",
            ...everything(),
          };
          const answer = await candles(query);
          const what = `${pool.address} side ${side} ${interval}`;
          if (want.length === 0) {
            // No trade with a USD price of this token: the 404 of a range without trades.
            unpricedSides += 1;
            assertError(answer, 404, /no trade with a USD price of asset_id/);
            continue;
          }
          assert.equal(answer.status, 200, `${what}: ${answer.text}`);
          const got = answer.body as Candle[];
          assert.equal(got.length, want.length, `${what}: every interval from the first USD-priced trade`);
          const mismatches = got.flatMap((c, i) => {
            const e = want[i] as Candle;
            return (["time", "open", "high", "low", "close"] as const)
              .filter((field) => !Object.is(c[field], e[field]))
              .map((field) => `${c.date} ${field}: ${c[field]} vs ${e[field]}`);
          });
          assert.deepEqual(mismatches.slice(0, 5), [], `${what}: ${mismatches.length} mismatches`);
          // Volumes apart (the next test), so that a volume's rounding never hides a price.
          volumes.push(
            ...got.flatMap((c, i) =>
              Object.is(c.volume, (want[i] as Candle).volume)
                ? []
                : [`${what} ${c.date}: ${c.volume} vs ${(want[i] as Candle).volume}`],
            ),
          );
          volumesCompared += got.length;
          compared += got.length;
        }
      }
    }
    t.diagnostic(
      `${compared} USD candles compared over ${pools.length} pools; ${leftOut} trade sides without a USD price; ${unpricedSides} side × interval answers 404`,
    );
    // What was compared and left out follows from the day's own trades (the simulated activity
    // varies with the calendar): the stored swaps without a USD price of a side are exactly the
    // trade sides the reference leaves unpriced, and every side with a priced trade was compared.
    const stored = [...tradesOf.values()]
      .flat()
      .reduce((n, s) => n + (s.swap.token0_usd === null ? 1 : 0) + (s.swap.token1_usd === null ? 1 : 0), 0);
    assert.equal(leftOut, stored, "trade sides without a USD price: the reference's = the stored ones");
    assert.ok(compared > 0, `${compared} USD candles compared`);
  });

  it("currency=usd: every trade's USD value and every USD volume, the exact sum of those, rounded once", () => {
    // Each trade's stored USD value against the reference's: the documented side, its exact
    // amount × its token's exact USD price, rounded once.
    const trades = [...tradesOf.values()].flat();
    const wrongTrades = trades
      .filter((t) => !Object.is(t.swap.volume_usd, t.volumeUsdDouble))
      .map((t) => `${t.pool} ${t.block}.${t.logIndex}: ${t.swap.volume_usd} vs ${t.volumeUsdDouble}`);
    assert.deepEqual(
      wrongTrades.slice(0, 5),
      [],
      `${wrongTrades.length} of ${trades.length} trade USD values differ`,
    );
    assert.ok(volumesCompared > 0, "the test above compared the candles and their volumes");
    assert.deepEqual(volumes.slice(0, 5), [], `${volumes.length} of ${volumesCompared} volumes differ`);
  });

  it("currency=usd is not the token candle: a USDC-quoted token's USD candle is its USD price, volume in dollars", async () => {
    const pool = pipeline.deployment.pools.find((p) => p.key === "v2:WETH/USDC");
    assert.ok(pool);
    const weth = pipeline.deployment.tokens.WETH.address;
    const base = { asset_id: id(weth), pair_id: id(pool.address), interval: "1h", ...everything() };
    const token = (await candles(base)).body as Candle[];
    const usd = (await candles({ ...base, currency: "usd" })).body as Candle[];
    const explicit = (await candles({ ...base, currency: "token" })).body as Candle[];
    assert.deepEqual(explicit, token, "currency=token is the default");
    // Each traded hour against the reference: the token candle holds WETH's price in USDC at each
    // trade and the WETH traded, the USD candle WETH's USD price at each trade's block and the
    // trades' USD value; both exact from the raw amounts, so they differ where the figures do.
    const side = pool.token0.toLowerCase() === weth.toLowerCase() ? 0 : 1;
    const trades = tradesOf.get(pool.address.toLowerCase()) as Trade[];
    const hours = new Map<number, Trade[]>();
    for (const t of trades) hours.set(bucket(t.time, 3600), [...(hours.get(bucket(t.time, 3600)) ?? []), t]);
    const usdByTime = new Map(usd.map((c) => [c.time, c]));
    let differ = 0;
    for (const c of token.filter((c) => c.volume > 0)) {
      const group = hours.get(c.time) as Trade[];
      assert.ok(group, `${c.date}: an hour with trades`);
      const last = group[group.length - 1] as Trade;
      const wethRaw = side === 0 ? last.raw0 : last.raw1;
      const usdcRaw = side === 0 ? last.raw1 : last.raw0;
      assert.equal(
        c.close,
        toDouble(tradePrice({ amount: wethRaw, decimals: 18 }, { amount: usdcRaw, decimals: 6 })),
        `${c.date}: the token close is the last trade's WETH price in USDC`,
      );
      assert.equal(
        c.volume,
        toDouble(exactSum(group.map((t) => exact(side === 0 ? t.raw0 : t.raw1, 10n ** 18n)))),
        `${c.date}: the token volume is the WETH traded`,
      );
      const u = usdByTime.get(c.time);
      const lastUsd = side === 0 ? last.usd0 : last.usd1;
      if (!u || !lastUsd) continue;
      assert.equal(
        u.close,
        lastUsd.usdDouble,
        `${c.date}: the USD close is WETH's USD price at the last trade`,
      );
      if (u.close !== c.close && u.volume !== c.volume) differ += 1;
    }
    assert.ok(differ > 0, "currency switches what is answered");
  });

  /** Pages back from `before` with `limit` until `[]`; returns the pages, newest first. */
  async function pageBack(query: Record<string, string>, limit: number, first: string): Promise<Candle[][]> {
    const pages: Candle[][] = [];
    let cursor = first;
    for (;;) {
      const answer = await candles({ ...query, limit, before: cursor });
      assert.equal(answer.status, 200, answer.text);
      const page = answer.body as Candle[];
      if (page.length === 0) return pages;
      assert.ok(page.length <= limit, `at most ${limit}`);
      const previous = pages[pages.length - 1];
      if (previous) assert.equal(previous.length, limit, "only the oldest page may be short");
      pages.push(page);
      assert.ok(pages.length < 500, "paging ends");
      cursor = (page[0] as Candle).date;
    }
  }

  it("limit + before page through a pair's whole history without overlap or gap, then []", async () => {
    const cases: [string, 0 | 1, CandleInterval, number][] = [
      ["v2:WETH/USDC", 0, "5m", 173],
      ["v2:WETH/USDC", 1, "1h", 5],
      ["v2:LINK/USDC", 0, "15m", 64],
      ["v2:LINK/USDC", 1, "4h", 1],
      ["v3:DUST/USDC:10000", 0, "1h", 7],
      ["v3:DUST/USDC:10000", 1, "30m", 100],
      ["v2:WBTC/WETH", 0, "1d", 2],
      ["v2:WBTC/WETH", 1, "1m", 5000],
    ];
    const until = pipeline.until.getTime();
    let pagesSeen = 0;
    let pagesDue = 0;
    for (const [key, side, interval, limit] of cases) {
      const deployed = pipeline.deployment.pools.find((p) => p.key === key);
      assert.ok(deployed, key);
      const asset = side === 0 ? deployed.token0 : deployed.token1;
      for (const currency of ["token", "usd"]) {
        const query = { asset_id: id(asset), pair_id: id(deployed.address), interval, currency };
        const what = `${key} side ${side} ${interval} ${currency} limit ${limit}`;
        const whole = await candles({ ...query, ...everything() });
        const reference = whole.status === 404 ? [] : (whole.body as Candle[]);
        assert.ok(whole.status === 200 || whole.status === 404, `${what}: ${whole.text}`);
        // ISO and unix seconds start the same paging.
        const pages = await pageBack(query, limit, iso(until));
        const pagesUnix = await pageBack(query, limit, String(until / 1000));
        assert.deepEqual(pagesUnix, pages, `${what}: before in unix seconds = in ISO`);
        const joined = [...pages].reverse().flat();
        assert.deepEqual(joined, reference, `${what}: the pages make the whole history`);
        if (reference.length > limit) assert.ok(pages.length > 1, `${what}: several pages`);
        pagesSeen += pages.length;
        pagesDue += Math.ceil(reference.length / limit);
        // Before the first trade there is nothing: [] (not 404).
        const first = reference[0];
        if (first) {
          const past = await candles({ ...query, limit, before: first.date });
          assert.equal(past.status, 200);
          assert.deepEqual(past.body, [], `${what}: exhausted`);
        }
      }
    }
    // As many pages as the histories need (their lengths follow the simulated day).
    assert.equal(pagesSeen, pagesDue, `${pagesSeen} pages`);
    assert.ok(pagesSeen > cases.length, "some history spans several pages");
  });

  it("limit without before counts back from now: the current interval comes last", async () => {
    const deployed = pipeline.deployment.pools.find((p) => p.key === "v2:WETH/USDC");
    assert.ok(deployed);
    for (const currency of ["token", "usd"]) {
      const startedAt = Date.now();
      const answer = await candles({
        asset_id: id(deployed.token0),
        pair_id: id(deployed.address),
        interval: "1m",
        currency,
        limit: 30,
      });
      const endedAt = Date.now();
      assert.equal(answer.status, 200, answer.text);
      const page = answer.body as Candle[];
      assert.equal(page.length, 30, "the history is longer than 30 minutes");
      const last = page[page.length - 1] as Candle;
      assert.ok(
        last.time === bucket(startedAt, 60) || last.time === bucket(endedAt, 60),
        `${currency}: the last interval is the current minute (${last.date})`,
      );
      page.forEach((c, i) => {
        if (i > 0) assert.equal(c.time - (page[i - 1] as Candle).time, 60_000, "consecutive minutes");
      });
    }
  });

  it("from and to in unix seconds answer as in ISO", async () => {
    const deployed = pipeline.deployment.pools.find((p) => p.key === "v2:LINK/USDC");
    assert.ok(deployed);
    const from = bucket(pipeline.until.getTime() - 30 * 3_600_000, 60) + 17_000;
    const to = bucket(pipeline.until.getTime() - 2 * 3_600_000, 60);
    for (const currency of ["token", "usd"]) {
      for (const interval of ["1m", "1h"]) {
        const base = { asset_id: id(deployed.token1), pair_id: id(deployed.address), interval, currency };
        const isoAnswer = await candles({ ...base, from: iso(from), to: iso(to) });
        const unixAnswer = await candles({ ...base, from: String(from / 1000), to: String(to / 1000) });
        const mixed = await candles({ ...base, from: String(from / 1000), to: iso(to) });
        assert.equal(isoAnswer.status, 200, isoAnswer.text);
        assert.ok((isoAnswer.body as Candle[]).length > 0, "the range holds candles");
        assert.deepEqual(unixAnswer.body, isoAnswer.body, `${currency} ${interval}: unix seconds = ISO`);
        assert.deepEqual(mixed.body, isoAnswer.body, `${currency} ${interval}: one of each`);
      }
    }
  });

  it("bad values are a 400 naming the parameter", async () => {
    const deployed = pipeline.deployment.pools.find((p) => p.key === "v2:LINK/USDC");
    assert.ok(deployed);
    const base = { asset_id: id(deployed.token0), pair_id: id(deployed.address), interval: "1h" };
    const range = { from: "2026-11-20T00:00:00Z", to: "2026-11-21T00:00:00Z" };
    for (const bad of ["-5", "1e9", "0x10", "12.5", "+5", "05", " 5", "1795255200 ", "yesterday", ""]) {
      assertError(await candles({ ...base, ...range, from: bad }), 400, /^query parameter from /);
      assertError(await candles({ ...base, ...range, to: bad }), 400, /^query parameter to /);
      assertError(await candles({ ...base, limit: 10, before: bad }), 400, /^query parameter before /);
    }
    assertError(
      await candles({ ...base, ...range, from: "2026-11-20" }),
      400,
      /from must be an ISO 8601 date-time .*or unix seconds/,
    );
    // Unix seconds within the time bounds only: 2100-01-01T00:00:00Z is 4102444800.
    assertError(
      await candles({ ...base, ...range, to: "4102444801" }),
      400,
      /to must be a date-time from 1970/,
    );
    assertError(
      await candles({ ...base, limit: 1, before: "9999999999" }),
      400,
      /before must be a date-time/,
    );
    assert.equal(
      (await candles({ ...base, limit: 1, before: "4102444800" })).status,
      200,
      "the bound itself",
    );
    assert.deepEqual((await candles({ ...base, limit: 1, before: "0" })).body, [], "1970: before any trade");
    for (const limit of ["0", "5001", "-1", "1.5", "abc", "010"]) {
      assertError(await candles({ ...base, limit }), 400, /^query parameter limit /);
    }
    assert.equal((await candles({ ...base, limit: 5000 })).status, 200, "5000 is allowed");
    assertError(
      await candles({ ...base, ...range, currency: "eur" }),
      400,
      /^query parameter currency must be one of token, usd/,
    );
    // Both ways at once, or before alone: 400 naming limit.
    assertError(
      await candles({ ...base, ...range, limit: 10 }),
      400,
      /^query parameter limit cannot be combined/,
    );
    assertError(await candles({ ...base, from: range.from, limit: 10 }), 400, /^query parameter limit /);
    assertError(await candles({ ...base, to: range.to, before: range.to }), 400, /^query parameter limit /);
    assertError(await candles({ ...base, before: range.to }), 400, /^query parameter limit is required/);
    // Neither: from (then to) is required, as before the extension.
    assertError(await candles(base), 400, /^query parameter from is required/);
    assertError(await candles({ ...base, from: range.from }), 400, /^query parameter to is required/);
    assertError(
      await candles({
        ...base,
        limit: 10,
        currency: "usd",
        asset_id: id(pipeline.deployment.tokens.DAI.address),
      }),
      400,
      /not one of the two tokens/,
    );
  });

  it("the OpenAPI document describes the new parameters with examples", async () => {
    type Parameter = { name: string; required?: boolean; schema: Record<string, unknown> };
    const operation = api.document.paths["/api/v1/candles"]?.get as { parameters?: Parameter[] } | undefined;
    const parameters = operation?.parameters ?? [];
    const byName = new Map(parameters.map((p) => [p.name, p]));
    for (const name of ["currency", "limit", "before"]) {
      const p = byName.get(name);
      assert.ok(p, `${name} is documented`);
      assert.notEqual(p.required, true, `${name} is optional`);
    }
    assert.notEqual(byName.get("from")?.required, true, "from is optional with limit");
    assert.deepEqual(byName.get("currency")?.schema.enum, ["token", "usd"]);
    assert.equal(byName.get("limit")?.schema.maximum, 5000);
    assert.ok(byName.get("before")?.schema.anyOf, "ISO or unix seconds");
  });

  it("migration 010 fills an upgraded database's candles from the stored swaps exactly as the ingest did", async () => {
    const dump = async () =>
      (
        await testDb.db.query<Record<string, unknown>>(
          // The volumes apart: migration 022 empties the candles and the pricing rebuilds them
          // with exact sums (docs/PRICING.md), which 010's double sums are not.
          `SELECT pool, resolution, bucket, ${CANDLE_USD_COLUMNS.filter((c) => !c.startsWith("volume")).join(", ")} FROM candles
           WHERE chain_id = $1 ORDER BY pool, resolution, bucket`,
          [CHAIN],
        )
      ).rows;
    const grown = await dump();
    const withUsd = grown.filter((r) => r.open_usd0 !== null || r.open_usd1 !== null).length;
    assert.ok(withUsd > 0, `${withUsd} candles with a USD side`);
    assert.ok(
      grown.some((r) => r.open_usd0 === null || r.open_usd1 === null),
      "and some with a side without any USD-priced trade",
    );
    const sql = readFileSync(
      path.join(import.meta.dirname, "../store/migrations/010_candle_usd.sql"),
      "utf8",
    );
    await reapplyCandleUsdMigration(testDb.db, sql);
    const migrated = await dump();
    assert.equal(migrated.length, grown.length, "every row kept");
    assert.deepEqual(migrated, grown, "every USD column of every candle, bit for bit");
  });
});
