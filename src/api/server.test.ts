import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { listenApi } from "../_test/api-server.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { toDouble, tradePrice } from "../_test/exact.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import {
  blockTime,
  fixture,
  fixtureConfig,
  fixtureSwap,
  loadMarketFixture,
} from "../_test/market-fixture.js";
import { HttpError } from "../internal/errors.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { createApiServer } from "./server.js";
import type { BalanceReader } from "./wallet-balances.js";

const f = fixture;
const id = (address: string) => `${address}:1`;
const FAILING_TOKEN = `0x${"de".repeat(20)}`;

/** Balances of wallet i: (i + 1) × 1.5 tokens of 6 decimals; FAILING_TOKEN fails like a dead node. */
const fakeBalances: BalanceReader = async ({ token, wallets }) => {
  if (token === FAILING_TOKEN) {
    throw new HttpError(
      500,
      "could not read balances from network 1: its node did not answer; try again later",
    );
  }
  return { blockNumber: 1302n, decimals: 6, balances: wallets.map((_, i) => BigInt(i + 1) * 1_500_000n) };
};

type Client = Awaited<ReturnType<typeof createApiClient>>;

const errorOf = (answer: ApiAnswer) => answer.body as { statusCode: number; error: string; message: string };

function assertError(answer: ApiAnswer, status: number, message?: RegExp) {
  assert.equal(answer.status, status, answer.text);
  const body = errorOf(answer);
  assert.equal(body.statusCode, status);
  assert.equal(typeof body.error, "string");
  if (message) assert.match(body.message, message);
}

