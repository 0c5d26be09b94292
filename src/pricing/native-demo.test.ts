/**
 * The native coin and the wrapped native token on the demo, over real HTTP: the same USD price in
 * every answer that carries one (assets, token market records, line chart, USD candles, the trades
 * of a native-coin pool beside WETH's at the same block). The demo holds native ETH in the V4 pools
 * ETH/USDC and FROG/ETH.
 */
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
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
    // Token records (metadata): the USD price (their 24-hour change reads each id's own series).
    const [ethRecord, wethRecord] = (await both("/v1/tokens/metadata", (t) => ({ tokenId: id(t) }))) as [
      Row,
      Row,
    ];
    assert.ok(
      Object.is(ethRecord.usd_price, wethRecord.usd_price),
      `${ethRecord.usd_price} ${wethRecord.usd_price}`,
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
});
