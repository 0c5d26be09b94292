import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { encodeFunctionData } from "viem";
import { type ApiClient, type ApiPipeline, listenApi, startApiPipeline } from "../_test/api-server.js";
import type { TestDb } from "../_test/db.js";
import { toDouble, tradePrice, unitsOf } from "../_test/exact.js";
import { freePort } from "../_test/free-port.js";
import type { ApiAnswer } from "../_test/http-client.js";
import { exampleQuery, operationsOf } from "../_test/openapi-examples.js";
import type { Pipeline } from "../_test/pipeline.js";
import { referenceConfigOf, referenceMarket } from "../_test/reference-prices.js";
import type { Config } from "../config/schema.js";
import { erc20Abi } from "../devnet/abis.js";
import type { DeployedToken } from "../devnet/deploy.js";
import { createDevnetRpc } from "../devnet/rpc.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import type { CandleRecord as Candle } from "./candle-records.js";
import { startApi } from "./server.js";

/**
 * Acceptance through real HTTP: a devnet with two days of simulated trading on the real Uniswap
 * contracts, indexed and priced into a test database, served by a listening API server and read
 * with fetch. Every answer is checked against the published /openapi.json by the client.
 */

type Row = Record<string, unknown>;

const isIso = (value: unknown) =>
  typeof value === "string" && !Number.isNaN(Date.parse(value)) && value.endsWith("Z");

/** One swap row's raw facts: net amounts (in − out) and reserves after it, as stored integers. */
type RawSwap = {
  block: number;
  logIndex: number;
  time: number;
  hash: string;
  net0: bigint;
  net1: bigint;
  reserve0: bigint | null;
  reserve1: bigint | null;
};
const abs = (v: bigint) => (v < 0n ? -v : v);
/** A trade has two opposite non-zero flows; anything else has no price and makes no candle. */
const isTrade = (s: RawSwap) => s.net0 !== 0n && s.net1 !== 0n && s.net0 > 0n !== s.net1 > 0n;
/**
 * The exact price of one side's token in the other's from the raw amounts, rounded once: side 0
 * token0 in token1, side 1 token1 in token0 (its own exact ratio, so a reciprocal taken of the
 * rounded side-0 price shows).
 */
function referencePrice(s: RawSwap, side: 0 | 1, decimals0: number, decimals1: number): number {
  const token0 = { amount: s.net0, decimals: decimals0 };
  const token1 = { amount: s.net1, decimals: decimals1 };
  return toDouble(side === 0 ? tradePrice(token0, token1) : tradePrice(token1, token0));
}
type ReferenceCandle = { open: number; high: number; low: number; close: number; raw: bigint };
/**
 * Candles of one side of a pool computed here from the raw swaps: OHLC of the trades' reference
 * prices in key order, and the side's volume as the exact sum of raw amounts (rounded by the
 * caller once). Buckets aligned to the epoch.
 */
function referenceCandles(
  swaps: readonly RawSwap[],
  side: 0 | 1,
  decimals: [number, number],
  seconds: number,
): Map<number, ReferenceCandle> {
  const size = seconds * 1000;
  const out = new Map<number, ReferenceCandle>();
  for (const s of swaps) {
    if (!isTrade(s)) continue;
    const price = referencePrice(s, side, decimals[0], decimals[1]);
    const raw = abs(side === 0 ? s.net0 : s.net1);
    const bucket = Math.floor(s.time / size) * size;
    const c = out.get(bucket);
    if (!c) out.set(bucket, { open: price, high: price, low: price, close: price, raw });
    else {
      c.high = Math.max(c.high, price);
      c.low = Math.min(c.low, price);
      c.close = price;
      c.raw += raw;
    }
  }
  return out;
}

function assertError(answer: ApiAnswer, status: number, message?: RegExp) {
  assert.equal(answer.status, status, answer.text);
  const body = answer.body as { statusCode: number; message: string };
  assert.equal(body.statusCode, status);
  if (message) assert.match(body.message, message);
}

