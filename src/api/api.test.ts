import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import { exampleQuery, operationsOf } from "../_test/openapi-examples.js";
import { type Pipeline, startPipeline } from "../_test/pipeline.js";
import type { Config } from "../config/schema.js";
import type { DeployedToken } from "../devnet/deploy.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { createApiServer, startApi } from "./server.js";

/**
 * Acceptance through real HTTP: a devnet with two days of simulated trading on the real Uniswap
 * contracts, indexed and priced into a test database, served by a listening API server and read
 * with fetch. Every answer is checked against the published /openapi.json by the client.
 */

type Client = Awaited<ReturnType<typeof createApiClient>>;
type Row = Record<string, unknown>;

const isIso = (value: unknown) =>
  typeof value === "string" && !Number.isNaN(Date.parse(value)) && value.endsWith("Z");
const close = (a: number, b: number, tolerance = 1e-9) =>
  Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));

function assertError(answer: ApiAnswer, status: number, message?: RegExp) {
  assert.equal(answer.status, status, answer.text);
  const body = answer.body as { statusCode: number; message: string };
  assert.equal(body.statusCode, status);
  if (message) assert.match(body.message, message);
}

describe("HTTP API over the devnet pipeline", { timeout: 300_000 }, () => {
  let testDb: TestDb;
  let pipeline: Pipeline;
  let app: FastifyInstance;
  let api: Client;
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

  before(async () => {
    testDb = await createTestDb({ max: 10 });
    pipeline = await startPipeline({ db: testDb.db });
    tokens = pipeline.deployment.tokens;
    ({ key } = await createApiKey(testDb.db, "acceptance"));
    app = createApiServer({
      config: pipeline.config,
      db: testDb.db,
      logger: createSilentLogger(),
      keyCacheTtlMs: 300,
      rpcMetrics: pipeline.rpcMetrics,
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    api = await createApiClient(app, { key });
  });
  after(async () => {
    await app?.close();
    await pipeline?.close();
    await testDb?.drop();
  });

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

  it("line chart: hourly ISO labels, one price each; 404 for a token with no qualifying trade", async () => {
    const answer = await api.get("/v1/tokens/line-chart", { tokenId: id(token("WETH").address), days: 2 });
    const chart = answer.body as { labels: string[]; data: number[] };
    assert.ok(chart.labels.length > 24);
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
    assert.ok(candles.length > 10);
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
    type Candle = {
      open: number;
      high: number;
      low: number;
      close: number;
      volume: number;
      date: string;
      time: number;
    };
    const candles = async (asset: string, interval: string, r = range()) =>
      api.get("/api/v1/candles", { asset_id: id(asset), pair_id: id(pair().address), interval, ...r });

    it("are ascending, with empty intervals carrying the previous close at volume 0", async () => {
      const answer = await candles(pair().token0, "5m");
      const list = answer.body as Candle[];
      assert.ok(list.length > 50);
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
      assert.ok(gaps > 0, "a thin pool has empty intervals");
    });

    it("are reciprocal between the two sides of the pair", async () => {
      const side0 = (await candles(pair().token0, "1h")).body as Candle[];
      const side1 = (await candles(pair().token1, "1h")).body as Candle[];
      assert.ok(side0.length > 0, "the range holds candles");
      assert.equal(side0.length, side1.length);
      for (const [i, a] of side0.entries()) {
        const b = side1[i] as Candle;
        assert.equal(a.time, b.time);
        assert.ok(close(a.open * b.open, 1, 1e-9), "open");
        assert.ok(close(a.close * b.close, 1, 1e-9), "close");
        assert.ok(close(a.high * b.low, 1, 1e-9), "high of one side is the reciprocal of the other's low");
        assert.ok(close(a.low * b.high, 1, 1e-9));
        assert.equal(a.volume === 0, b.volume === 0);
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
      assert.equal(list.length, 100);
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

    it("flip side when the other token is asked, with the reciprocal price", async () => {
      const a = (await trades(pool().token0, { limit: 50 })).body as Trade[];
      const b = (await trades(pool().token1, { limit: 50 })).body as Trade[];
      assert.equal(a.length, 50);
      assert.equal(b.length, 50);
      for (const [i, t] of a.entries()) {
        const u = b[i] as Trade;
        assert.equal(t.hash, u.hash);
        assert.notEqual(t.side, u.side);
        assert.ok(close((t.price as number) * (u.price as number), 1, 1e-9));
      }
    });

    it("page through every trade with the cursor, without overlap or gap", async () => {
      const { rows } = await testDb.db.query<{ block_number: number; log_index: number }>(
        "SELECT block_number, log_index FROM swaps WHERE chain_id = $1 AND pool = $2 ORDER BY block_number DESC, log_index DESC",
        [chain, pool().address],
      );
      const expected = rows.map((r) => `${r.block_number}.${r.log_index}`);
      // The count varies with the calendar (the simulated market is quieter at weekends): pages of
      // a third of it make at least three pages and a partial last one whatever the count.
      assert.ok(expected.length >= 30, `${expected.length} trades`);
      const limit = Math.floor(expected.length / 3) - 1;
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const answer = await trades(pool().token1, cursor ? { limit, cursor } : { limit });
        seen.push(...(answer.body as Trade[]).map((t) => `${t.block_number}.${t.log_index}`));
        cursor = answer.headers.get("x-next-cursor");
        pages += 1;
      } while (cursor && pages < 1000);
      assert.ok(pages >= 4, `${pages} pages`);
      assert.deepEqual(seen, expected);
    });
  });

  it("pairs: the pairs of WETH by 24 h volume; [] for an unknown token", async () => {
    const answer = await api.get("/api/v1/pairs", { asset_id: id(token("WETH").address) });
    const pairs = answer.body as Row[];
    assert.ok(pairs.length >= 10);
    for (const [i, p] of pairs.entries()) {
      assert.ok([p.token0_address, p.token1_address].includes(id(token("WETH").address)));
      assert.ok(["Uniswap V2", "Uniswap V3"].includes(p.factory_name as string));
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
      const sum = body.walletBalances.reduce((s, w) => s + w.balance, 0);
      assert.ok(close(sum, body.cumulativeBalance, 1e-12));
      assert.match(answer.headers.get("x-balances-block") ?? "", /^31337=\d+$/);
      assert.equal(answer.headers.get("deprecation"), "@1735689600");
    });

    it("answers 400 for a contract that is not a token and 500 without the RPC URL when the node is down", async () => {
      assertError(
        await api.get("/v1/wallets/token-balances", {
          contract: pipeline.deployment.v2.factory,
          chain,
          wallets: pipeline.wallets[0] as string,
        }),
        400,
        /not an ERC-20 token/,
      );
      const deadConfig: Config = {
        ...pipeline.config,
        chains: pipeline.config.chains.map((c) => ({ ...c, rpc: ["http://127.0.0.1:9/secret-path"] })),
      };
      const dead = createApiServer({ config: deadConfig, db: testDb.db, logger: createSilentLogger() });
      await dead.listen({ host: "127.0.0.1", port: 0 });
      try {
        const client = await createApiClient(dead, { key });
        const answer = await client.get("/v1/wallets/token-balances", {
          contract: token("USDC").address,
          chain,
          wallets: pipeline.wallets[0] as string,
        });
        assertError(answer, 500, /^could not read balances from network 31337/);
        assert.doesNotMatch(answer.text, /secret-path|127\.0\.0\.1:9/);
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
