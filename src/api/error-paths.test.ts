import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import { blockTime, fixture, fixtureConfig, loadMarketFixture } from "../_test/market-fixture.js";
import { connectStream, type StreamMessage, type TestStreamClient } from "../_test/stream-client.js";
import { startTcpProxy, type TcpProxy } from "../_test/tcp-proxy.js";
import { createSilentLogger } from "../internal/logger.js";
import { createDb, type Db } from "../store/db.js";
import { createApiServer } from "./server.js";

/**
 * Error answers of routes whose happy paths are tested elsewhere, over real HTTP and real
 * WebSocket connections to a server on the hand-made market of the fixture: a missing logo and
 * a token without candles (404), a malformed provenance request (400), and the stream's 500
 * (a query that fails), 503 (the database gone) and 1001 (the server stopping).
 *
 * The server reads its database through a TCP proxy, so that the database can vanish for it
 * alone: closing the proxy ends its connections and refuses new ones, as a database that went
 * down does.
 */

const f = fixture;
const id = (address: string) => `${address}:1`;
const isError = (status: number) => (m: StreamMessage) => m.type === "error" && m.statusCode === status;

const assertError = (answer: ApiAnswer, status: number, message: RegExp) => {
  assert.equal(answer.status, status, answer.text);
  const body = answer.body as { statusCode: number; message: string };
  assert.equal(body.statusCode, status);
  assert.match(body.message, message);
};

describe("error paths: logos, deprecated charts, provenance and the stream", { timeout: 120_000 }, () => {
  let testDb: TestDb;
  let proxy: TcpProxy;
  let db: Db;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  let closed = false;
  const clients: TestStreamClient[] = [];

  before(async () => {
    testDb = await createTestDb();
    ({ key } = await loadMarketFixture(testDb.db));
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const viaProxy = new URL(testDb.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    db = createDb({ url: viaProxy.toString(), max: 5 });
    app = createApiServer({
      config: fixtureConfig(),
      db,
      logger: createSilentLogger(),
      now: () => blockTime(f.indexedBlock),
      // A key checked once stays known for the whole file: the stream's 503 on a subscription
      // needs a connection whose key was checked before the database went away.
      keyCacheTtlMs: 600_000,
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    assert.ok(address && typeof address === "object");
    base = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    if (!closed) await app?.close();
    await db?.end().catch(() => {});
    await proxy?.close();
    await testDb?.drop();
  });

  const connect = async (options: { key?: string } = {}) => {
    const client = await connectStream(base, options);
    clients.push(client);
    return client;
  };

  it("GET /logos/:file: 404 naming the file for a logo that is not there, in the error shape", async () => {
    // The route is not in /openapi.json (no key, not data): read with plain fetch.
    const get = async (file: string) => {
      const response = await fetch(`${base}/logos/${file}`);
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as unknown };
    };
    assert.equal((await fetch(`${base}/logos/usdc.svg`)).status, 200, "a logo that is there");
    assertError(await get("nosuch.svg"), 404, /^no logo nosuch\.svg$/);
    // A path out of the logo folder is just another unknown name.
    assertError(await get("..%2Fpackage.json"), 404, /^no logo \.\.\/package\.json$/);
    // The name is cut in the message: an answer never echoes a long input whole.
    assertError(await get(`${"a".repeat(80)}.svg`), 404, new RegExp(`^no logo ${"a".repeat(60)}$`));
  });

  it("GET /v1/tokens/candle-chart: 404 naming the token and the days for a token without price updates", async () => {
    const api = await createApiClient(base, { key });
    const answer = await api.get("/v1/tokens/candle-chart", {
      tokenId: id(f.unpriced),
      days: 7,
      interval: 60,
    });
    assertError(
      answer,
      404,
      new RegExp(`^tokenId ${id(f.unpriced)} has no price update in the last 7 days$`),
    );
    // Deprecated in its errors too.
    assert.match(answer.headers.get("link") ?? "", /<\/api\/v1\/candles>; rel="successor-version"/);
  });

  it("GET /v1/tokens/price-provenance: 400 naming tokenId when it is missing, malformed or of an unconfigured network", async () => {
    const api = await createApiClient(base, { key });
    const path = "/v1/tokens/price-provenance";
    assertError(await api.get(path, {}), 400, /tokenId is required/);
    assertError(await api.get(path, { tokenId: "weth" }), 400, /tokenId must be an id/);
    assertError(
      await api.get(path, { tokenId: f.weth }),
      400,
      /^query parameter tokenId must be an id <address>:<chainId>, .*\(got "0xc02a/,
    );
    assertError(
      await api.get(path, { tokenId: `${f.weth}:999` }),
      400,
      /^tokenId: network 999 is not configured; the configured networks are 1$/,
    );
  });

  it("the stream answers a failing query with a 500 naming the connection, and stays open", async () => {
    const c = await connect({ key });
    c.send({ type: "ping" });
    await c.next((m) => m.type === "pong");
    // A fault of the query, not of the database's reachability: the table it reads is gone.
    await testDb.db.query("ALTER TABLE tokens RENAME TO tokens_away");
    try {
      c.send({ type: "subscribe", channel: "prices", asset_ids: id(f.weth) });
      const error = await c.next(isError(500));
      assert.match(String(error.message), /^unexpected processing error \(connection \d+\)$/);
    } finally {
      await testDb.db.query("ALTER TABLE tokens_away RENAME TO tokens");
    }
    // The connection goes on: the same subscription now succeeds.
    c.send({ type: "subscribe", channel: "prices", asset_ids: id(f.weth) });
    assert.equal((await c.next((m) => m.type !== "error")).type, "subscribed");
  });

  it("the stream answers 503 when the database is gone: on a subscription (staying open) and on a key check (closing with 1011)", async () => {
    const open = await connect({ key });
    open.send({ type: "ping" });
    await open.next((m) => m.type === "pong");
    // The database goes away for this server: its connections end, new ones are refused.
    await proxy.close();

    open.send({ type: "subscribe", channel: "prices", asset_ids: id(f.usdc) });
    const error = await open.next(isError(503));
    assert.equal(error.message, "the database did not answer in time; retry later");
    open.send({ type: "ping" });
    assert.deepEqual(await open.next(), { type: "pong" }, "the connection stays open");

    // A key never checked before must be read from the database: it cannot be, so 503 and 1011.
    const unchecked = await connect({ key: `${key}x` });
    const refused = await unchecked.next();
    assert.deepEqual(refused, {
      type: "error",
      statusCode: 503,
      message: "the database did not answer in time; retry later",
    });
    assert.deepEqual(await unchecked.closed, {
      code: 1011,
      reason: "the database did not answer in time; retry later",
    });
  });

  it("closes every stream connection with 1001 when the server stops", async () => {
    const a = await connect({ key });
    const b = await connect({ key });
    for (const c of [a, b]) {
      c.send({ type: "ping" });
      await c.next((m) => m.type === "pong");
    }
    closed = true;
    await app.close();
    for (const c of [a, b]) {
      assert.deepEqual(await c.closed, { code: 1001, reason: "the server is shutting down" });
    }
  });
});
