/**
 * Every DEX family of the demo, over real HTTP, against the node's own logs: the devnet market
 * with a simulated day (a fixed date and seed, so the history is the same at every run), indexed
 * and priced, served by the API. The pools are found from their creation events on the node
 * (src/_test/log-decoder.ts: V2 factories, V3 factories, the V4 PoolManager's `Initialize`,
 * Algebra factories), so a family or pool added to the demo is covered without editing this file.
 *
 * - every `/api/v1/trades` record of every pool, seen from either token (price, side, amounts,
 *   block, log index, time, transaction, maker, exchange, the hook flag; the reserves of the
 *   pools that hold their own tokens, from the tokens' `Transfer` logs) equals the independent
 *   decoding of the logs, exact rationals rounded once, bit for bit;
 * - every candle of every pool at 1m, 1h and 1d, from either token, likewise;
 * - a token that trades only on a V4 pool against the native coin has a USD price, pairs, a line
 *   chart, candles and a search hit; the native coin answers the wrapped native token's price;
 *   a return-delta hook pool pushed 10× by one trade moves no USD price. The USD prices are
 *   compared with an independent routing of the stored rows (src/_test/reference-prices.ts).
 */
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Address, Hex } from "viem";
import { type ApiClient, type ApiPipeline, startApiPipeline } from "../_test/api-server.js";
import type { TestDb } from "../_test/db.js";
import {
  type ChainPool,
  decodeSwaps,
  discoverPools,
  expectedCandles,
  expectedTrade,
  isoOf,
  jsonRpc,
  NATIVE_ADDRESS,
} from "../_test/log-decoder.js";
import type { Pipeline } from "../_test/pipeline.js";
import { type ReferencePrice, referenceConfigOf, referenceMarket } from "../_test/reference-prices.js";
import { v4KeyOf } from "../devnet/deploy.js";
import { decodePoolStates, poolRawPrice, poolStateCalls } from "../devnet/pool-state.js";
import { createDevnetRpc } from "../devnet/rpc.js";
import { executeTransactions, readNonces } from "../devnet/transactions.js";
import { v4SwapTx } from "../devnet/v4.js";

type Row = Record<string, unknown>;

const CHAIN = 31337;
/** The end of the demo's history: a fixed instant, so that the same trades are written each run. */
const UNTIL = Date.parse("2026-03-04T12:00:00Z");
/** The API's clock: a day after the history (line charts and candle gaps read it). */
const API_NOW = UNTIL + 86_400_000;
const INTERVALS = { "1m": 60, "1h": 3600, "1d": 86_400 } as const;
const id = (address: string) => `${address}:${CHAIN}`;