describe("HTTP API over a fixture market", () => {
  let testDb: TestDb;
  let app: FastifyInstance;
  let api: Client;
  let keys: { key: string; revokedKey: string };

  before(async () => {
    testDb = await createTestDb();
    keys = await loadMarketFixture(testDb.db);
    app = createApiServer({
      // This suite sends many wrong keys on purpose; the per-address limit of failed checks has
      // its own test (key-flood.test.ts).
      config: fixtureConfig({ api: { failedKeyLimit: { max: 100_000, windowMs: 60_000 } } }),
      db: testDb.db,
      logger: createSilentLogger(),
      balanceReader: fakeBalances,
      syncPollMs: 50,
      keyCacheTtlMs: 300,
      now: () => blockTime(f.indexedBlock + 10),
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    api = await createApiClient(app, { key: keys.key });
  });
  after(async () => {
    await app?.close();
    await testDb?.drop();
  });
  /** One more server over the same database, with `api` settings of its own; a client with the key. */
  const listenWith = (api: Record<string, unknown>) =>
    listenApi(
      {
        config: fixtureConfig({ api }),
        db: testDb.db,
        logger: createSilentLogger(),
        balanceReader: fakeBalances,
      },
      keys.key,
    );

  const dataEndpoints: [string, Record<string, string>][] = [
    ["/v1/tokens/search", { searchString: "usdc" }],
    ["/v1/tokens/metadata", { tokenId: id(f.usdc) }],
    ["/v1/tokens/line-chart", { tokenId: id(f.weth), days: "1" }],
    ["/v1/tokens/candle-chart", { tokenId: id(f.weth), days: "1", interval: "60" }],
    ["/v1/tokens/price-provenance", { tokenId: id(f.weth) }],
    ["/v1/wallets/token-balances", { contract: f.usdc, chain: "1", wallets: f.router }],
    ["/v1/coins/price", { symbol: "ETH" }],
    ["/api/v1/assets", { asset_ids: id(f.usdc) }],
    [
      "/api/v1/candles",
      {
        asset_id: id(f.weth),
        pair_id: id(f.pair),
        from: "2026-11-20T00:00:00Z",
        to: "2026-11-20T06:00:00Z",
        interval: "1h",
      },
    ],
    ["/api/v1/trades", { asset_id: id(f.weth), pair_id: id(f.pair) }],
    ["/api/v1/pairs", { asset_id: id(f.weth) }],
  ];

  describe("keys", () => {
    for (const [path, query] of dataEndpoints) {
      it(`${path}: 403 without a key, with a wrong key and with a revoked key, before validation`, async () => {
        assertError(await api.get(path, query, { key: null }), 403, /x-api-key/);
        assertError(
          await api.get(path, query, { key: "tm_wrong_key_wrong_key_wrong_key" }),
          403,
          /unknown or revoked/,
        );
        assertError(await api.get(path, query, { key: keys.revokedKey }), 403, /unknown or revoked/);
        assertError(await api.get(path, {}, { key: null }), 403, /x-api-key/);
        assertError(await api.get(path, "tokenId=nonsense&days=0", { key: "x".repeat(5000) }), 403);
      });
    }

    it("a key revoked while in use stops working within the key cache's time", async () => {
      const { key } = await createApiKey(testDb.db, "soon revoked");
      assert.equal((await api.get("/api/v1/assets", { asset_ids: id(f.usdc) }, { key })).status, 200);
      await testDb.db.query("UPDATE api_keys SET revoked_at = now() WHERE name = 'soon revoked'");
      await new Promise((resolve) => setTimeout(resolve, 350));
      assertError(await api.get("/api/v1/assets", { asset_ids: id(f.usdc) }, { key }), 403);
    });

    it("health, readiness, metrics, the OpenAPI document and the docs need no key", async () => {
      const health = await api.get("/healthz", {}, { key: null });
      assert.deepEqual(health.body, { status: "ok" });
      const ready = await api.get("/readyz", {}, { key: null });
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual((ready.body as { chains: unknown[] }).chains, [
        {
          chain_id: 1,
          indexed_block: 1300,
          head_block: 1302,
          lag_blocks: 2,
          max_lag_blocks: 20,
          // No indexer in this process: readiness rests on the stored lag.
          head_age_seconds: null,
          indexer: "unknown",
          stopped_since: null,
          ready: true,
          reason: null,
        },
      ]);
      assert.deepEqual((ready.body as { reasons: unknown[] }).reasons, []);
      const docs = await api.get("/docs", {}, { key: null });
      assert.equal(docs.status, 200);
      assert.match(docs.text, /swagger/i);
      assert.doesNotMatch(
        docs.text,
        /https?:\/\/(?!127\.0\.0\.1)[^"' ]*\.(js|css)/,
        "docs assets are served locally",
      );
      const metrics = await api.get("/metrics", {}, { key: null });
      assert.equal(metrics.status, 200);
      for (const name of [
        "tokenmarket_http_requests_total",
        "tokenmarket_http_request_duration_seconds_bucket",
        'tokenmarket_indexer_lag_blocks{chain_id="1"} 2',
        'tokenmarket_indexer_lag_seconds{chain_id="1"} 24',
      ]) {
        assert.ok(metrics.text.includes(name), `metrics include ${name}`);
      }
      assert.match(
        metrics.text,
        /tokenmarket_http_requests_total\{method="GET",route="\/api\/v1\/assets",status_code="200"\} \d+/,
      );
    });
  });

  describe("freshness and errors", () => {
    it("every data answer carries the indexed block and its time, 404s included", async () => {
      for (const answer of [
        await api.get("/api/v1/assets", { asset_ids: id(f.usdc) }),
        await api.get("/v1/tokens/metadata", { tokenId: id(f.fakePair) }),
      ]) {
        assert.equal(answer.headers.get("x-indexed-block"), "1=1300");
        assert.equal(
          answer.headers.get("x-indexed-at"),
          `1=${blockTime(1300).toISOString().replace(".000Z", "Z")}`,
        );
      }
    });

    it("unknown paths answer a JSON 404; unknown parameters are ignored; repeated ones are a 400", async () => {
      assertError(await api.get("/v1/nothing"), 404, /no endpoint GET \/v1\/nothing/);
      assert.equal((await api.get("/api/v1/assets", { asset_ids: id(f.usdc), foo: "bar" })).status, 200);
      assertError(
        await api.get("/api/v1/assets", `asset_ids=${id(f.usdc)}&asset_ids=${id(f.weth)}`),
        400,
        /^query parameter asset_ids is given more than once$/,
      );
    });

    it("a 5xx hides internals; an unreachable database is a 503 with Retry-After", async () => {
      const broken = createApiServer({
        config: fixtureConfig(),
        db: (await import("../store/db.js")).createDb({ url: "postgres://nobody@127.0.0.1:9/none" }),
        logger: createSilentLogger(),
        syncPollMs: 10_000,
      });
      try {
        const answer = await broken.inject({
          url: `/api/v1/assets?asset_ids=${id(f.usdc)}`,
          headers: { "x-api-key": keys.key },
        });
        assert.equal(answer.statusCode, 503);
        assert.equal(answer.headers["retry-after"], "5");
        const body = answer.json() as { message: string };
        assert.equal(body.message, "the database did not answer in time; retry later");
        assert.doesNotMatch(answer.body, /ECONNREFUSED|postgres|127\.0\.0\.1|stack|at /);
        const ready = await broken.inject("/readyz");
        assert.equal(ready.statusCode, 503);
        assert.equal((ready.json() as { database: string }).database, "unreachable");
      } finally {
        await broken.close();
      }
    });
  });

  describe("GET /v1/tokens/search", () => {
    it("ranks the real USDC before the look-alike, with project info and string chains", async () => {
      const answer = await api.get("/v1/tokens/search", { searchString: "  USDC " });
      assert.equal(answer.status, 200);
      const tokens = answer.body as Record<string, unknown>[];
      assert.deepEqual(
        tokens.map((t) => t.contract),
        [f.usdc, f.fakeUsdc],
      );
      const [real, fake] = tokens as [Record<string, unknown>, Record<string, unknown>];
      const logo = (real.project_info as { logo_url: string }).logo_url;
      assert.match(logo, /^https:\/\//);
      assert.deepEqual(real, {
        contract: f.usdc,
        chain: "1",
        name: "USD Coin",
        symbol: "USDC",
        usd_price: 1,
        price_change: 0.01,
        decimals: 6,
        total_supply: 26_000_000_000,
        project_info: {
          website: null,
          logo_url: logo,
          twitter: null,
          discord: null,
        },
      });
      assert.equal(fake.usd_price, null, "an unpriced look-alike answers null, never 0");
    });

    it("matches addresses (with or without the chain), prefixes and substrings", async () => {
      const byAddress = await api.get("/v1/tokens/search", {
        searchString: f.weth.toUpperCase().replace("0X", "0x"),
      });
      assert.deepEqual(
        (byAddress.body as { contract: string }[]).map((t) => t.contract),
        [f.weth],
      );
      const withChain = await api.get("/v1/tokens/search", { searchString: `${f.weth}:1` });
      assert.equal((withChain.body as unknown[]).length, 1);
      assertError(await api.get("/v1/tokens/search", { searchString: `${f.weth}:5` }), 404);
      const prefix = await api.get("/v1/tokens/search", { searchString: "wrapp" });
      assert.deepEqual(
        (prefix.body as { symbol: string }[]).map((t) => t.symbol),
        ["WETH", "WBTC"],
      );
      const substring = await api.get("/v1/tokens/search", { searchString: "ether" });
      assert.deepEqual(
        (substring.body as { symbol: string }[]).map((t) => t.symbol),
        ["WETH"],
      );
      const exactFirst = await api.get("/v1/tokens/search", { searchString: "zzz" });
      assert.equal((exactFirst.body as { name: unknown }[])[0]?.name, null);
    });

    it("filters by chains and refuses bad input", async () => {
      assert.equal((await api.get("/v1/tokens/search", { searchString: "usdc", chains: "1" })).status, 200);
      assertError(
        await api.get("/v1/tokens/search", { searchString: "usdc", chains: "1,56" }),
        400,
        /network 56 is not configured; the configured networks are 1/,
      );
      assertError(await api.get("/v1/tokens/search", { searchString: "usdc", chains: "x" }), 400, /chains/);
      assertError(await api.get("/v1/tokens/search"), 400, /^query parameter searchString is required$/);
      assertError(await api.get("/v1/tokens/search", { searchString: "   " }), 400, /must not be empty/);
      assertError(
        await api.get("/v1/tokens/search", { searchString: "a".repeat(101) }),
        400,
        /at most 100 characters/,
      );
      assertError(
        await api.get("/v1/tokens/search", { searchString: "us\u0000dc" }),
        400,
        /control characters/,
      );
      assertError(await api.get("/v1/tokens/search", { searchString: "%" }), 404, /no token matches/);
      assertError(await api.get("/v1/tokens/search", { searchString: "nothing like it" }), 404);
    });
  });

  describe("GET /v1/tokens/metadata", () => {
    it("answers one id with an object without contract or project_info", async () => {
      const answer = await api.get("/v1/tokens/metadata", {
        tokenId: id(f.weth).toUpperCase().replace("0X", "0x"),
      });
      assert.deepEqual(answer.body, {
        chain: "1",
        name: "Wrapped Ether",
        symbol: "WETH",
        usd_price: 3000.5,
        price_change: -2.5,
        decimals: 18,
        total_supply: 3_000_000,
      });
    });

    it("answers several ids with an array with contract, in request order, duplicates once, unknown left out", async () => {
      const answer = await api.get("/v1/tokens/metadata", {
        tokenId: [id(f.weth), id(f.fakePair), id(f.usdc), id(f.weth)].join(","),
      });
      const tokens = answer.body as { contract: string; chain: string }[];
      assert.deepEqual(
        tokens.map((t) => t.contract),
        [f.weth, f.usdc],
      );
      assert.equal(tokens[0]?.chain, "1");
      const unknownFields = await api.get("/v1/tokens/metadata", {
        tokenId: `${id(f.unpriced)},${id(f.unpriced)}`,
      });
      assert.deepEqual(unknownFields.body, [
        {
          contract: f.unpriced,
          chain: "1",
          name: null,
          symbol: "ZZZ",
          usd_price: null,
          price_change: null,
          decimals: null,
          total_supply: null,
        },
      ]);
    });

    it("answers 404 and 400 as documented", async () => {
      assertError(await api.get("/v1/tokens/metadata", { tokenId: id(f.pair) }), 404, /is not a known token/);
      assertError(await api.get("/v1/tokens/metadata", { tokenId: `${id(f.pair)},${id(f.fakePair)}` }), 404);
      assertError(await api.get("/v1/tokens/metadata"), 400, /^query parameter tokenId is required$/);
      assertError(
        await api.get("/v1/tokens/metadata", { tokenId: "0x123:1" }),
        400,
        /^query parameter tokenId must be/,
      );
      assertError(await api.get("/v1/tokens/metadata", { tokenId: `${f.usdc}:0` }), 400, /tokenId/);
      assertError(
        await api.get("/v1/tokens/metadata", { tokenId: `${f.usdc}:137` }),
        400,
        /tokenId: network 137 is not configured; the configured networks are 1/,
      );
      const many = Array.from({ length: 101 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}:1`).join(",");
      assertError(
        await api.get("/v1/tokens/metadata", { tokenId: many }),
        400,
        /tokenId lists 101 items; at most 100/,
      );
      const huge = Array.from({ length: 200 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}:1`).join(",");
      assertError(
        await api.get("/v1/tokens/metadata", { tokenId: huge }),
        400,
        /tokenId lists too many items/,
      );
    });
  });

  describe("GET /api/v1/assets", () => {
    it("answers integer chains, leaves unknown ids out, [] when none is known", async () => {
      const answer = await api.get("/api/v1/assets", {
        asset_ids: `${id(f.usdc)},${id(f.pair)},${id(f.fakeUsdc)}`,
      });
      const tokens = answer.body as { contract: string; chain: number; usd_price: number | null }[];
      assert.deepEqual(
        tokens.map((t) => [t.contract, t.chain, t.usd_price]),
        [
          [f.usdc, 1, 1],
          [f.fakeUsdc, 1, null],
        ],
      );
      assert.deepEqual((await api.get("/api/v1/assets", { asset_ids: id(f.pair) })).body, []);
      assertError(await api.get("/api/v1/assets"), 400, /asset_ids is required/);
      assertError(
        await api.get("/api/v1/assets", { asset_ids: `${id(f.usdc)},` }),
        400,
        /asset_ids must be a comma-separated list/,
      );
    });
  });

  describe("GET /api/v1/trades", () => {
    const trades = (asset: string, extra: Record<string, string | number> = {}) =>
      api.get("/api/v1/trades", { asset_id: id(asset), pair_id: id(f.pair), ...extra });
    type Trade = Record<string, unknown> & {
      block_number: number;
      log_index: number;
      side: string;
      price: number;
    };

    it("answers the newest 100 first, every field as specified", async () => {
      const answer = await trades(f.weth);
      assert.equal(answer.status, 200);
      const list = answer.body as Trade[];
      assert.equal(list.length, 100);
      const newest = fixtureSwap(f.swaps - 1);
      assert.deepEqual(list[0], {
        pair_id: id(f.pair),
        date: blockTime(newest.block).toISOString().replace(".000Z", "Z"),
        block_number: newest.block,
        chain: 1,
        exchange: f.router,
        factory_address: f.factory,
        hash: `0x${(f.swaps - 1).toString(16).padStart(64, "0")}`,
        log_index: newest.logIndex,
        maker: `0x${"9".repeat(40)}`,
        pair_address: f.pair,
        token0_address: f.usdc,
        token1_address: f.weth,
        token0_amount: 2990,
        token1_amount: 1,
        token0_price: 1,
        token1_price: 3000,
        token0_reserves: 40_000_000.000249,
        token1_reserves: 13_000,
        token0_symbol: "USDC",
        token1_symbol: "WETH",
        side: "sell",
        price: 2990,
        volume: 3000,
      });
      for (let i = 1; i < list.length; i++) {
        const [a, b] = [list[i - 1] as Trade, list[i] as Trade];
        assert.ok(
          a.block_number > b.block_number || (a.block_number === b.block_number && a.log_index > b.log_index),
          "newest first by (block, log index)",
        );
      }
      assert.ok(answer.headers.get("x-next-cursor"));
      assert.match(
        answer.headers.get("link") ?? "",
        /^<\/api\/v1\/trades\?asset_id=.*&cursor=[\w-]+>; rel="next"$/,
      );
    });

    it("flips side and inverts price when the other token is asked", async () => {
      const weth = (await trades(f.weth, { limit: 10 })).body as Trade[];
      const usdc = (await trades(f.usdc, { limit: 10 })).body as Trade[];
      for (let i = 0; i < 10; i++) {
        const [w, u] = [weth[i] as Trade, usdc[i] as Trade];
        assert.notEqual(w.side, u.side);
        // Each side's exact price from the swap's raw amounts, rounded once (not 1 / the other's).
        const swap = fixtureSwap(f.swaps - 1 - i);
        assert.deepEqual([w.block_number, w.log_index], [swap.block, swap.logIndex], "the fixture's swap");
        const usdcAmount = { amount: swap.amount0In + swap.amount0Out, decimals: 6 };
        const wethAmount = { amount: swap.amount1In + swap.amount1Out, decimals: 18 };
        assert.equal(w.price, toDouble(tradePrice(wethAmount, usdcAmount)), "WETH in USDC");
        assert.equal(
          u.price,
          toDouble(tradePrice(usdcAmount, wethAmount)),
          "USDC in WETH: the exact reciprocal",
        );
      }
      assert.deepEqual(new Set(weth.map((t) => t.side)), new Set(["buy", "sell"]));
    });

    it("pages through all trades with the cursor, without overlap or gap", async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const answer = await trades(f.weth, cursor === null ? { limit: 40 } : { limit: 40, cursor });
        seen.push(...(answer.body as Trade[]).map((t) => `${t.block_number}.${t.log_index}`));
        cursor = answer.headers.get("x-next-cursor");
        if (cursor === null) break;
      }
      const expected = Array.from({ length: f.swaps }, (_, i) => fixtureSwap(f.swaps - 1 - i)).map(
        (s) => `${s.block}.${s.logIndex}`,
      );
      assert.deepEqual(seen, expected);
      const all = await trades(f.weth, { limit: 1000 });
      assert.equal((all.body as unknown[]).length, f.swaps);
      assert.equal(all.headers.get("x-next-cursor"), null);
    });

    it("answers 400 and 404 as documented", async () => {
      assertError(await trades(f.fakeUsdc), 400, /asset_id .* is not one of the two tokens of pair/);
      assertError(
        await api.get("/api/v1/trades", { asset_id: id(f.weth), pair_id: id(f.usdc) }),
        404,
        /not a known pair/,
      );
      assertError(await api.get("/api/v1/trades", { asset_id: id(f.weth) }), 400, /pair_id is required/);
      assertError(await api.get("/api/v1/trades", { pair_id: id(f.pair) }), 400, /asset_id is required/);
      assertError(await trades(f.weth, { limit: 0 }), 400, /limit must be an integer from 1 to 1000/);
      assertError(await trades(f.weth, { limit: 1001 }), 400, /limit must be an integer from 1 to 1000/);
      assertError(await trades(f.weth, { cursor: "bm9wZQ" }), 400, /cursor is not valid/);
      assertError(await trades(f.weth, { cursor: "!!" }), 400, /cursor/);
    });
  });

  describe("GET /api/v1/pairs", () => {
    it("lists the pairs of a token by 24 h volume, [] for an unknown token", async () => {
      const answer = await api.get("/api/v1/pairs", { asset_id: id(f.weth) });
      const pairs = answer.body as Record<string, unknown>[];
      assert.deepEqual(
        pairs.map((p) => p.pair_address),
        [f.pair, f.fakePair],
      );
      assert.deepEqual(pairs[0], {
        pair_id: id(f.pair),
        chain: 1,
        change: 1.5,
        factory_address: f.factory,
        factory_name: "Uniswap V2",
        liquidity_value: 80_000_000,
        pair_address: f.pair,
        token0_address: id(f.usdc),
        token1_address: id(f.weth),
        token0_price: 1,
        token1_price: 3000.5,
        token0_reserves: 40_000_000,
        token1_reserves: 13_000,
        token0_symbol: "USDC",
        token1_symbol: "WETH",
        name: "WETH/USDC",
        base_address: id(f.weth),
        quote_address: id(f.usdc),
        protocol: "v2",
        hooks: null,
        volume: 750_000,
      });
      assert.equal(pairs[1]?.liquidity_value, null);
      assert.deepEqual((await api.get("/api/v1/pairs", { asset_id: id(f.router) })).body, []);
      assertError(await api.get("/api/v1/pairs"), 400, /asset_id is required/);
    });
  });

  describe("GET /v1/coins/price", () => {
    it("answers decimal strings for a configured coin, 404 without price, 400 when unknown", async () => {
      assert.deepEqual((await api.get("/v1/coins/price", { symbol: "eth" })).body, {
        price: "3000.5",
        change: "-2.5",
      });
      assertError(await api.get("/v1/coins/price", { symbol: "BTC" }), 404, /BTC has no price yet/);
      assertError(
        await api.get("/v1/coins/price", { symbol: "DOGE" }),
        400,
        /DOGE is not a known coin; known coins are BTC, ETH/,
      );
      assertError(await api.get("/v1/coins/price", { symbol: "E-T-H" }), 400, /symbol/);
      assertError(await api.get("/v1/coins/price"), 400, /symbol is required/);
    });
  });

  describe("GET /v1/tokens/price-provenance", () => {
    it("answers the stored provenance, 404 when there is no price record", async () => {
      const answer = await api.get("/v1/tokens/price-provenance", { tokenId: id(f.weth) });
      assert.deepEqual(answer.body, {
        token_id: id(f.weth),
        usd_price: 3000.5,
        block_number: 1300,
        date: blockTime(1300).toISOString().replace(".000Z", "Z"),
        provenance: { method: "pools", pools: [], confidence: 1 },
      });
      assertError(await api.get("/v1/tokens/price-provenance", { tokenId: id(f.unpriced) }), 404);
    });
  });

  describe("GET /v1/wallets/token-balances", () => {
    const wallets = [f.router, f.factory, f.router.toUpperCase().replace("0X", "0x")].join(",");
    it("answers each wallet's balance and the sum, deprecated", async () => {
      const answer = await api.get("/v1/wallets/token-balances", { contract: f.usdc, chain: "1", wallets });
      assert.deepEqual(answer.body, {
        walletBalances: [
          { walletAddress: f.router, balance: 1.5 },
          { walletAddress: f.factory, balance: 3 },
        ],
        cumulativeBalance: 4.5,
      });
      assert.equal(answer.headers.get("deprecation"), "@1735689600");
      assert.equal(answer.headers.get("x-balances-block"), "1=1302");
    });

    it("answers 400 for bad input and 500 with a clear message when the node fails", async () => {
      assertError(
        await api.get("/v1/wallets/token-balances", { contract: "0x12", chain: "1", wallets }),
        400,
        /contract must be an address/,
      );
      assertError(
        await api.get("/v1/wallets/token-balances", { contract: f.usdc, chain: "56", wallets }),
        400,
        /chain: network 56 is not configured/,
      );
      assertError(
        await api.get("/v1/wallets/token-balances", { contract: f.usdc, chain: "1", wallets: "0xabc" }),
        400,
        /wallets/,
      );
      assertError(
        await api.get("/v1/wallets/token-balances", { contract: f.usdc, wallets }),
        400,
        /chain is required/,
      );
      const many = Array.from({ length: 101 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`).join(",");
      assertError(
        await api.get("/v1/wallets/token-balances", { contract: f.usdc, chain: "1", wallets: many }),
        400,
        /at most 100/,
      );
      const failed = await api.get("/v1/wallets/token-balances", {
        contract: FAILING_TOKEN,
        chain: "1",
        wallets,
      });
      assertError(failed, 500, /^could not read balances from network 1: its node did not answer/);
    });
  });

  describe("chart endpoints: validation", () => {
    it("line chart and deprecated candle chart check tokenId, days and interval", async () => {
      for (const path of ["/v1/tokens/line-chart", "/v1/tokens/candle-chart"]) {
        const base = { tokenId: id(f.weth), interval: "60" };
        assertError(
          await api.get(path, { ...base, days: 0 }),
          400,
          /^query parameter days must be an integer from 1 to 90/,
        );
        assertError(
          await api.get(path, { ...base, days: 91 }),
          400,
          /days must be an integer from 1 to 90 \(got "91"\)/,
        );
        assertError(await api.get(path, { ...base, days: "1.5" }), 400, /days must be an integer/);
        assertError(await api.get(path, { interval: "60", days: 1 }), 400, /tokenId is required/);
        assertError(await api.get(path, { ...base, days: 1, tokenId: "weth" }), 400, /tokenId must be an id/);
      }
      assertError(
        await api.get("/v1/tokens/candle-chart", { tokenId: id(f.weth), days: 1, interval: 10 }),
        400,
        /interval must be one of 5, 15, 30, 60/,
      );
      assertError(
        await api.get("/v1/tokens/candle-chart", { tokenId: id(f.weth), days: 1 }),
        400,
        /interval is required/,
      );
      const chart = await api.get("/v1/tokens/candle-chart", { tokenId: id(f.weth), days: 1, interval: 60 });
      assert.equal(chart.headers.get("deprecation"), "@1735689600");
      assert.match(chart.headers.get("link") ?? "", /<\/api\/v1\/candles>; rel="successor-version"/);
    });

    it("candles check the pair, the asset, the range and the interval", async () => {
      const base = {
        asset_id: id(f.weth),
        pair_id: id(f.pair),
        from: "2026-11-20T00:00:00Z",
        to: "2026-11-20T06:00:00Z",
        interval: "1h",
      };
      assertError(
        await api.get("/api/v1/candles", { ...base, interval: "2h" }),
        400,
        /interval must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d/,
      );
      assertError(
        await api.get("/api/v1/candles", { ...base, from: "2026-11-20" }),
        400,
        /from must be an ISO 8601 date-time/,
      );
      assertError(
        await api.get("/api/v1/candles", { ...base, from: base.to, to: base.from }),
        400,
        /from must be before to/,
      );
      assertError(
        await api.get("/api/v1/candles", { ...base, interval: "1m", from: "2026-11-01T00:00:00Z" }),
        400,
        /span \d+ intervals of 1m; at most 5000/,
      );
      assert.notEqual(
        (await api.get("/api/v1/candles", { ...base, interval: "1m", to: "2026-11-20T01:23:19Z" })).status,
        400,
        "5000 candles are allowed",
      );
      assertError(
        await api.get("/api/v1/candles", { ...base, asset_id: id(f.fakeUsdc) }),
        400,
        /not one of the two tokens/,
      );
      assertError(
        await api.get("/api/v1/candles", { ...base, pair_id: id(f.usdc) }),
        404,
        /not a known pair/,
      );
      const { to: _to, ...missingTo } = base;
      assertError(await api.get("/api/v1/candles", missingTo), 400, /to is required/);
    });
  });

  describe("cache", () => {
    it("answers from memory until the indexer ingests a new block", async () => {
      const ask = () => api.get("/api/v1/assets", { asset_ids: id(f.weth) });
      assert.equal((await ask()).headers.get("x-indexed-block"), "1=1300");
      await testDb.db.query("UPDATE token_prices SET usd_price = 3100 WHERE token = $1", [f.weth]);
      assert.equal(
        (((await ask()).body as { usd_price: number }[])[0] as { usd_price: number }).usd_price,
        3000.5,
      );
      await testDb.db.query("UPDATE sync_state SET indexed_block = 1301, indexed_block_time = $1", [
        blockTime(1301),
      ]);
      // The server hears of the new block by itself; until then it answers from memory.
      const atBlock = async (header: string) => {
        let answer = await ask();
        const deadline = Date.now() + 10_000;
        while (answer.headers.get("x-indexed-block") !== header) {
          assert.ok(Date.now() < deadline, `the server still at ${answer.headers.get("x-indexed-block")}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          answer = await ask();
        }
        return answer;
      };
      const fresh = await atBlock("1=1301");
      assert.equal(((fresh.body as { usd_price: number }[])[0] as { usd_price: number }).usd_price, 3100);
      await testDb.db.query("UPDATE token_prices SET usd_price = 3000.5 WHERE token = $1", [f.weth]);
      await testDb.db.query("UPDATE sync_state SET indexed_block = 1300, indexed_block_time = $1", [
        blockTime(1300),
      ]);
      // The tests after this one read the fixture at block 1300 again.
      assert.equal(
        (((await atBlock("1=1300")).body as { usd_price: number }[])[0] as { usd_price: number }).usd_price,
        3000.5,
      );
    });
  });

  describe("compression", () => {
    it("compresses large answers for clients that accept it, and only for them", async () => {
      const { request } = await import("node:http");
      const { gunzipSync } = await import("node:zlib");
      const get = (encoding: string | undefined) =>
        new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
          const req = request(
            `${api.base}/api/v1/trades?asset_id=${id(f.weth)}&pair_id=${id(f.pair)}`,
            { headers: { "x-api-key": keys.key, ...(encoding ? { "accept-encoding": encoding } : {}) } },
            (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (c: Buffer) => chunks.push(c));
              res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
            },
          );
          req.on("error", reject);
          req.end();
        });
      const plain = await get(undefined);
      assert.equal(plain.headers["content-encoding"], undefined, "no encoding unless asked");
      assert.ok(plain.body.length > 1024, "the answer is large enough to be compressed");
      const gzipped = await get("gzip");
      assert.equal(gzipped.headers["content-encoding"], "gzip");
      assert.ok(gzipped.body.length < plain.body.length / 2, "gzip at least halves a trades answer");
      assert.deepEqual(JSON.parse(gunzipSync(gzipped.body).toString()), JSON.parse(plain.body.toString()));
    });

    it("compresses large answers with brotli at quality 1 and small ones at quality 2", async () => {
      const { brotliCompressSync, constants } = await import("node:zlib");
      const { saveCandles } = await import("../store/candles.js");
      // A database of its own: one minute candle at the fixture's start, then three days later,
      // 4,320 minute candles filled up to now (~800 kB of JSON).
      const own = await createTestDb();
      const ownKeys = await loadMarketFixture(own.db);
      const price = { open: 2000, high: 2010, low: 1990, close: 2005 };
      await saveCandles(own.db, f.chainId, [
        {
          pool: f.pair,
          resolution: 60,
          bucket: f.genesis,
          ...price,
          open1: 1 / 2000,
          high1: 1 / 1990,
          low1: 1 / 2010,
          close1: 1 / 2005,
          volume0: 1,
          volume1: 2000,
          volumeUsd: 2000,
          usd0: null,
          usd1: null,
          trades: 1,
          buys0: 1,
          firstKey: 1,
          lastKey: 1,
          sums: {
            volume0: { digits: 1n, scale: 0 },
            volume1: { digits: 2000n, scale: 0 },
            volumeUsd: { digits: 2000n, scale: 0 },
            usd0: null,
            usd1: null,
          },
        },
      ]);
      const later = createApiServer({
        config: fixtureConfig(),
        db: own.db,
        logger: createSilentLogger(),
        now: () => new Date(f.genesis + 3 * 86_400_000),
      });
      try {
        const candles = `/api/v1/candles?${new URLSearchParams({
          asset_id: id(f.weth),
          pair_id: id(f.pair),
          interval: "1m",
          from: new Date(f.genesis).toISOString(),
          to: new Date(f.genesis + 3 * 86_400_000).toISOString(),
        })}`;
        const trades = `/api/v1/trades?asset_id=${id(f.weth)}&pair_id=${id(f.pair)}&limit=20`;
        const quality = (q: number) => ({ params: { [constants.BROTLI_PARAM_QUALITY]: q } });
        for (const [url, size, q] of [
          [candles, (n: number) => n > 64 * 1024, 1],
          [trades, (n: number) => n > 1024 && n <= 64 * 1024, 2],
        ] as const) {
          const get = (encoding?: string) =>
            later.inject({
              url,
              headers: { "x-api-key": ownKeys.key, ...(encoding ? { "accept-encoding": encoding } : {}) },
            });
          const plain = await get();
          assert.equal(plain.statusCode, 200, plain.body);
          assert.ok(size(plain.rawPayload.length), `${url}: ${plain.rawPayload.length} bytes`);
          const br = await get("br, gzip");
          assert.equal(br.headers["content-encoding"], "br");
          // Brotli's output is fixed by its input and parameters.
          assert.ok(
            br.rawPayload.equals(brotliCompressSync(plain.rawPayload, quality(q))),
            `${url}: quality ${q}`,
          );
        }
      } finally {
        await later.close();
        await own.drop();
      }
    });
  });

  describe("CORS", () => {
    const origin = "https://widget.example";

    it("answers the preflight without a key and lets a browser on another origin read answers and errors", async () => {
      const base = api.base;
      const preflight = await fetch(`${base}/api/v1/candles`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "GET",
          "access-control-request-headers": "x-api-key",
        },
      });
      assert.equal(preflight.status, 204, "the preflight needs no key");
      assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
      assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /x-api-key/);

      const ok = await fetch(`${base}/api/v1/assets?asset_ids=${id(f.usdc)}`, {
        headers: { origin, "x-api-key": keys.key },
      });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get("access-control-allow-origin"), "*");
      assert.match(ok.headers.get("access-control-expose-headers") ?? "", /x-indexed-block/);
      assert.match(ok.headers.get("access-control-expose-headers") ?? "", /x-next-cursor/);

      const denied = await fetch(`${base}/api/v1/assets?asset_ids=${id(f.usdc)}`, { headers: { origin } });
      assert.equal(denied.status, 403);
      assert.equal(
        denied.headers.get("access-control-allow-origin"),
        "*",
        "the page can show the API's error",
      );
    });

    it("is off with corsOrigins [] and limited to the listed origins otherwise", async () => {
      for (const corsOrigins of [[], ["https://app.example"]]) {
        const { app: server, api: client } = await listenWith({ corsOrigins });
        try {
          const answer = await fetch(`${client.base}/api/v1/assets?asset_ids=${id(f.usdc)}`, {
            headers: { origin, "x-api-key": keys.key },
          });
          assert.equal(answer.status, 200);
          assert.equal(answer.headers.get("access-control-allow-origin"), null, `${origin} is not allowed`);
          if (corsOrigins.length > 0) {
            const allowed = await fetch(`${client.base}/api/v1/assets?asset_ids=${id(f.usdc)}`, {
              headers: { origin: "https://app.example", "x-api-key": keys.key },
            });
            assert.equal(allowed.headers.get("access-control-allow-origin"), "https://app.example");
          }
        } finally {
          await server.close();
        }
      }
    });
  });

  describe("rate limit", () => {
    it("answers 429 with Retry-After past the key's budget", async () => {
      const { app: limited, api: client } = await listenWith({ rateLimit: { max: 3, windowMs: 60_000 } });
      try {
        for (let i = 0; i < 3; i++)
          assert.equal((await client.get("/api/v1/assets", { asset_ids: id(f.usdc) })).status, 200);
        const over = await client.get("/api/v1/assets", { asset_ids: id(f.usdc) });
        assertError(over, 429, /rate limit exceeded: 3 requests per 60 s for this key; retry after \d+ s/);
        assert.match(over.headers.get("retry-after") ?? "", /^\d+$/);
        const { key: other } = await createApiKey(testDb.db, "another");
        assert.equal(
          (await client.get("/api/v1/assets", { asset_ids: id(f.usdc) }, { key: other })).status,
          200,
          "per key",
        );
      } finally {
        await limited.close();
      }
    });
  });
});
