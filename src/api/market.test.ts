import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Address, Hex } from "viem";
import { type ApiClient, type ApiPipeline, startApiPipeline } from "../_test/api-server.js";
import type { TestDb } from "../_test/db.js";
import type { ApiAnswer } from "../_test/http-client.js";
import {
  type ReferenceSwap,
  type ReferenceWindow,
  referenceSwaps,
  referenceWindows,
} from "../_test/market-reference.js";
import type { Pipeline } from "../_test/pipeline.js";
import { loadSwapsForMarket } from "../_test/sql.js";
import type { Config } from "../config/schema.js";
import { type DeployedPool, peripheryOf } from "../devnet/deploy.js";
import type { TokenKey } from "../devnet/market.js";
import { v2SwapTx, v3SwapTx } from "../devnet/periphery.js";
import { createDevnetRpc } from "../devnet/rpc.js";
import { executeTransactions, readNonces } from "../devnet/transactions.js";

/**
 * Market statistics and discovery through real HTTP on the devnet: a day and a bit of simulated
 * trading on the real Uniswap contracts plus trades of our own at chosen times, indexed and
 * priced; every window of every token and pair checked against an independent computation from
 * the stored swaps (src/_test/market-reference.ts) as the windows slide over a day; the orders of
 * pools/top; a dust pool pushed by one large trade that must not trend; networks, DEXes, and 400s.
 * The pricing's clock is pinned (and only moves forward); answers are not cached.
 */

type Row = Record<string, unknown>;
type Windows = Record<ReferenceWindow, Row>;

const MINUTE = 60_000;
const HOUR = 3_600_000;
const chain = 31337;

function assertError(answer: ApiAnswer, status: number, message: RegExp) {
  assert.equal(answer.status, status, answer.text);
  const body = answer.body as { statusCode: number; message: string };
  assert.equal(body.statusCode, status);
  assert.match(body.message, message);
}