describe("every DEX family on the demo: trades and candles equal the node's logs, bit for bit", () => {
  let testDb: TestDb;
  let pipeline: Pipeline;
  let served: ApiPipeline | undefined;
  let api: ApiClient;
  const rpc = () => jsonRpc(pipeline.rpcUrl);

  before(async () => {
    served = await startApiPipeline({
      keyName: "families",
      pipeline: { historyDays: 1, until: new Date(UNTIL) },
      server: () => ({ now: () => new Date(API_NOW) }),
    });
    ({ testDb, pipeline, api } = served);
  });
  after(() => served?.close());

  /** The chain as the node holds it now, decoded: pools and every swap, once the index is there. */
  const chainNow = async () => {
    const head = Number(await rpc().call<Hex>("eth_blockNumber", []));
    await pipeline.waitIndexed(head);
    const pools = await discoverPools(rpc(), head);
    const swaps = await decodeSwaps(rpc(), pools, head);
    return { head, pools, swaps };
  };

  const get = async (path: string, query: Record<string, string | number>) => {
    const answer = await api.get(path, query);
    assert.equal(answer.status, 200, `${path} ${JSON.stringify(query)}: ${answer.text}`);
    return answer.body;
  };

  const reference = async () =>
    (await referenceMarket(testDb.db, CHAIN, referenceConfigOf(pipeline.config, CHAIN))).prices;
  const usdOf = (prices: Map<string, ReferencePrice>, token: string) => prices.get(token)?.usdDouble ?? null;

  /** The USD prices /api/v1/assets answers, by token address. */
  const assetPrices = async (tokens: readonly string[]) => {
    const rows = (await get("/api/v1/assets", { asset_ids: tokens.map(id).join(",") })) as Row[];
    return new Map(rows.map((r) => [String(r.contract), r.usd_price as number | null]));
  };

  it("finds every family on the node (V2, V3, V4: native coin, no hook, a hook, a return-delta hook) and the API lists each pool", async () => {
    const { pools, swaps } = await chainNow();
    const v4 = pools.filter((p) => p.family === "uniswap-v4");
    assert.ok(
      pools.some((p) => p.family === "uniswap-v2"),
      "V2 pairs",
    );
    assert.ok(
      pools.some((p) => p.family === "uniswap-v3"),
      "V3 pools",
    );
    assert.ok(
      v4.some((p) => p.token0 === NATIVE_ADDRESS),
      "a V4 pool of the native coin",
    );
    assert.ok(
      v4.some((p) => p.hooks === NATIVE_ADDRESS),
      "a V4 pool without a hook",
    );
    assert.ok(
      v4.some((p) => p.hooks !== NATIVE_ADDRESS && !p.rewritesAmounts),
      "a V4 hook without deltas",
    );
    assert.ok(
      v4.some((p) => p.rewritesAmounts),
      "a V4 hook with return deltas",
    );
    // Each configured DEX created pools that the node's events show (a family the demo adds
    // is thus covered: its factory must have emitted them).
    for (const dex of pipeline.config.chains[0]?.dexes ?? []) {
      assert.ok(
        pools.some((p) => p.factory === dex.factory.toLowerCase()),
        `${dex.name}: pools created by ${dex.factory}`,
      );
    }
    for (const pool of pools) {
      assert.ok(
        swaps.some((s) => s.pool === pool.id),
        `${pool.family} ${pool.id} traded in the history`,
      );
    }
    // The API's pair listing of every token holds exactly the pools the node created.
    const tokens = [...new Set(pools.flatMap((p) => [p.token0, p.token1]))];
    const listed = new Set<string>();
    for (const token of tokens) {
      const pairs = (await get("/api/v1/pairs", { asset_id: id(token), limit: 1000 })) as Row[];
      for (const pair of pairs) listed.add(String(pair.pair_id));
    }
    assert.deepEqual([...listed].sort(), pools.map((p) => id(p.id)).sort());
  });

  it("a return-delta hook pool pushed 10x by one trade moves no USD price; its trade is listed, flagged", async () => {
    const { pools, swaps } = await chainNow();
    const target = pools.find((p) => p.rewritesAmounts);
    assert.ok(target, "a pool whose hook may return deltas");
    const tokens = [...new Set(pools.flatMap((p) => [p.token0, p.token1]))];
    const before = await assetPrices(tokens);
    const provenanceNames = async () => {
      const named: string[] = [];
      for (const token of tokens) {
        const answer = await api.get("/v1/tokens/price-provenance", { tokenId: id(token) });
        if (answer.status === 404) continue;
        const provenance = (answer.body as { provenance: { pools?: Row[]; dropped?: Row[] } }).provenance;
        for (const p of [...(provenance.pools ?? []), ...(provenance.dropped ?? [])])
          named.push(String(p.pool));
      }
      return named;
    };
    assert.ok(!(await provenanceNames()).includes(target.id), "the hook pool never quotes a price");

    // Token1 in raises the price of token0 in token1: Δy = L·(√(10P) − √P), 5 % more for the fee.
    const deployed = pipeline.deployment.pools.find((p) => p.address.toLowerCase() === target.id);
    assert.ok(deployed);
    const devnetRpc = createDevnetRpc(pipeline.rpcUrl);
    const state = decodePoolStates([deployed], await devnetRpc.batch<Hex>(poolStateCalls([deployed]))).get(
      deployed.key,
    );
    assert.ok(state?.protocol === "v3");
    const sqrtP = Math.sqrt(poolRawPrice(state));
    const amountIn = BigInt(Math.ceil(Number(state.liquidity) * sqrtP * (Math.sqrt(10) - 1) * 1.05));
    const trader = pipeline.deployment.accounts.traders[0] as Address;
    const lastTime = Math.max(...swaps.map((s) => s.time)) / 1000;
    await devnetRpc.request("evm_setAutomine", [false]);
    const [receipt] = await executeTransactions(
      devnetRpc,
      await readNonces(devnetRpc, [trader]),
      [
        v4SwapTx({
          router: pipeline.deployment.v4.swapRouter,
          from: trader,
          key: v4KeyOf(deployed),
          zeroForOne: false,
          amountIn,
        }),
      ],
      { timestamp: lastTime + 60 },
    );
    assert.ok(receipt);
    const after = await chainNow();
    const push = after.swaps.find((s) => s.hash === receipt.transactionHash.toLowerCase());
    assert.ok(push?.sqrtPriceX96, "the push's Swap event");
    // Pushed tenfold, exactly: sqrtPriceX96 after² ≥ 10 × sqrtPriceX96 before².
    assert.ok(push.sqrtPriceX96 ** 2n >= 10n * state.sqrtPriceX96 ** 2n, "the pool's price moved 10x");

    assert.deepEqual(await assetPrices(tokens), before, "no USD price moved");
    assert.ok(!(await provenanceNames()).includes(target.id), "the hook pool never quotes a price");
    // And each is the independent routing's, which never takes a return-delta hook pool.
    const prices = await reference();
    const answered = await assetPrices(tokens);
    for (const token of tokens)
      assert.equal(answered.get(token), usdOf(prices, token), `${token}'s USD price`);

    const trades = (await get("/api/v1/trades", {
      asset_id: id(target.token0),
      pair_id: id(target.id),
      limit: 5,
    })) as Row[];
    const listed = trades.find((t) => t.hash === push.hash);
    assert.ok(listed, "the push is listed");
    assert.equal(listed.hook_may_rewrite_amounts, true);
  });

  it("a token that trades only on a V4 native-coin pool has a USD price, pairs, a line chart, candles and a search hit", async () => {
    const { pools, swaps } = await chainNow();
    const poolsOf = (token: string) => pools.filter((p) => p.token0 === token || p.token1 === token);
    const nativeOnly = [...new Set(pools.flatMap((p) => [p.token0, p.token1]))].filter(
      (token) =>
        token !== NATIVE_ADDRESS &&
        poolsOf(token).every((p) => p.family === "uniswap-v4" && p.token0 === NATIVE_ADDRESS),
    );
    assert.ok(nativeOnly.length > 0, "a token traded only against the native coin on V4");
    const prices = await reference();
    for (const token of nativeOnly) {
      const usd = usdOf(prices, token);
      assert.ok(usd !== null && usd > 0, `${token} has a reference USD price`);
      assert.equal((await assetPrices([token])).get(token), usd, "/api/v1/assets: the exact USD price");
      const metadata = (await get("/v1/tokens/metadata", { tokenId: id(token) })) as Row;
      assert.equal(metadata.usd_price, usd, "/v1/tokens/metadata");

      const pairs = (await get("/api/v1/pairs", { asset_id: id(token) })) as Row[];
      assert.deepEqual(
        pairs.map((p) => p.pair_id).sort(),
        poolsOf(token)
          .map((p) => id(p.id))
          .sort(),
      );
      for (const pair of pairs) {
        const prices0 = [pair.token0_address, pair.token0_price];
        const prices1 = [pair.token1_address, pair.token1_price];
        assert.deepEqual(prices0, [id(NATIVE_ADDRESS), usdOf(prices, NATIVE_ADDRESS)]);
        assert.deepEqual(prices1, [id(token), usd]);
      }

      for (const hit of [token, String(metadata.symbol)]) {
        const found = (await get("/v1/tokens/search", { searchString: hit })) as Row[];
        const record = found.find((t) => t.contract === token);
        assert.ok(record, `search "${hit}" finds it`);
        assert.equal(record.usd_price, usd);
      }

      const chart = (await get("/v1/tokens/line-chart", { tokenId: id(token), days: 2 })) as {
        labels: string[];
        data: number[];
      };
      assert.ok(chart.data.length > 0 && chart.data.length === chart.labels.length);
      assert.ok(chart.data.every((v) => Number.isFinite(v) && v > 0));
      // The last point is the current hour (the API's clock), every hour since the first priced one.
      assert.equal(chart.labels.at(-1), isoOf(Math.floor(API_NOW / 3_600_000) * 3_600_000));

      for (const pool of poolsOf(token)) {
        const from = Math.min(...swaps.map((s) => s.time));
        const to = Math.floor(API_NOW / 3_600_000) * 3_600_000;
        const candles = await get("/api/v1/candles", {
          asset_id: id(token),
          pair_id: id(pool.id),
          interval: "1h",
          from: isoOf(from),
          to: isoOf(to),
        });
        const expected = expectedCandles(pool, swaps, pool.token0 === token, { seconds: 3600, from, to });
        assert.ok(expected.some((c) => c.volume > 0));
        assert.deepEqual(candles, expected);
      }
    }
  });

  it("the native coin answers the wrapped native token's USD price, the reference's", async () => {
    const weth = pipeline.config.chains[0]?.referenceTokens.wrappedNative.toLowerCase() as string;
    const prices = await reference();
    const answered = await assetPrices([NATIVE_ADDRESS, weth]);
    const wethUsd = usdOf(prices, weth);
    assert.ok(wethUsd !== null && wethUsd > 0);
    assert.equal(answered.get(weth), wethUsd);
    assert.equal(answered.get(NATIVE_ADDRESS), wethUsd);
  });

  /** Every trade of a pool from one token's side, newest first, paged through the cursor. */
  const allTrades = async (pool: ChainPool, asset: string) => {
    const out: Row[] = [];
    let cursor: string | null = null;
    for (;;) {
      const query: Record<string, string | number> = {
        asset_id: id(asset),
        pair_id: id(pool.id),
        limit: 1000,
      };
      if (cursor !== null) query.cursor = cursor;
      const answer = await api.get("/api/v1/trades", query);
      assert.equal(answer.status, 200, answer.text);
      out.push(...(answer.body as Row[]));
      cursor = answer.headers.get("x-next-cursor");
      if (cursor === null) return out;
    }
  };

  it("every /api/v1/trades record of every pool, from either token, equals the decoded logs bit for bit", async (t) => {
    const { pools, swaps } = await chainNow();
    const mismatches: string[] = [];
    let compared = 0;
    let withReserves = 0;
    for (const pool of pools) {
      const own = swaps.filter((s) => s.pool === pool.id).reverse();
      for (const asset of [pool.token0, pool.token1]) {
        const records = await allTrades(pool, asset);
        assert.equal(records.length, own.length, `${pool.id}: ${records.length} trades, ${own.length} swaps`);
        own.forEach((swap, i) => {
          const record = records[i] as Row;
          const expected: Record<string, unknown> = expectedTrade(CHAIN, pool, swap, asset === pool.token0);
          assert.equal(Object.hasOwn(record, "hook_may_rewrite_amounts"), pool.rewritesAmounts);
          for (const [field, value] of Object.entries(expected)) {
            if (!Object.is(record[field], value)) {
              mismatches.push(
                `${pool.family} ${pool.id} asset ${asset} block ${swap.block} log ${swap.logIndex}: ${field} ${JSON.stringify(record[field])} ≠ ${JSON.stringify(value)}`,
              );
            }
          }
          compared += 1;
          if (swap.balances !== null) withReserves += 1;
        });
      }
    }
    const families = [...new Set(pools.map((p) => p.family))].map(
      (f) => `${f} ${pools.filter((p) => p.family === f).length}`,
    );
    t.diagnostic(
      `${compared} records (${withReserves} with reserves) of ${pools.length} pools (${families.join(", ")}), ${swaps.length} swaps`,
    );
    assert.deepEqual(mismatches.slice(0, 20), [], `${mismatches.length} mismatches in ${compared} records`);
    assert.ok(compared > 0);
  });

  it("every candle of every pool at 1m, 1h and 1d, from either token, equals the decoded logs bit for bit", async (t) => {
    const { pools, swaps } = await chainNow();
    const first = Math.min(...swaps.map((s) => s.time));
    const last = Math.max(...swaps.map((s) => s.time));
    const mismatches: string[] = [];
    let candles = 0;
    let traded = 0;
    let requests = 0;
    for (const [name, seconds] of Object.entries(INTERVALS)) {
      const size = seconds * 1000;
      // One interval past the last trade's: the gap after a pool's last trade is filled up to it.
      const range = {
        seconds,
        from: Math.floor(first / size) * size,
        to: (Math.floor(last / size) + 2) * size,
      };
      for (const pool of pools) {
        for (const asset of [pool.token0, pool.token1]) {
          const expected = expectedCandles(pool, swaps, asset === pool.token0, range);
          const answer = await api.get("/api/v1/candles", {
            asset_id: id(asset),
            pair_id: id(pool.id),
            interval: name,
            from: isoOf(range.from),
            to: isoOf(range.to),
          });
          const where = `${pool.family} ${pool.id} ${name} asset ${asset}`;
          requests += 1;
          if (expected.length === 0) {
            // No trade with a price (a token whose decimals are unknown): no candle, a 404.
            assert.equal(answer.status, 404, `${where}: ${answer.text}`);
            continue;
          }
          assert.equal(answer.status, 200, `${where}: ${answer.text}`);
          const got = answer.body as Row[];
          if (got.length !== expected.length)
            mismatches.push(`${where}: ${got.length} ≠ ${expected.length} candles`);
          expected.forEach((candle, i) => {
            for (const [field, value] of Object.entries(candle)) {
              const actual = got[i]?.[field];
              if (!Object.is(actual, value)) {
                mismatches.push(
                  `${where} ${candle.date}: ${field} ${JSON.stringify(actual)} ≠ ${JSON.stringify(value)}`,
                );
              }
            }
          });
          candles += expected.length;
          traded += expected.filter((c) => c.volume > 0).length;
        }
      }
    }
    t.diagnostic(`${candles} candles (${traded} with trades), ${requests} requests`);
    assert.deepEqual(mismatches.slice(0, 20), [], `${mismatches.length} mismatches in ${candles} candles`);
    assert.ok(candles > 0);
  });
});