describe("HTTP API over the devnet pipeline", { timeout: 300_000 }, () => {
  let testDb: TestDb;
  let pipeline: Pipeline;
  let served: ApiPipeline | undefined;
  let api: ApiClient;
  let key: string;
  let tokens: Record<string, DeployedToken>;
  const chain = 31337;
  const id = (address: string) => `${address}:${chain}`;
  const token = (k: string) => tokens[k] as DeployedToken;
  const poolOf = (k: string) => {
    const pool = pipeline.deployment.pools.find((p) => p.key === k);
    assert.ok(pool, k);
    return pool;
  };

  /** A pool's stored swaps as raw integers (the chain's own figures), in key order. */
  const rawSwaps = async (pool: string): Promise<RawSwap[]> => {
    type SwapKey = { block_number: string; log_index: number; block_time: Date; tx_hash: string };
    type Amounts = Record<"a0in" | "a0out" | "a1in" | "a1out", string> & Record<"r0" | "r1", string | null>;
    const { rows } = await testDb.db.query<SwapKey & Amounts>(
      `SELECT block_number, log_index, block_time, tx_hash, amount0_in::text AS a0in, amount0_out::text AS a0out,
              amount1_in::text AS a1in, amount1_out::text AS a1out, reserve0::text AS r0, reserve1::text AS r1
       FROM swaps WHERE chain_id = $1 AND pool = $2 ORDER BY block_number, log_index`,
      [chain, pool],
    );
    return rows.map((r) => ({
      block: Number(r.block_number),
      logIndex: r.log_index,
      time: r.block_time.getTime(),
      hash: r.tx_hash,
      net0: BigInt(r.a0in) - BigInt(r.a0out),
      net1: BigInt(r.a1in) - BigInt(r.a1out),
      reserve0: r.r0 === null ? null : BigInt(r.r0),
      reserve1: r.r1 === null ? null : BigInt(r.r1),
    }));
  };
  const decimalsOf = (pool: { token0Key: string; token1Key: string }): [number, number] => [
    token(pool.token0Key).decimals as number,
    token(pool.token1Key).decimals as number,
  ];

  before(async () => {
    served = await startApiPipeline({
      keyName: "acceptance",
      server: (p) => ({ keyCacheTtlMs: 300, rpcMetrics: p.rpcMetrics }),
    });
    ({ testDb, pipeline, api, key } = served);
    tokens = pipeline.deployment.tokens;
  });
  after(() => served?.close());

  it("answers 403 without a key, with a wrong key and with a revoked key", async () => {
    const { key: doomed } = await createApiKey(testDb.db, "doomed");
    const query = { asset_ids: id(token("WETH").address) };
    assert.equal((await api.get("/api/v1/assets", query, { key: doomed })).status, 200);
    await testDb.db.query("UPDATE api_keys SET revoked_at = now() WHERE name = 'doomed'");
    await new Promise((resolve) => setTimeout(resolve, 350));
    assertError(await api.get("/api/v1/assets", query, { key: doomed }), 403);
    assertError(await api.get("/api/v1/assets", query, { key: null }), 403);
    assertError(await api.get("/api/v1/assets", query, { key: "tm_not_a_key_not_a_key_not_a_key" }), 403);
  });

  it("search ranks the real USDC before the look-alike, with local logos", async () => {
    const answer = await api.get("/v1/tokens/search", { searchString: "usdc" });
    assert.equal(answer.status, 200);
    const found = answer.body as Row[];
    const contracts = found.map((t) => t.contract);
    const real = contracts.indexOf(token("USDC").address);
    const fake = contracts.indexOf(token("FAKEUSDC").address);
    assert.ok(real === 0 && fake > real, `real USDC first, look-alike after: ${JSON.stringify(contracts)}`);
    const first = found[0] as Row;
    assert.equal(first.chain, String(chain));
    assert.equal(first.usd_price, 1);
    const info = first.project_info as Row;
    assert.equal(info.logo_url, "/logos/usdc.svg");
    assert.deepEqual((found[fake] as Row).project_info, {
      website: null,
      logo_url: null,
      twitter: null,
      discord: null,
    });
    const logo = await fetch(`${api.base}/logos/usdc.svg`);
    assert.equal(logo.status, 200);
    assert.equal(logo.headers.get("content-type"), "image/svg+xml");
    assert.match(await logo.text(), /^<svg /);
    assert.equal(answer.headers.get("x-indexed-block")?.split("=")[0], String(chain));
  });

  it("metadata answers an object for one id and an array for several; assets answer integer chains", async () => {
    const one = await api.get("/v1/tokens/metadata", { tokenId: id(token("MKR").address) });
    const mkr = one.body as Row;
    assert.ok(!Array.isArray(mkr));
    assert.equal(mkr.contract, undefined);
    assert.equal(mkr.project_info, undefined);
    assert.equal(mkr.name, "Maker", "bytes32 metadata decoded");
    assert.equal(mkr.chain, String(chain));
    assert.equal(typeof mkr.usd_price, "number");
    assert.equal(typeof mkr.total_supply, "number");
    const several = await api.get("/v1/tokens/metadata", {
      tokenId: [token("NODEC").address, token("WETH").address].map(id).join(","),
    });
    const list = several.body as Row[];
    assert.deepEqual(
      list.map((t) => t.contract),
      [token("NODEC").address, token("WETH").address],
    );
    assert.equal((list[0] as Row).decimals, null, "NODEC's decimals() reverts");
    const assets = await api.get("/api/v1/assets", {
      asset_ids: [token("WETH").address, token("DUST").address, token("KIBL").address].map(id).join(","),
    });
    const [weth, dust, kibl] = assets.body as Row[];
    assert.equal(weth?.chain, chain);
    assert.ok((weth?.usd_price as number) > 100, "WETH is priced in USD");
    assert.equal(dust?.usd_price, null, "DUST's only pool is below the liquidity floor: no price, never 0");
    assert.ok((kibl?.usd_price as number) > 0, "KIBL is priced through WETH (two hops)");
  });

  it("assets: every token's USD price is the documented routing's at the head, bit for bit", async () => {
    // The reference (src/_test/reference-prices.ts) routes from the stored raw rows alone: WETH is
    // the weighted mean of its stablecoin pools, KIBL a two-hop route through WETH, DUST below the
    // floor, NODEC without decimals.
    const { prices } = await referenceMarket(testDb.db, chain, referenceConfigOf(pipeline.config, chain));
    const all = Object.values(tokens);
    const answer = await api.get("/api/v1/assets", { asset_ids: all.map((t) => id(t.address)).join(",") });
    const rows = answer.body as Row[];
    assert.deepEqual(
      rows.map((r) => r.contract),
      all.map((t) => t.address),
      "every deployed token",
    );
    const wrong = rows.flatMap((r) => {
      const want = prices.get(String(r.contract).toLowerCase())?.usdDouble ?? null;
      return Object.is(r.usd_price, want) ? [] : [`${r.contract}: ${r.usd_price} vs ${want}`];
    });
    assert.deepEqual(wrong, [], "every USD price bit for bit");
    assert.ok(
      (prices.get(token("KIBL").address.toLowerCase())?.usdDouble ?? 0) > 0,
      "KIBL is priced (two hops)",
    );
    assert.equal(prices.get(token("DUST").address.toLowerCase()), undefined, "DUST is not");
  });

  it("line chart: hourly ISO labels, one price each; 404 for a token with no qualifying trade", async () => {
    const answer = await api.get("/v1/tokens/line-chart", { tokenId: id(token("WETH").address), days: 2 });
    const chart = answer.body as { labels: string[]; data: number[] };
    // Up to the current hour, from the first hour with a price within the last 48 (how early WETH
    // first traded in the range follows the simulated day, not asserted).
    const lastHour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    assert.ok(chart.labels.length > 0 && chart.labels.length <= 48, `${chart.labels.length} hours`);
    assert.ok(
      [lastHour, lastHour - 3_600_000].includes(Date.parse(chart.labels[chart.labels.length - 1] as string)),
      "the last label is the current hour",
    );
    assert.equal(chart.labels.length, chart.data.length);
    for (let i = 1; i < chart.labels.length; i++) {
      assert.equal(
        Date.parse(chart.labels[i] as string) - Date.parse(chart.labels[i - 1] as string),
        3_600_000,
      );
    }
    assert.ok(chart.labels.every(isIso) && chart.data.every((p) => p > 100));
    assertError(await api.get("/v1/tokens/line-chart", { tokenId: id(token("DUST").address), days: 1 }), 404);
    assertError(
      await api.get("/v1/tokens/line-chart", { tokenId: id(token("WETH").address), days: 91 }),
      400,
      /days/,
    );
  });

  it("deprecated candle chart: ascending USD candles with Deprecation and Link headers", async () => {
    const answer = await api.get("/v1/tokens/candle-chart", {
      tokenId: id(token("WETH").address),
      days: 2,
      interval: 60,
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get("deprecation"), "@1735689600");
    assert.match(answer.headers.get("link") ?? "", /<\/api\/v1\/candles>; rel="successor-version"/);
    const candles = answer.body as {
      _id: { token_id: string; date: string };
      h: number;
      l: number;
      o: number;
      c: number;
      v: number;
    }[];
    assert.ok(candles.length > 0, "WETH traded in the last two days");
    for (const [i, c] of candles.entries()) {
      assert.equal(c._id.token_id, id(token("WETH").address));
      assert.ok(c.l <= Math.min(c.o, c.c) && c.h >= Math.max(c.o, c.c));
      if (i > 0)
        assert.ok(
          Date.parse(c._id.date) > Date.parse((candles[i - 1] as { _id: { date: string } })._id.date),
        );
    }
    assertError(
      await api.get("/v1/tokens/candle-chart", { tokenId: id(token("WETH").address), days: 2, interval: 45 }),
      400,
    );
  });

  describe("candles", () => {
    const pair = () => poolOf("v2:LINK/USDC");
    const range = () => ({
      from: new Date(pipeline.until.getTime() - 36 * 3_600_000).toISOString(),
      to: pipeline.until.toISOString(),
    });
    const candles = async (asset: string, interval: string, r = range()) =>
      api.get("/api/v1/candles", { asset_id: id(asset), pair_id: id(pair().address), interval, ...r });

    it("are ascending, with empty intervals carrying the previous close at volume 0", async () => {
      const r = range();
      const answer = await candles(pair().token0, "5m", r);
      const list = answer.body as Candle[];
      // From the interval of the first trade in range to the last one starting before `to`; which
      // intervals traded follows from the stored swaps (the simulated activity varies with the day).
      const traded = [
        ...referenceCandles(await rawSwaps(pair().address), 0, decimalsOf(pair()), 300).keys(),
      ].filter((b) => b >= Math.floor(Date.parse(r.from) / 300_000) * 300_000 && b < Date.parse(r.to));
      assert.ok(traded.length > 0, "the pair traded in the range");
      const last = Math.ceil(Date.parse(r.to) / 300_000) * 300_000 - 300_000;
      const first = traded[0] as number;
      assert.equal(
        list.length,
        (last - first) / 300_000 + 1,
        "every interval from the first trade's to `to`",
      );
      assert.deepEqual(
        list.filter((c) => c.volume > 0).map((c) => c.time),
        traded,
        "the intervals with trades",
      );
      let gaps = 0;
      for (const [i, c] of list.entries()) {
        assert.equal(new Date(c.time).toISOString().replace(".000Z", "Z"), c.date);
        assert.equal(c.time % 300_000, 0, "aligned to the interval");
        if (i === 0) continue;
        const previous = list[i - 1] as Candle;
        assert.equal(c.time - previous.time, 300_000, "no interval missing");
        if (c.volume === 0) {
          gaps += 1;
          assert.deepEqual([c.open, c.high, c.low, c.close], Array(4).fill(previous.close));
        }
      }
      assert.equal(gaps, list.length - traded.length, "every other interval is empty");
    });

    it("are reciprocal between the two sides of the pair, each side's prices exact", async () => {
      const side0 = (await candles(pair().token0, "1h")).body as Candle[];
      const side1 = (await candles(pair().token1, "1h")).body as Candle[];
      assert.ok(side0.length > 0, "the range holds candles");
      assert.equal(side0.length, side1.length);
      const swaps = await rawSwaps(pair().address);
      // Each side against its own exact prices from the raw amounts, rounded once: side 1 is the
      // exact reciprocal of each trade's price, not 1 / x of side 0's rounded double.
      const reference = [0, 1].map((side) =>
        referenceCandles(swaps, side as 0 | 1, decimalsOf(pair()), 3600),
      );
      let traded = 0;
      for (const [i, a] of side0.entries()) {
        const b = side1[i] as Candle;
        assert.equal(a.time, b.time);
        assert.equal(a.volume === 0, b.volume === 0);
        if (a.volume === 0) continue;
        traded += 1;
        for (const [side, c] of [a, b].entries()) {
          const e = reference[side]?.get(c.time);
          assert.ok(e, `side ${side}: a traded hour ${c.date}`);
          assert.deepEqual(
            { open: c.open, high: c.high, low: c.low, close: c.close },
            { open: e.open, high: e.high, low: e.low, close: e.close },
            `side ${side} ${c.date}: OHLC bit for bit`,
          );
        }
      }
      assert.ok(traded > 0, "the range holds a traded hour");
    });

    it("carry each side's volume as the exact sum of its raw amounts, rounded once", async () => {
      const swaps = await rawSwaps(pair().address);
      for (const side of [0, 1] as const) {
        const list = (await candles(side === 0 ? pair().token0 : pair().token1, "1h")).body as Candle[];
        const reference = referenceCandles(swaps, side, decimalsOf(pair()), 3600);
        const decimals = decimalsOf(pair())[side];
        const wrong = list
          .filter((c) => c.volume > 0)
          .filter((c) => !Object.is(c.volume, unitsOf(reference.get(c.time)?.raw ?? -1n, decimals)))
          .map((c) => `${c.date}: ${c.volume}`);
        assert.deepEqual(wrong, [], `side ${side}: every traded hour's volume bit for bit`);
      }
    });

    it("answer 404 for a range without trades and 400 past 5,000 candles", async () => {
      assertError(
        await candles(pair().token0, "1h", { from: "2020-01-01T00:00:00Z", to: "2020-01-02T00:00:00Z" }),
        404,
      );
      assertError(
        await candles(pair().token0, "1m", { from: "2020-01-01T00:00:00Z", to: "2020-01-05T00:00:00Z" }),
        400,
        /at most 5000/,
      );
      assertError(await candles(token("WETH").address, "1h"), 400, /not one of the two tokens/);
    });
  });

  describe("trades", () => {
    const pool = () => poolOf("v2:WETH/USDC");
    type Trade = Row & {
      block_number: number;
      log_index: number;
      side: "buy" | "sell";
      price: number | null;
    };
    const trades = (asset: string, extra: Record<string, string | number> = {}) =>
      api.get("/api/v1/trades", { asset_id: id(asset), pair_id: id(pool().address), ...extra });

    it("are newest first with every field typed as specified", async () => {
      const answer = await trades(pool().token0);
      const list = answer.body as Trade[];
      const stored = await rawSwaps(pool().address);
      assert.ok(stored.length > 0, "the pool traded");
      assert.equal(list.length, Math.min(100, stored.length), "a page of 100 by default, or every trade");
      for (const [i, t] of list.entries()) {
        assert.equal(t.pair_id, id(pool().address));
        assert.equal(t.chain, chain);
        assert.ok(isIso(t.date));
        for (const field of [
          "token0_amount",
          "token1_amount",
          "token0_reserves",
          "token1_reserves",
          "volume",
          "price",
        ]) {
          assert.equal(typeof t[field], "number", field);
          assert.ok((t[field] as number) > 0, `${field} is positive`);
        }
        assert.ok(["buy", "sell"].includes(t.side));
        assert.match(String(t.maker), /^0x[0-9a-f]{40}$/);
        assert.match(String(t.exchange), /^0x[0-9a-f]{40}$/);
        assert.equal(t.factory_address, pipeline.deployment.v2.factory);
        if (i > 0) {
          const p = list[i - 1] as Trade;
          assert.ok(
            p.block_number > t.block_number ||
              (p.block_number === t.block_number && p.log_index > t.log_index),
          );
        }
      }
    });

    it("flip side when the other token is asked, with the exact reciprocal price", async () => {
      const stored = await rawSwaps(pool().address);
      const byKey = new Map(stored.map((s) => [`${s.block}.${s.logIndex}`, s]));
      const limit = Math.min(50, stored.length);
      assert.ok(limit > 0, "the pool traded");
      const a = (await trades(pool().token0, { limit })).body as Trade[];
      const b = (await trades(pool().token1, { limit })).body as Trade[];
      assert.equal(a.length, limit);
      assert.equal(b.length, limit);
      const [d0, d1] = decimalsOf(pool());
      for (const [i, t] of a.entries()) {
        const u = b[i] as Trade;
        assert.equal(t.hash, u.hash);
        assert.notEqual(t.side, u.side);
        const s = byKey.get(`${t.block_number}.${t.log_index}`);
        assert.ok(s && isTrade(s), `a stored trade ${t.block_number}.${t.log_index}`);
        // Seen from token0: token0 in token1; from token1: token1 in token0, each from the raw
        // amounts and rounded once (never 1 / the other's double).
        assert.equal(t.price, referencePrice(s, 0, d0, d1), "token0's price in token1");
        assert.equal(u.price, referencePrice(s, 1, d0, d1), "token1's price in token0");
        for (const r of [t, u]) {
          assert.equal(r.token0_amount, unitsOf(abs(s.net0), d0), "token0 amount");
          assert.equal(r.token1_amount, unitsOf(abs(s.net1), d1), "token1 amount");
          assert.equal(
            r.token0_reserves,
            unitsOf(s.reserve0 as bigint, d0),
            "token0 reserves after the swap",
          );
          assert.equal(
            r.token1_reserves,
            unitsOf(s.reserve1 as bigint, d1),
            "token1 reserves after the swap",
          );
        }
      }
    });

    it("page through every trade with the cursor, without overlap or gap", async () => {
      const { rows } = await testDb.db.query<{ block_number: number; log_index: number }>(
        "SELECT block_number, log_index FROM swaps WHERE chain_id = $1 AND pool = $2 ORDER BY block_number DESC, log_index DESC",
        [chain, pool().address],
      );
      const expected = rows.map((r) => `${r.block_number}.${r.log_index}`);
      // The count varies with the calendar (the simulated market is quieter at weekends): pages of
      // a third of it (less one) make at least three full pages and a partial last one from 8
      // trades on; fewer make a page each.
      assert.ok(expected.length > 0, "the pool traded");
      const limit = Math.max(1, Math.floor(expected.length / 3) - 1);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const answer = await trades(pool().token1, cursor ? { limit, cursor } : { limit });
        seen.push(...(answer.body as Trade[]).map((t) => `${t.block_number}.${t.log_index}`));
        cursor = answer.headers.get("x-next-cursor");
        pages += 1;
      } while (cursor && pages < 1000);
      assert.ok(pages >= Math.ceil(expected.length / limit), `${pages} pages of ${limit}`);
      assert.deepEqual(seen, expected);
    });
  });

  it("pairs: the pairs of WETH by 24 h volume; [] for an unknown token", async () => {
    const answer = await api.get("/api/v1/pairs", { asset_id: id(token("WETH").address) });
    const pairs = answer.body as Row[];
    const weth = token("WETH").address;
    // By address: a V4 pool against the native coin has WETH's key but holds ETH, not WETH.
    const wethPools = pipeline.deployment.pools.filter((p) => p.token0 === weth || p.token1 === weth);
    assert.equal(pairs.length, Math.min(100, wethPools.length), "every pool holding WETH (at most 100)");
    for (const [i, p] of pairs.entries()) {
      assert.ok([p.token0_address, p.token1_address].includes(id(token("WETH").address)));
      assert.ok(["Uniswap V2", "Uniswap V3", "Uniswap V4"].includes(p.factory_name as string));
      if (i > 0) assert.ok(((pairs[i - 1] as Row).volume as number) >= (p.volume as number));
    }
    assert.deepEqual(
      (await api.get("/api/v1/pairs", { asset_id: id(pipeline.deployment.v2.router) })).body,
      [],
    );
  });

  it("coin price: decimal strings of the reference token's price", async () => {
    const eth = (await api.get("/v1/coins/price", { symbol: "ETH" })).body as {
      price: string;
      change: string | null;
    };
    assert.match(eth.price, /^\d+(\.\d+)?$/);
    const weth = (
      (await api.get("/api/v1/assets", { asset_ids: id(token("WETH").address) })).body as Row[]
    )[0] as Row;
    assert.equal(Number(eth.price), weth.usd_price);
    assertError(await api.get("/v1/coins/price", { symbol: "DOGE" }), 400, /not a known coin/);
  });

  it("price provenance: pools and confidence of the price", async () => {
    const answer = await api.get("/v1/tokens/price-provenance", { tokenId: id(token("KIBL").address) });
    const body = answer.body as { usd_price: number; provenance: Row };
    assert.ok(body.usd_price > 0);
    assert.ok(typeof body.provenance === "object" && Object.keys(body.provenance).length > 0);
  });

  describe("wallet balances", () => {
    it("reads balances at the head in one batch, with their sum", async () => {
      const wallets = pipeline.wallets.slice(0, 5);
      const answer = await api.get("/v1/wallets/token-balances", {
        contract: token("USDC").address,
        chain,
        wallets: wallets.join(","),
      });
      const body = answer.body as {
        walletBalances: { walletAddress: string; balance: number }[];
        cumulativeBalance: number;
      };
      assert.deepEqual(
        body.walletBalances.map((w) => w.walletAddress),
        wallets,
      );
      assert.ok(body.walletBalances.every((w) => w.balance > 0));
      assert.match(answer.headers.get("x-balances-block") ?? "", /^31337=\d+$/);
      // Against the node's own raw balances at the block the answer names: each one and their sum
      // exact, rounded once (the sum of the raw integers, not of the rounded balances).
      const block = `0x${Number(answer.headers.get("x-balances-block")?.split("=")[1]).toString(16)}`;
      const rpc = createDevnetRpc(pipeline.rpcUrl);
      const raw = await Promise.all(
        wallets.map(async (wallet) =>
          BigInt(
            await rpc.request<string>("eth_call", [
              {
                to: token("USDC").address,
                data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [wallet] }),
              },
              block,
            ]),
          ),
        ),
      );
      const decimals = token("USDC").decimals as number;
      assert.deepEqual(
        body.walletBalances.map((w) => w.balance),
        raw.map((r) => unitsOf(r, decimals)),
        "each balance: raw / 10^decimals, rounded once",
      );
      assert.equal(
        body.cumulativeBalance,
        unitsOf(
          raw.reduce((a, b) => a + b, 0n),
          decimals,
        ),
        "the exact sum of the raw balances, rounded once",
      );
      assert.equal(answer.headers.get("deprecation"), "@1735689600");
    });

    it("answers 400 for a contract that is not a token and 503 without the RPC URL when the node is down", async () => {
      assertError(
        await api.get("/v1/wallets/token-balances", {
          contract: pipeline.deployment.v2.factory,
          chain,
          wallets: pipeline.wallets[0] as string,
        }),
        400,
        /not an ERC-20 token/,
      );
      // Nothing listens at a free port: the node refuses the connection (port 9, say, would be
      // refused by fetch itself as a blocked port, without ever reaching a node).
      const deadUrl = `http://127.0.0.1:${await freePort()}/secret-path`;
      const deadConfig: Config = {
        ...pipeline.config,
        chains: pipeline.config.chains.map((c) => ({ ...c, rpc: [deadUrl] })),
      };
      const { app: dead, api: client } = await listenApi(
        { config: deadConfig, db: testDb.db, logger: createSilentLogger() },
        key,
      );
      try {
        const answer = await client.get("/v1/wallets/token-balances", {
          contract: token("USDC").address,
          chain,
          wallets: pipeline.wallets[0] as string,
        });
        // A node that cannot be reached is a gateway failure with Retry-After (docs/API.md).
        assertError(
          answer,
          503,
          /^could not read balances from network 31337 \(Devnet\): its node could not be reached: it refused the connection; try again later$/,
        );
        assert.equal(answer.headers.get("retry-after"), "5");
        assert.doesNotMatch(answer.text, /secret-path|127\.0\.0\.1/);
      } finally {
        await dead.close();
      }
    });
  });

  it("readiness and metrics reflect the indexer", async () => {
    const ready = await api.get("/readyz", {}, { key: null });
    assert.equal(ready.status, 200, ready.text);
    const metrics = await api.get("/metrics", {}, { key: null });
    assert.match(metrics.text, /tokenmarket_indexer_lag_blocks\{chain_id="31337"\} 0/);
    // One set of RPC metrics (as `npm start` wires it): the indexer's calls and the API's balance
    // reads in the same series (two registries with these names could not even be merged).
    const calls = (text: string, method: string) =>
      Number(
        new RegExp(`tokenmarket_rpc_calls_total\\{chain_id="31337",method="${method}"\\} (\\d+)`).exec(
          text,
        )?.[1] ?? 0,
      );
    assert.ok(calls(metrics.text, "eth_getLogs") > 0, "the indexer's eth_getLogs calls");
    const wallets = pipeline.wallets.slice(0, 3);
    const read = await api.get("/v1/wallets/token-balances", {
      contract: token("USDC").address,
      chain,
      wallets: wallets.join(","),
    });
    assert.equal(read.status, 200, read.text);
    const later = (await api.get("/metrics", {}, { key: null })).text;
    // decimals() and three balanceOf() as one JSON-RPC batch (no Multicall3 on this devnet).
    assert.ok(calls(later, "eth_call") - calls(metrics.text, "eth_call") >= wallets.length + 1);
  });

  it("answers each data operation's Try it out (the document's own examples) with data", async () => {
    // The examples of /openapi.json are ids of the demo devnet, which deploys the same addresses
    // as this one: "Try it out" in /docs must answer 200 with something to show.
    const range = { from: new Date(pipeline.until.getTime() - 86_400_000), to: pipeline.until };
    let tried = 0;
    for (const operation of operationsOf(api.document)) {
      if (!operation.security || !operation.responses["200"]?.content?.["application/json"]) continue;
      const { query, missing } = exampleQuery(operation, range);
      const request = `${operation.method} ${operation.path}?${new URLSearchParams(query)}`;
      assert.deepEqual(missing, [], `${request}: every required parameter has an example`);
      const answer = await api.get(operation.path, query);
      assert.equal(answer.status, 200, `${request}: ${answer.text}`);
      if (Array.isArray(answer.body)) assert.ok(answer.body.length > 0, `${request} answers data`);
      tried += 1;
    }
    assert.ok(tried >= 11, `${tried} operations tried`);
  });

  it("startApi serves /api/v1/ on its own listener when api.dataPort is set", async () => {
    const config: Config = { ...pipeline.config, api: { ...pipeline.config.api, port: 0, dataPort: 0 } };
    const running = await startApi({ config, db: testDb.db, logger: createSilentLogger() });
    try {
      assert.notEqual(running.urls.base, running.urls.data);
      const headers = { "x-api-key": key };
      const assets = `/api/v1/assets?asset_ids=${id(token("WETH").address)}`;
      assert.equal((await fetch(`${running.urls.data}${assets}`, { headers })).status, 200);
      assert.equal((await fetch(`${running.urls.base}${assets}`, { headers })).status, 404);
      assert.equal((await fetch(`${running.urls.base}/v1/coins/price?symbol=ETH`, { headers })).status, 200);
      assert.equal((await fetch(`${running.urls.data}/v1/coins/price?symbol=ETH`, { headers })).status, 404);
      assert.equal((await fetch(`${running.urls.data}/healthz`)).status, 200);
    } finally {
      await running.close();
    }
  });
});