const byAddress = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe("market statistics and discovery over HTTP on the devnet", { timeout: 900_000 }, () => {
  /** The pricing's clock. */
  const clock = { now: Date.now() };
  let served: ApiPipeline | undefined;
  let testDb: TestDb;
  let pipeline: Pipeline;
  let api: ApiClient;
  let config: Config;
  /** The first instant the windows are checked at (the trades of our own lie just before it). */
  let t0 = 0;
  const id = (address: string) => `${address}:${chain}`;
  const token = (key: TokenKey) => pipeline.deployment.tokens[key].address;
  const poolOf = (key: string) => pipeline.deployment.pools.find((p) => p.key === key) as DeployedPool;

  before(async () => {
    served = await startApiPipeline({
      keyName: "market",
      pipeline: { historyDays: 1.05, now: () => new Date(clock.now) },
      server: (p) => {
        const weth = id(p.deployment.tokens.WETH.address);
        config = {
          ...p.config,
          pricing: { ...p.config.pricing, circulatingSupply: { [weth]: 1_000_000 } },
          chains: p.config.chains.map((c) => ({
            ...c,
            nativeSymbol: "ETH",
            explorerUrl: "https://explorer.example",
          })),
        };
        return { config, rpcMetrics: p.rpcMetrics, answerCacheTtlMs: 0 };
      },
    });
    ({ testDb, pipeline, api } = served);
  });
  after(() => served?.close());

  /** Mines blocks at the given times (ms), each with swaps of `usd` dollars of `tokenIn` on a pool. */
  async function mine(
    blocks: { at: number; swaps: { pool: string; tokenIn: TokenKey; usd: number; trader: number }[] }[],
  ) {
    const rpc = createDevnetRpc(pipeline.rpcUrl);
    await rpc.request("evm_setAutomine", [false]);
    const traders = pipeline.deployment.accounts.traders;
    const nonces = await readNonces(rpc, traders);
    const periphery = peripheryOf(pipeline.deployment);
    for (const block of blocks) {
      const txs = block.swaps.map((s) => {
        const pool = poolOf(s.pool);
        const spec = pipeline.deployment.tokens[s.tokenIn];
        const tokenIn = spec.address;
        const tokenOut = (tokenIn === pool.token0 ? pool.token1 : pool.token0) as Address;
        const amountIn = BigInt(Math.floor((s.usd / spec.initialPriceUsd) * 10 ** spec.unitDecimals));
        const common = { periphery, from: traders[s.trader] as Address, path: [tokenIn, tokenOut], amountIn };
        return pool.protocol === "v2" ? v2SwapTx(common) : v3SwapTx({ ...common, fees: [pool.fee] });
      });
      await executeTransactions(rpc, nonces, txs, { timestamp: Math.floor(block.at / 1000) });
    }
    await pipeline.waitIndexed();
  }

  /** Moves the pricing's clock to `at` and slides the statistics there. */
  async function slideTo(at: number) {
    assert.ok(at >= clock.now, "the clock only moves forward");
    clock.now = at;
    await pipeline.pricing.refreshStats(testDb.db, chain, new Date(at));
  }

  async function storedSwaps(): Promise<ReferenceSwap[]> {
    return referenceSwaps(await loadSwapsForMarket(testDb.db, chain));
  }

  async function tokenRecords(): Promise<Row[]> {
    const ids = Object.values(pipeline.deployment.tokens).map((t) => id(t.address));
    const answer = await api.get("/v1/tokens/market", { tokenId: ids.join(",") });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as Row[];
  }

  async function pairRecords(): Promise<Row[]> {
    const ids = pipeline.deployment.pools.map((p) => id(p.address));
    const answer = await api.get("/api/v1/pairs/market", { pair_id: ids.join(",") });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as Row[];
  }

  /**
   * Every token's and pair's record at `at` against the reference from the stored swaps; returns
   * the records (pairs by address) for further checks.
   */
  async function checkWindows(at: number): Promise<{ pairs: Map<string, Row>; swaps: ReferenceSwap[] }> {
    const swaps = await storedSwaps();
    const tokens = await tokenRecords();
    assert.equal(tokens.length, Object.keys(pipeline.deployment.tokens).length, "every token is known");
    for (const record of tokens) {
      const address = record.contract as string;
      // The 24-hour change is to the token's USD price now (docs/API.md).
      const expected = referenceWindows(swaps, { token: address }, at, record.usd_price as number | null);
      assert.deepEqual(record.windows, expected, `${record.symbol} at ${new Date(at).toISOString()}`);
      const own = swaps.filter((s) => s.token0 === address || s.token1 === address);
      assert.equal(
        record.first_trade_at,
        own.length === 0 ? null : new Date(own[0]?.time as number).toISOString().replace(".000Z", "Z"),
      );
      assert.equal(
        record.pools,
        pipeline.deployment.pools.filter((p) => p.token0 === address || p.token1 === address).length,
      );
    }
    const pairs = await pairRecords();
    assert.equal(pairs.length, pipeline.deployment.pools.length, "every pool is known");
    for (const record of pairs) {
      const pool = record.pair_address as string;
      assert.deepEqual(
        record.windows,
        referenceWindows(swaps, { pool }, at),
        `${poolKey(pool)} at ${new Date(at).toISOString()}`,
      );
      const priced = swaps.filter((s) => s.pool === pool && s.price !== null);
      assert.equal(record.price, priced.at(-1)?.price ?? null, "the price after the latest trade");
    }
    return { pairs: new Map(pairs.map((p) => [p.pair_address as string, p])), swaps };
  }

  const poolKey = (address: string) =>
    pipeline.deployment.pools.find((p) => p.address === address)?.key ?? address;

  /** pools/top for every sort: ranks, orders, ties and the records themselves. */
  async function checkTopPools(pairs: Map<string, Row>, swaps: ReferenceSwap[]) {
    const traded = new Set(swaps.map((s) => s.pool));
    const created = new Map(
      (
        await testDb.db.query<{ address: string; created_block: number }>(
          "SELECT address, created_block FROM pools WHERE chain_id = $1",
          [chain],
        )
      ).rows.map((r) => [r.address, Number(r.created_block)]),
    );
    const windowOf = (pool: string, w: ReferenceWindow) => ((pairs.get(pool) as Row).windows as Windows)[w];
    const expected: Record<string, string[]> = {
      volume: [...traded].sort(
        (a, b) =>
          (windowOf(b, "24h").volume_usd as number) - (windowOf(a, "24h").volume_usd as number) ||
          byAddress(a, b),
      ),
      liquidity: [...pairs.values()]
        .filter((p) => p.liquidity_usd !== null)
        .map((p) => p.pair_address as string)
        .sort(
          (a, b) =>
            (pairs.get(b)?.liquidity_usd as number) - (pairs.get(a)?.liquidity_usd as number) ||
            byAddress(a, b),
        ),
      new: [...traded].sort(
        (a, b) => (created.get(b) as number) - (created.get(a) as number) || byAddress(a, b),
      ),
    };
    for (const sort of ["volume", "liquidity", "new", "trending"]) {
      const answer = await api.get("/api/v1/pools/top", { chain, sort, limit: 100 });
      assert.equal(answer.status, 200, answer.text);
      const top = answer.body as Row[];
      assert.deepEqual(
        top.map((r) => r.rank),
        top.map((_, i) => i + 1),
        `${sort}: ranks`,
      );
      for (const r of top) {
        const { rank: _rank, trending_score: _score, ...record } = r;
        assert.deepEqual(record, pairs.get(r.pair_address as string), `${sort}: the pair's market record`);
      }
      const order = top.map((r) => r.pair_address as string);
      if (sort !== "trending") {
        assert.deepEqual(order.map(poolKey), (expected[sort] as string[]).map(poolKey), `${sort}: order`);
        const limited = await api.get("/api/v1/pools/top", { chain, sort, limit: 3 });
        assert.deepEqual(
          (limited.body as Row[]).map((r) => r.pair_address),
          order.slice(0, 3),
          `${sort}: limit`,
        );
        continue;
      }
      const { liquidityFloorUsd, trendingMinVolumeUsd } = config.pricing;
      const liquidity = await trendingLiquidities();
      const score = (pool: string) =>
        (windowOf(pool, "1h").volume_usd as number) / ((windowOf(pool, "24h").volume_usd as number) / 24);
      const eligible = [...traded].filter(
        (pool) =>
          (windowOf(pool, "1h").volume_usd as number) >= trendingMinVolumeUsd &&
          (liquidity.get(pool) ?? 0) >= liquidityFloorUsd,
      );
      eligible.sort((a, b) => score(b) - score(a) || byAddress(a, b));
      assert.deepEqual(order.map(poolKey), eligible.map(poolKey), "trending: order");
      for (const r of top) assert.equal(r.trending_score, score(r.pair_address as string), "trending: score");
    }
  }

  /**
   * Each pool's trending liquidity, computed here from its stored pricing state: twice the smaller
   * USD value of its priced sides, each side the smaller of its balance now and before the first
   * swap of its latest block with swaps.
   */
  async function trendingLiquidities(): Promise<Map<string, number | null>> {
    const { rows } = await testDb.db.query<Record<string, string | number | null>>(
      `SELECT s.pool, s.reserve0, s.reserve1, s.swap_block, s.pre_swap_reserve0, s.pre_swap_reserve1,
         t0.decimals AS d0, t1.decimals AS d1, tp0.usd_price AS u0, tp1.usd_price AS u1
       FROM pool_price_state s
       LEFT JOIN tokens t0 ON t0.chain_id = s.chain_id AND t0.address = s.token0
       LEFT JOIN tokens t1 ON t1.chain_id = s.chain_id AND t1.address = s.token1
       LEFT JOIN token_prices tp0 ON tp0.chain_id = s.chain_id AND tp0.token = s.token0
       LEFT JOIN token_prices tp1 ON tp1.chain_id = s.chain_id AND tp1.token = s.token1
       WHERE s.chain_id = $1`,
      [chain],
    );
    const out = new Map<string, number | null>();
    for (const r of rows) {
      const values: (number | null)[] = [];
      for (const side of [0, 1]) {
        const usd = r[`u${side}`] as number | null;
        if (usd === null) continue;
        const now = r[`reserve${side}`];
        const before = r[`pre_swap_reserve${side}`];
        const decimals = r[`d${side}`];
        if (now === null || decimals === null || (r.swap_block !== null && before === null)) {
          values.push(null);
          continue;
        }
        const depth =
          r.swap_block !== null && BigInt(before as string) < BigInt(now as string) ? before : now;
        values.push((Number(depth) / 10 ** Number(decimals)) * usd);
      }
      const known = values.filter((v): v is number => v !== null);
      out.set(
        r.pool as string,
        values.length === 0 || known.length < values.length ? null : 2 * Math.min(...known),
      );
    }
    return out;
  }

  it("each window of every token and pair equals an independent computation from the stored swaps", async () => {
    const [latest] = (
      await testDb.db.query<{ t: Date }>("SELECT max(block_time) AS t FROM swaps WHERE chain_id = $1", [
        chain,
      ])
    ).rows;
    // A minute boundary comfortably after the history and the real clock, plus 30 s.
    t0 =
      Math.ceil((Math.max(Date.now(), (latest as { t: Date }).t.getTime()) + 10 * MINUTE) / MINUTE) * MINUTE +
      30_000;
    clock.now = t0 - 10 * MINUTE;
    // Trades of our own in the last minutes: every window holds some; traders repeat (makers).
    await mine([
      {
        at: t0 - 9 * MINUTE,
        swaps: [
          { pool: "v3:WETH/USDC:500", tokenIn: "USDC", usd: 3000, trader: 0 },
          { pool: "v2:WETH/USDC", tokenIn: "WETH", usd: 1500, trader: 1 },
        ],
      },
      {
        at: t0 - 4 * MINUTE,
        swaps: [
          { pool: "v3:WETH/USDC:500", tokenIn: "WETH", usd: 2500, trader: 0 },
          { pool: "v2:LINK/USDC", tokenIn: "LINK", usd: 300, trader: 2 },
          { pool: "v3:KIBL/WETH:10000", tokenIn: "WETH", usd: 500, trader: 3 },
        ],
      },
      {
        at: t0 - 90_000,
        swaps: [
          { pool: "v2:WETH/USDC", tokenIn: "USDC", usd: 2000, trader: 1 },
          { pool: "v2:NODEC/WETH", tokenIn: "NODEC", usd: 100, trader: 4 },
        ],
      },
      { at: t0 - 20_000, swaps: [{ pool: "v3:WETH/USDC:500", tokenIn: "USDC", usd: 1200, trader: 0 }] },
    ]);
    await slideTo(t0);
    const { pairs, swaps } = await checkWindows(t0);

    // Not trivially equal: our trades are in the 5-minute windows, priced, with repeat makers.
    const weth = referenceWindows(swaps, { token: token("WETH") }, t0);
    assert.ok(weth["5m"].buys + weth["5m"].sells >= 5, `WETH's 5 minutes: ${JSON.stringify(weth["5m"])}`);
    assert.ok(
      weth["5m"].makers >= 3 && weth["5m"].makers < weth["5m"].buys + weth["5m"].sells,
      "repeat makers",
    );
    assert.ok((weth["5m"].volume_usd as number) > 3000, "USD volume");
    assert.notEqual(weth["24h"].price_change, null, "WETH has a 24 h change");
    const usdcPool = pairs.get(poolOf("v3:WETH/USDC:500").address) as Row;
    assert.notEqual(
      (usdcPool.windows as Windows)["5m"].price_change,
      0,
      "the pool's price moved in 5 minutes",
    );
    await checkTopPools(pairs, swaps);
  });

  it("a dust pool whose price one large trade pushed never trends; deep active pools do", async () => {
    const dust = poolOf("v3:DUST/USDC:10000");
    const fake = poolOf("v2:FAKEUSDC/WETH");
    await mine([
      {
        at: t0 + 20_000,
        swaps: [
          { pool: "v3:DUST/USDC:10000", tokenIn: "USDC", usd: 8000, trader: 6 },
          { pool: "v2:FAKEUSDC/WETH", tokenIn: "WETH", usd: 10_000, trader: 7 },
          { pool: "v3:WETH/USDC:500", tokenIn: "USDC", usd: 2000, trader: 8 },
        ],
      },
    ]);
    await slideTo(t0 + MINUTE);
    const { pairs, swaps } = await checkWindows(t0 + MINUTE);
    const { liquidityFloorUsd, trendingMinVolumeUsd } = config.pricing;
    for (const pushed of [dust, fake]) {
      const record = pairs.get(pushed.address) as Row;
      const w = record.windows as Windows;
      // Only the depth rule keeps it out: it has the volume, and its current balances are worth more than the floor.
      assert.ok(
        (w["1h"].volume_usd as number) >= trendingMinVolumeUsd,
        `${pushed.key}: 1 h volume ${w["1h"].volume_usd}`,
      );
      assert.ok(
        (record.liquidity_usd as number) >= liquidityFloorUsd,
        `${pushed.key}: liquidity ${record.liquidity_usd}`,
      );
      assert.ok(
        Math.abs(w["5m"].price_change as number) > 50,
        `${pushed.key}: pushed ${w["5m"].price_change} %`,
      );
    }
    const answer = await api.get("/api/v1/pools/top", { chain, sort: "trending", limit: 100 });
    const trending = (answer.body as Row[]).map((r) => r.pair_address as string);
    assert.ok(!trending.includes(dust.address), "the pushed DUST pool does not trend");
    assert.ok(!trending.includes(fake.address), "the pushed look-alike pool does not trend");
    assert.ok(
      trending.includes(poolOf("v3:WETH/USDC:500").address),
      `the deep WETH/USDC pool trends: ${trending.map(poolKey)}`,
    );
    await checkTopPools(pairs, swaps);
  });

  it("token records: price, liquidity, supply, FDV, configured market cap", async () => {
    const tokens = await tokenRecords();
    const assets = (
      await api.get("/api/v1/assets", { asset_ids: tokens.map((t) => t.token_id as string).join(",") })
    ).body as Row[];
    const stats = new Map(
      (
        await testDb.db.query<{ token: string; liquidity_usd: number }>(
          "SELECT token, liquidity_usd FROM token_windows WHERE chain_id = $1",
          [chain],
        )
      ).rows.map((r) => [r.token, r.liquidity_usd]),
    );
    for (const t of tokens) {
      const asset = assets.find((a) => a.contract === t.contract) as Row;
      assert.equal(t.usd_price, asset.usd_price, `${t.symbol}: the price of /api/v1/assets`);
      assert.equal(t.total_supply, asset.total_supply);
      assert.equal(t.liquidity_usd, stats.get(t.contract as string) ?? null);
      assert.equal(
        t.fdv,
        t.usd_price === null || t.total_supply === null
          ? null
          : (t.total_supply as number) * (t.usd_price as number),
      );
      if (t.contract === token("WETH")) {
        assert.equal(t.circulating_supply, 1_000_000);
        assert.equal(t.market_cap, 1_000_000 * (t.usd_price as number));
      } else {
        assert.equal(t.circulating_supply, null);
        assert.equal(t.market_cap, null);
      }
    }
    const nodec = tokens.find((t) => t.contract === token("NODEC")) as Row;
    assert.equal(nodec.decimals, null, "NODEC's decimals() reverts");
    assert.equal(nodec.usd_price, null);
    const unknown = await api.get("/v1/tokens/market", { tokenId: id(`0x${"12".repeat(20)}`) });
    assert.deepEqual(unknown.body, [], "an unknown token is left out");
  });

  it("a token's and a pair's 24-hour change is one figure at every endpoint, bit for bit", async () => {
    const change24h = (record: Row) => (record.windows as Windows | null)?.["24h"].price_change ?? null;
    const tokens = await tokenRecords();
    const ids = tokens.map((t) => t.token_id as string).join(",");
    const metadata = (await api.get("/v1/tokens/metadata", { tokenId: ids })).body as Row[];
    const assets = (await api.get("/api/v1/assets", { asset_ids: ids })).body as Row[];
    let changed = 0;
    for (const t of tokens) {
      const change = change24h(t);
      if (change !== null) changed += 1;
      const search = (await api.get("/v1/tokens/search", { searchString: t.token_id as string }))
        .body as Row[];
      const answers = [metadata, assets, search].map((list) => list.find((r) => r.contract === t.contract));
      assert.deepEqual(
        answers.map((r) => r?.price_change),
        [change, change, change],
        `${t.symbol}: /v1/tokens/metadata, /api/v1/assets and /v1/tokens/search as /v1/tokens/market`,
      );
    }
    assert.ok(changed >= 3, `${changed} tokens with a 24-hour change`);
    changed = 0;
    for (const pair of await pairRecords()) {
      const token0 = pipeline.deployment.pools.find((p) => p.address === pair.pair_address)?.token0 as string;
      const pairs = (await api.get("/api/v1/pairs", { asset_id: id(token0), limit: 1000 })).body as Row[];
      const change = change24h(pair);
      if (change !== null) changed += 1;
      assert.equal(
        pairs.find((p) => p.pair_address === pair.pair_address)?.change,
        change,
        `${poolKey(pair.pair_address as string)}: /api/v1/pairs as /api/v1/pairs/market`,
      );
    }
    assert.ok(changed >= 3, `${changed} pairs with a 24-hour change`);
  });

  it("networks and DEXes", async () => {
    const head = Number(await createDevnetRpc(pipeline.rpcUrl).request<Hex>("eth_blockNumber"));
    const readyz = (await api.get("/readyz", {}, { key: null })).body as { chains: Row[] };
    const networks = (await api.get("/v1/networks")).body as Row[];
    assert.equal(networks.length, 1);
    const [network] = networks as [Row];
    assert.equal(network.chain, chain);
    assert.equal(network.name, "Devnet");
    assert.equal(network.native_symbol, "ETH");
    assert.equal(network.explorer_url, "https://explorer.example");
    assert.equal(network.indexed_block, head);
    assert.equal(typeof network.indexed_at, "string");
    assert.equal(
      network.ready,
      readyz.chains.find((c) => c.chain_id === chain)?.ready,
      "as /readyz judges it",
    );
    const configured = pipeline.config.chains.find((c) => c.id === chain)?.dexes ?? [];
    assert.equal(network.dexes, configured.length, "every configured DEX of the chain");
    assert.equal(network.pools, pipeline.deployment.pools.length);
    // The native coin is a token of its own where a pool holds it.
    const native = pipeline.deployment.pools.some(
      (p) => /^0x0{40}$/.test(p.token0) || /^0x0{40}$/.test(p.token1),
    );
    assert.equal(network.tokens, Object.keys(pipeline.deployment.tokens).length + (native ? 1 : 0));

    const pairs = await pairRecords();
    for (const query of [{}, { chain }] as Record<string, number>[]) {
      const dexes = (await api.get("/v1/dexes", query)).body as Row[];
      assert.deepEqual(dexes.map((d) => d.name).sort(), configured.map((d) => d.name).sort());
      for (const dex of dexes) {
        const own = pairs
          .filter((p) => p.factory_address === dex.factory_address)
          .sort((a, b) => byAddress(a.pair_address as string, b.pair_address as string));
        assert.equal(dex.pools, pipeline.deployment.pools.filter((p) => p.protocol === dex.protocol).length);
        assert.equal(
          dex.volume_usd_24h,
          own.reduce((sum, p) => sum + ((p.windows as Windows)["24h"].volume_usd as number), 0),
        );
        assert.ok((dex.volume_usd_24h as number) > 0);
      }
    }
  });

  it("answers 400 naming the parameter for bad ids, chain, sort and limit", async () => {
    const weth = id(token("WETH"));
    const tooMany = Array.from({ length: 51 }, (_, i) => id(`0x${i.toString(16).padStart(40, "0")}`)).join(
      ",",
    );
    const cases: [string, Record<string, string | number>, RegExp][] = [
      ["/v1/tokens/market", {}, /query parameter tokenId is required/],
      ["/v1/tokens/market", { tokenId: "abc" }, /query parameter tokenId must be/],
      ["/v1/tokens/market", { tokenId: tooMany }, /tokenId .*at most 50/],
      ["/v1/tokens/market", { tokenId: `${token("WETH")}:5` }, /tokenId: network 5 is not configured/],
      ["/api/v1/pairs/market", {}, /query parameter pair_id is required/],
      ["/api/v1/pairs/market", { pair_id: `${weth},0x12` }, /query parameter pair_id must be/],
      ["/api/v1/pools/top", {}, /query parameter chain is required/],
      ["/api/v1/pools/top", { chain: "abc" }, /query parameter chain must be an integer/],
      ["/api/v1/pools/top", { chain: 5 }, /chain: network 5 is not configured/],
      [
        "/api/v1/pools/top",
        { chain, sort: "hot" },
        /query parameter sort must be one of volume, liquidity, trending, new/,
      ],
      ["/api/v1/pools/top", { chain, limit: 0 }, /query parameter limit must be an integer from 1 to 100/],
      ["/api/v1/pools/top", { chain, limit: 101 }, /query parameter limit must be an integer from 1 to 100/],
      ["/api/v1/pools/top", { chain, limit: "1e1" }, /query parameter limit must be an integer/],
      ["/v1/dexes", { chain: 5 }, /chain: network 5 is not configured/],
      ["/v1/dexes", { chain: "x" }, /query parameter chain must be an integer/],
    ];
    for (const [path, query, message] of cases) {
      assertError(await api.get(path, query), 400, message);
    }
    assertError(await api.get("/api/v1/pools/top", { chain }, { key: null }), 403, /key/);
  });
  it("as the windows slide over a day, every figure still equals the reference; the orders follow", async () => {
    for (const offset of [
      4 * MINUTE,
      61 * MINUTE,
      5 * HOUR + 3 * MINUTE,
      23 * HOUR + 58 * MINUTE,
      25 * HOUR,
    ]) {
      await slideTo(t0 + offset);
      const { pairs, swaps } = await checkWindows(t0 + offset);
      await checkTopPools(pairs, swaps);
    }
  });
});
