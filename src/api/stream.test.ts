import * as assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { type FixtureApi, startFixtureApi } from "../_test/api-fixture.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { createApiClient } from "../_test/http-client.js";
import { fixture } from "../_test/market-fixture.js";
import { type Pipeline, startPipeline } from "../_test/pipeline.js";
import { connectStream, type StreamMessage, type TestStreamClient } from "../_test/stream-client.js";
import { type DeployedPool, peripheryOf } from "../devnet/deploy.js";
import { v2SwapTx } from "../devnet/periphery.js";
import { createDevnetRpc, type DevnetRpc } from "../devnet/rpc.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { listenForCommits, parseCommitNotice } from "../store/commit-notify.js";
import type { DbClient } from "../store/db.js";
import { createApiServer } from "./server.js";

/**
 * GET /v1/stream over real WebSocket connections (the `ws` client): authentication, bad
 * subscriptions, limits and a slow consumer on the hand-made market of the fixture; every message
 * the server sends is checked against StreamServerMessage of the published /openapi.json.
 */

const f = fixture;
const id = (address: string) => `${address}:1`;
const isError = (status: number) => (m: StreamMessage) => m.type === "error" && m.statusCode === status;

/** Reads /metrics and returns the value of one sample line (0 when absent). */
async function metric(base: string, line: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found ? Number(found.split(" ")[1]) : 0;
}

async function until(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("GET /v1/stream: authentication, errors and limits", { timeout: 120_000 }, () => {
  let served: FixtureApi | undefined;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  let revokedKey: string;
  const clients: TestStreamClient[] = [];
  const connect = async (options: { key?: string } = {}) => {
    const client = await connectStream(base, options);
    clients.push(client);
    return client;
  };

  before(async () => {
    served = await startFixtureApi({
      api: {
        stream: {
          connectionsPerKey: 3,
          subscriptionsPerConnection: 5,
          messagesPerSecond: 20,
          authTimeoutMs: 400,
          maxMessageBytes: 2048,
        },
      },
    });
    ({ app, base, key, revokedKey } = served);
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
    await until(
      "connections closed",
      async () => (await metric(base, "tokenmarket_stream_connections")) === 0,
    );
  });
  after(() => served?.close());

  it("is in /openapi.json: the upgrade, a 426 for a plain GET, and the message schemas with examples", async () => {
    const api = await createApiClient(app, { key });
    const operation = api.document.paths["/v1/stream"]?.get as Record<string, unknown> | undefined;
    assert.ok(operation, "GET /v1/stream is documented");
    const responses = operation.responses as Record<string, unknown>;
    assert.ok(responses["101"] && responses["426"], JSON.stringify(Object.keys(responses)));
    type Variant = { example?: unknown; properties: { type: { enum: string[] } } };
    const schemas = (
      api.document as unknown as { components: { schemas: Record<string, { anyOf: Variant[] }> } }
    ).components.schemas;
    const types = (name: string) => {
      const variants = schemas[name]?.anyOf ?? [];
      for (const v of variants) assert.ok(v.example, `${name}: each message with an example`);
      return variants.flatMap((v) => v.properties.type.enum);
    };
    assert.deepEqual(types("StreamClientMessage"), ["auth", "subscribe", "unsubscribe", "ping"]);
    assert.deepEqual(types("StreamServerMessage"), [
      "subscribed",
      "unsubscribed",
      "trade",
      "candle",
      "price",
      "rollback",
      "pong",
      "error",
    ]);
    // A plain GET (no upgrade) answers 426 in the error shape, checked against the document.
    const plain = await api.get("/v1/stream");
    assert.equal(plain.status, 426);
    assert.match((plain.body as { message: string }).message, /WebSocket/);
  });

  it("a key in the header or in the first message opens the stream; ping is answered", async () => {
    const header = await connect({ key });
    header.send({ type: "ping" });
    assert.deepEqual(await header.next(), { type: "pong" });
    const browser = await connect();
    browser.send({ type: "auth", api_key: key });
    browser.send({ type: "ping" });
    assert.deepEqual(await browser.next(), { type: "pong" });
    browser.send({ type: "auth", api_key: key });
    assert.equal((await browser.next(isError(400))).message, "the connection is already authenticated");
  });

  it("a bad key (header or first message), a revoked key, no auth message and a wrong first message: 403 and close 4403", async () => {
    const cases: [string, () => Promise<TestStreamClient>, RegExp][] = [
      ["header", () => connect({ key: "tm_not_a_key_not_a_key_not_a_key_x" }), /unknown or revoked/],
      ["revoked header", () => connect({ key: revokedKey }), /unknown or revoked/],
      [
        "first message",
        async () => {
          const c = await connect();
          c.send({ type: "auth", api_key: "tm_not_a_key_not_a_key_not_a_key_y" });
          return c;
        },
        /unknown or revoked/,
      ],
      ["no auth message", () => connect(), /no API key: send \{"type":"auth"/],
      [
        "subscribe before auth",
        async () => {
          const c = await connect();
          c.send({ type: "subscribe", channel: "prices", asset_ids: id(f.weth) });
          return c;
        },
        /authentication required: the first message must be/,
      ],
      [
        "invalid JSON before auth",
        async () => {
          const c = await connect();
          c.send("{nope");
          return c;
        },
        /authentication required: the message is not valid JSON/,
      ],
    ];
    for (const [what, open, message] of cases) {
      const c = await open();
      const error = await c.next();
      assert.equal(error.type, "error", what);
      assert.equal(error.statusCode, 403, what);
      assert.match(String(error.message), message, what);
      const { code } = await c.closed;
      assert.equal(code, 4403, what);
    }
  });

  it("bad subscriptions get a 400 naming the field (404 for an unknown pair), and the connection stays open", async () => {
    const c = await connect({ key });
    const pair = id(f.pair);
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [
        { type: "subscribe", channel: "orders", pair_id: pair },
        400,
        /^channel must be one of trades, candles, prices \(got "orders"\)$/,
      ],
      [{ type: "subscribe", channel: "trades", asset_id: id(f.weth) }, 400, /^pair_id is required$/],
      [{ type: "subscribe", channel: "trades", pair_id: pair }, 400, /^asset_id is required$/],
      [
        { type: "subscribe", channel: "candles", pair_id: pair, asset_id: id(f.weth), interval: "2m" },
        400,
        /^interval must be one of 1m, 5m, 15m, 30m, 1h, 4h, 1d \(got "2m"\)$/,
      ],
      [
        { type: "subscribe", channel: "trades", pair_id: pair, asset_id: id(f.wbtc) },
        400,
        new RegExp(`^asset_id ${id(f.wbtc)} is not one of the two tokens of pair ${pair}$`),
      ],
      [
        { type: "subscribe", channel: "trades", pair_id: id(f.fakeUsdc), asset_id: id(f.weth) },
        404,
        new RegExp(`^pair_id ${id(f.fakeUsdc)} is not a known pair$`),
      ],
      [
        { type: "subscribe", channel: "trades", pair_id: `${f.pair}:5`, asset_id: id(f.weth) },
        400,
        /^pair_id: network 5 is not configured; the configured networks are 1$/,
      ],
      [
        { type: "subscribe", channel: "trades", pair_id: "0x12", asset_id: id(f.weth) },
        400,
        /^pair_id must be an id <address>:<chainId>/,
      ],
      [
        { type: "subscribe", channel: "prices", asset_ids: 5 },
        400,
        /^asset_ids must be a string \(got "5"\)$/,
      ],
      [
        { type: "subscribe", channel: "prices", asset_ids: `${id(f.weth)},,` },
        400,
        /^asset_ids must be an id/,
      ],
      [
        { type: "publish" },
        400,
        /^type must be one of auth, subscribe, unsubscribe, ping \(got "publish"\)$/,
      ],
      [{ channel: "trades" }, 400, /^type is required$/],
    ];
    for (const [message, status, wording] of cases) {
      c.send(message);
      const error = await c.next();
      assert.equal(error.type, "error", JSON.stringify(message));
      assert.equal(error.statusCode, status, JSON.stringify(error));
      assert.match(String(error.message), wording, JSON.stringify(error));
    }
    c.send("not json");
    assert.equal((await c.next()).message, "the message is not valid JSON");
    c.send(Buffer.from("{}"), { binary: true });
    assert.equal((await c.next()).message, "messages must be JSON text frames, not binary frames");
    c.send({ type: "ping", pad: "x".repeat(3000) });
    assert.match(
      String((await c.next(isError(400))).message),
      /^the message is \d+ bytes long; at most 2048 are allowed$/,
    );
    c.send({ type: "ping" });
    assert.deepEqual(await c.next(), { type: "pong" }, "still open after every error");
  });

  it("subscribes and unsubscribes: acknowledgements echo the parameters, prices come at once, 429 beyond the limit", async () => {
    const c = await connect({ key });
    c.send({
      type: "subscribe",
      channel: "trades",
      pair_id: id(f.pair).toUpperCase().replace("0X", "0x"),
      asset_id: id(f.weth),
    });
    const ack = await c.next();
    assert.deepEqual(ack, {
      type: "subscribed",
      channel: "trades",
      pair_id: id(f.pair),
      asset_id: id(f.weth),
      block: f.indexedBlock,
    });
    c.send({
      type: "subscribe",
      channel: "prices",
      asset_ids: `${id(f.weth)}, ${id(f.usdc)},${id(f.unpriced)}`,
    });
    assert.deepEqual(await c.next(), {
      type: "subscribed",
      channel: "prices",
      asset_ids: `${id(f.weth)},${id(f.usdc)},${id(f.unpriced)}`,
    });
    const api = await createApiClient(app, { key });
    const assets = await api.get("/api/v1/assets", {
      asset_ids: `${id(f.weth)},${id(f.usdc)},${id(f.unpriced)}`,
    });
    for (const record of assets.body as unknown[]) {
      assert.deepEqual(await c.next((m) => m.type === "price"), { type: "price", data: record });
    }
    c.send({
      type: "subscribe",
      channel: "candles",
      pair_id: id(f.pair),
      asset_id: id(f.usdc),
      interval: "1h",
    });
    assert.deepEqual(await c.next(), {
      type: "subscribed",
      channel: "candles",
      pair_id: id(f.pair),
      asset_id: id(f.usdc),
      interval: "1h",
      currency: "token",
    });
    // 1 (trades) + 3 (prices) + 1 (candles 1h) + 1 = 6 > 5 subscriptions: a 429, and nothing registered.
    const oneMinuteCandles = {
      type: "subscribe",
      channel: "candles",
      pair_id: id(f.pair),
      asset_id: id(f.usdc),
      interval: "1m",
    };
    c.send(oneMinuteCandles);
    const limit = await c.next();
    assert.equal(limit.statusCode, 429, JSON.stringify(limit));
    assert.match(String(limit.message), /^too many subscriptions: at most 5 per connection/);
    c.send({ type: "unsubscribe", channel: "prices", asset_ids: id(f.unpriced) });
    assert.deepEqual(await c.next(), { type: "unsubscribed", channel: "prices", asset_ids: id(f.unpriced) });
    c.send(oneMinuteCandles);
    assert.equal((await c.next()).type, "subscribed", "room again after the unsubscribe");
    assert.equal(await metric(base, "tokenmarket_stream_subscriptions"), 5);
  });

  it("limits: connections per key (429, close 4429) and messages per second (429, the others ignored)", async () => {
    const open = await Promise.all([1, 2, 3].map(() => connect({ key })));
    for (const c of open) {
      c.send({ type: "ping" });
      await c.next();
    }
    const fourth = await connect({ key });
    const error = await fourth.next();
    assert.equal(error.statusCode, 429);
    assert.match(String(error.message), /^too many stream connections for this key: at most 3/);
    assert.equal((await fourth.closed).code, 4429);

    // The budget is per connection and fixed one-second window, opened by the window's first
    // message: a connection of its own, whose first message is the flood's, once the server has
    // released the slot of one closed.
    await (open[2] as TestStreamClient).close();
    await until(
      "the closed connection released",
      async () => (await metric(base, "tokenmarket_stream_connections")) === 2,
    );
    const flood = await connect({ key });
    for (let i = 0; i < 30; i++) flood.send({ type: "ping" });
    await flood.next(isError(429));
    // A second after the 429, a new window (time must pass: there is no event to await): a
    // message is answered again. The marker (an auth on an
    // open connection: a 400 of its own kind) is answered after every pong of the flood, since the
    // server answers a connection's messages in order (the 429 itself is sent at once, so it may
    // come among the pongs); what lies before it is what the flood got.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    flood.send({ type: "auth", api_key: key });
    await flood.next(isError(400));
    const answers = flood.received.map((r) => `${r.message.type} ${r.message.statusCode ?? ""}`.trim());
    assert.equal(answers.at(-1), "error 400", "the marker is answered last");
    assert.deepEqual(
      answers.slice(0, -1).sort(),
      ["error 429", ...Array<string>(20).fill("pong")],
      "20 pongs, one 429 for the excess, the other 9 ignored",
    );
  });

  it("a frame over 1 MiB closes the connection with 1009", async () => {
    const c = await connect({ key });
    c.send(`"${"x".repeat(1_100_000)}"`);
    assert.equal((await c.closed).code, 1009);
  });
});

describe("GET /v1/stream: a slow consumer", { timeout: 120_000 }, () => {
  let served: FixtureApi | undefined;
  let base: string;
  let key: string;

  before(async () => {
    served = await startFixtureApi({
      api: {
        stream: { maxBufferedBytes: 16_384, messagesPerSecond: 100_000, subscriptionsPerConnection: 1000 },
      },
    });
    ({ base, key } = served);
  });
  after(() => served?.close());

  it("a client that does not read is sent nothing more and closed with 4008 'slow consumer: …'", async () => {
    const c = await connectStream(base, { key });
    c.send({ type: "ping" });
    await c.next();
    // The client stops reading its socket; it keeps sending unsubscriptions, each acknowledged
    // with the echo of a long list, until the server's send buffer is over 16 kB (after the
    // kernel's buffers are full).
    const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const list = Array.from({ length: 100 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}:1`).join(",");
    const slowClosed = 'tokenmarket_stream_connections_closed_total{reason="slow_consumer"}';
    const acksSent = 'tokenmarket_stream_messages_sent_total{type="unsubscribed"}';
    assert.equal(await metric(base, slowClosed), 0);
    // In steps of 20, each answered before the next, so that the server is never flooded.
    let sent = 0;
    await until(
      "the server to close the slow consumer",
      async () => {
        for (let i = 0; i < 20; i++, sent++)
          c.send({ type: "unsubscribe", channel: "prices", asset_ids: list });
        await until("the step's answers", async () => {
          const closed = (await metric(base, slowClosed)) > 0;
          return closed || (await metric(base, acksSent)) === sent;
        });
        return (await metric(base, slowClosed)) > 0;
      },
      60_000,
    );
    const acknowledged = await metric(base, acksSent);
    socket.resume();
    const { code, reason } = await c.closed;
    assert.equal(code, 4008);
    assert.match(reason, /^slow consumer: \d+ bytes not yet read, at most 16384$/);
    // Everything the server sent before deciding arrives, nothing after it.
    const acks = c.received.filter((r) => r.message.type === "unsubscribed").length;
    assert.equal(acks, acknowledged, `${sent} sent, ${acks} acknowledgements received`);
    assert.ok(acks < sent, "the server stopped answering before the client stopped asking");
  });
});

type Trade = { pair_id: string; block_number: number; log_index: number };
type Ack = StreamMessage & { block: number };
const CHAIN = 31337;
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

describe("GET /v1/stream on a live devnet", { timeout: 600_000 }, () => {
  let testDb: TestDb;
  let pipeline: Pipeline;
  let key: string;
  let rpc: DevnetRpc;
  /** A and B listen for commits (two API processes' worth); C only polls. */
  const servers: Record<"a" | "b" | "c", { app: FastifyInstance; base: string }> = {} as never;
  let listener: DbClient;
  /** Every commit notification, with when the test heard it. */
  const commits: { block: number; at: number }[] = [];
  const clients: TestStreamClient[] = [];
  const pairId = (pool: DeployedPool) => `${pool.address}:${CHAIN}`;
  const tokenId = (address: string) => `${address}:${CHAIN}`;

  before(async () => {
    testDb = await createTestDb({ max: 20 });
    pipeline = await startPipeline({ db: testDb.db, historyDays: 0.5 });
    rpc = createDevnetRpc(pipeline.rpcUrl);
    ({ key } = await createApiKey(testDb.db, "stream"));
    // Subscribing to every pair at once is a burst of messages.
    const stream = { ...pipeline.config.api.stream, messagesPerSecond: 1000 };
    const listening = { ...pipeline.config, api: { ...pipeline.config.api, stream } };
    const polling = { ...listening, api: { ...listening.api, stream: { ...stream, pollIntervalMs: 200 } } };
    for (const name of ["a", "b", "c"] as const) {
      const app = createApiServer({
        config: name === "c" ? polling : listening,
        db: testDb.db,
        logger: createSilentLogger(),
        rpcMetrics: pipeline.rpcMetrics,
        listenForCommits: name !== "c",
      });
      servers[name] = { app, base: await app.listen({ host: "127.0.0.1", port: 0 }) };
    }
    listener = await testDb.db.connect();
    listener.on("notification", (message) => {
      const notice = parseCommitNotice(message.payload);
      if (notice) commits.push({ block: notice.block, at: performance.timeOrigin + performance.now() });
    });
    await listenForCommits(listener);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    for (const s of Object.values(servers)) await s.app.close();
    listener?.release();
    await pipeline?.close();
    await testDb?.drop();
  });

  const connect = async (server: "a" | "b" | "c") => {
    const client = await connectStream(servers[server].base, { key });
    clients.push(client);
    return client;
  };
  const subscribe = async (client: TestStreamClient, message: Record<string, unknown>) => {
    client.send({ type: "subscribe", ...message });
    const ack = await client.next((m) => m.type === "subscribed" || m.type === "error");
    assert.equal(ack.type, "subscribed", JSON.stringify(ack));
    return ack as Ack;
  };
  /** The trades of a pair after `block` as /api/v1/trades lists them, oldest first (all pages). */
  const restTradesAfter = async (pool: DeployedPool, asset: string, block: number) => {
    const api = await createApiClient(servers.a.base, { key });
    const out: Trade[] = [];
    let cursor: string | null = null;
    for (;;) {
      const query: Record<string, string | number> = {
        pair_id: pairId(pool),
        asset_id: tokenId(asset),
        limit: 1000,
      };
      if (cursor) query.cursor = cursor;
      const answer = await api.get("/api/v1/trades", query);
      assert.equal(answer.status, 200, answer.text);
      const page = answer.body as Trade[];
      for (const trade of page) {
        if (trade.block_number <= block) return out.reverse();
        out.push(trade);
      }
      cursor = answer.headers.get("x-next-cursor");
      if (!cursor) return out.reverse();
    }
  };
  const streamedTrades = (client: TestStreamClient, pool: DeployedPool, asset: string) =>
    client.received
      .map((r) => r.message)
      .filter(
        (m) =>
          m.type === "trade" && m.asset_id === tokenId(asset) && (m.data as Trade).pair_id === pairId(pool),
      )
      .map((m) => m.data as Trade);
  /** Until every client has received the newest trade of every pool /api/v1/trades lists. */
  const caughtUp = async (
    subs: { client: TestStreamClient; pool: DeployedPool; asset: string; ack: Ack }[],
  ) =>
    until(
      "the streams to catch up with the index",
      async () => {
        for (const s of subs) {
          const newest = (await restTradesAfter(s.pool, s.asset, s.ack.block)).at(-1);
          const last = streamedTrades(s.client, s.pool, s.asset).at(-1);
          if (
            newest &&
            (!last || newest.block_number !== last.block_number || newest.log_index !== last.log_index)
          )
            return false;
        }
        return true;
      },
      30_000,
    );

  it("streams every trade once, in order, equal to /api/v1/trades; candles and prices equal REST; the commit → message delay reported", async (t) => {
    const pools = pipeline.deployment.pools;
    const [a, b, c] = [await connect("a"), await connect("b"), await connect("c")];
    const subs: { client: TestStreamClient; pool: DeployedPool; asset: string; ack: Ack }[] = [];
    for (const client of [a, b, c]) {
      for (const [i, pool] of pools.entries()) {
        // The first pool is also followed from token1's side.
        for (const asset of i === 0 ? [pool.token0, pool.token1] : [pool.token0]) {
          const ack = await subscribe(client, {
            channel: "trades",
            pair_id: pairId(pool),
            asset_id: tokenId(asset),
          });
          subs.push({ client, pool, asset, ack });
        }
      }
    }
    const charted = [
      pools.find((p) => p.protocol === "v2"),
      pools.find((p) => p.protocol === "v3"),
    ] as DeployedPool[];
    const candleTopics = charted.flatMap((pool) => [
      { pool, asset: pool.token0, interval: "1m", seconds: 60 },
      { pool, asset: pool.token1, interval: "1m", seconds: 60 },
      { pool, asset: pool.token0, interval: "1h", seconds: 3600 },
      { pool, asset: pool.token1, interval: "1m", seconds: 60, currency: "usd" },
    ]);
    for (const topic of candleTopics) {
      await subscribe(a, {
        channel: "candles",
        pair_id: pairId(topic.pool),
        asset_id: tokenId(topic.asset),
        interval: topic.interval,
        ...(topic.currency ? { currency: topic.currency } : {}),
      });
    }
    const assetIds = Object.values(pipeline.deployment.tokens).map((token) => tokenId(token.address));
    await subscribe(a, { channel: "prices", asset_ids: assetIds.join(",") });
    const initialPrices = await Promise.all(assetIds.map(() => a.next((m) => m.type === "price")));

    // Live trading at wall-clock time, as `tokenmarket start` runs it.
    pipeline.simulator.startLive({ blockIntervalMs: 300 });
    const tradesOf = (client: TestStreamClient) => client.received.filter((r) => r.message.type === "trade");
    await until("200 trades on the stream", () => tradesOf(a).length >= 200, 300_000);
    await pipeline.simulator.stop();
    await pipeline.waitIndexed();
    await caughtUp(subs);

    // Trades: exactly the REST list after the acknowledgement's block, in order, on every server.
    let compared = 0;
    for (const s of subs) {
      const rest = await restTradesAfter(s.pool, s.asset, s.ack.block);
      assert.deepEqual(streamedTrades(s.client, s.pool, s.asset), rest, `${s.pool.key} from ${s.asset}`);
      compared += rest.length;
    }
    assert.ok(compared >= 3 * 200, `${compared} trades compared`);
    // A and B (two processes' worth) streamed the same trades where both were subscribed.
    for (const pool of pools) {
      const after = Math.max(...subs.filter((s) => s.pool === pool).map((s) => s.ack.block));
      const common = (client: TestStreamClient) =>
        streamedTrades(client, pool, pool.token0).filter((trade) => trade.block_number > after);
      assert.deepEqual(common(a), common(b), pool.key);
      assert.deepEqual(common(a), common(c), pool.key);
    }

    // Delay from the indexer's commit (its notification) to the client's message.
    const delays: number[] = [];
    for (const client of [a, b]) {
      for (const r of tradesOf(client)) {
        const block = (r.message.data as Trade).block_number;
        const commit = commits.find((n) => n.block >= block);
        assert.ok(commit, `the commit of block ${block} was heard`);
        delays.push(r.at - commit.at);
      }
    }
    delays.sort((x, y) => x - y);
    const p50 = percentile(delays, 50);
    const p99 = percentile(delays, 99);
    t.diagnostic(
      `commit → message delay over ${delays.length} trade messages: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(delays.at(-1) ?? 0).toFixed(1)} ms`,
    );
    // Reported, not asserted: speed on a shared machine is the benchmarks' business.
    assert.ok(delays.length >= 50, `${delays.length} samples`);

    // Candles: the last pushed of each interval equals /api/v1/candles over the pushed range.
    const api = await createApiClient(servers.a.base, { key });
    for (const topic of candleTopics) {
      const pushed = a.received
        .map((r) => r.message)
        .filter(
          (m) =>
            m.type === "candle" &&
            m.pair_id === pairId(topic.pool) &&
            m.asset_id === tokenId(topic.asset) &&
            m.interval === topic.interval &&
            m.currency === (topic.currency ?? "token"),
        )
        .map((m) => m.data as { date: string; time: number });
      const label = `${topic.pool.key} ${topic.interval} ${topic.currency ?? "token"}`;
      assert.ok(pushed.length > 0, `${label}: candles pushed`);
      const last = new Map(pushed.map((candle) => [candle.time, candle]));
      const times = [...last.keys()].sort((x, y) => x - y);
      const rest = await api.get("/api/v1/candles", {
        pair_id: pairId(topic.pool),
        asset_id: tokenId(topic.asset),
        interval: topic.interval,
        ...(topic.currency ? { currency: topic.currency } : {}),
        from: new Date(times[0] as number).toISOString(),
        to: new Date((times.at(-1) as number) + topic.seconds * 1000).toISOString(),
      });
      assert.equal(rest.status, 200, rest.text);
      const restByTime = new Map((rest.body as { time: number }[]).map((candle) => [candle.time, candle]));
      for (const time of times) {
        assert.deepEqual(last.get(time), restByTime.get(time), `${label} at ${new Date(time).toISOString()}`);
      }
    }
    // Prices: the last pushed record of each token equals /api/v1/assets now; and prices moved.
    const assets = await api.get("/api/v1/assets", { asset_ids: assetIds.join(",") });
    const prices = a.received.map((r) => r.message).filter((m) => m.type === "price");
    for (const record of assets.body as { contract: string }[]) {
      const pushed = prices
        .filter((m) => (m.data as { contract: string }).contract === record.contract)
        .at(-1);
      assert.deepEqual(pushed?.data, record, record.contract);
    }
    assert.ok(prices.length > initialPrices.length, "prices changed while trading");
  });

  it("a reorg pushes a rollback before the corrected trades (listening and polling servers alike)", async () => {
    const pool = pipeline.deployment.pools.find((p) => p.key === "v2:WETH/USDC") as DeployedPool;
    const usdc = pipeline.deployment.tokens.USDC;
    const periphery = peripheryOf(pipeline.deployment);
    const traders = pipeline.wallets;
    const swap = async (i: number, usd: number) => {
      const tx = v2SwapTx({
        periphery,
        from: traders[i % traders.length] as `0x${string}`,
        path: [usdc.address, usdc.address === pool.token0 ? pool.token1 : pool.token0],
        amountIn: BigInt(Math.round(usd * 10 ** usdc.unitDecimals)),
      });
      await rpc.request("eth_sendTransaction", [
        { from: tx.from, to: tx.to, data: tx.data, gas: `0x${tx.gas.toString(16)}` },
      ]);
    };
    const head = async () => Number(await rpc.request<string>("eth_blockNumber"));
    await pipeline.waitIndexed();
    const [r, p] = [await connect("a"), await connect("c")];
    const acks = [
      await subscribe(r, { channel: "trades", pair_id: pairId(pool), asset_id: tokenId(pool.token0) }),
      await subscribe(p, { channel: "trades", pair_id: pairId(pool), asset_id: tokenId(pool.token0) }),
    ];
    const fork = await head();
    const snapshot = await rpc.request<string>("evm_snapshot");
    for (let i = 0; i < 3; i++) await swap(i, 100 + i);
    const oldHead = await head();
    for (const client of [r, p])
      await client.next((m) => m.type === "trade" && (m.data as Trade).block_number === oldHead, 30_000);

    // The other branch: from the snapshot, other trades in more blocks.
    assert.equal(await rpc.request("evm_revert", [snapshot]), true);
    for (let i = 0; i < 5; i++) await swap(i + 7, 300 + i);
    await pipeline.waitIndexed(await head());
    for (const [i, client] of [r, p].entries()) {
      const ack = acks[i] as Ack;
      await caughtUp([{ client, pool, asset: pool.token0, ack }]);
      const messages = client.received
        .map((m) => m.message)
        .filter((m) => m.type === "trade" || m.type === "rollback");
      const at = messages.findIndex((m) => m.type === "rollback");
      assert.ok(
        at > 0,
        `a rollback after the old branch's trades: ${JSON.stringify(messages.map((m) => m.type))}`,
      );
      const rollback = messages[at] as StreamMessage & { chain: number; block: number };
      assert.equal(rollback.chain, CHAIN);
      if (i === 0) assert.equal(rollback.block, fork, "the listening server names the common ancestor");
      else
        assert.ok(
          rollback.block <= fork,
          `the polling server rolls back at or below the fork (${rollback.block})`,
        );
      const before = messages.slice(0, at).map((m) => m.data as Trade);
      assert.equal(before.length, 3, "the old branch's trades came first");
      const corrected = messages.slice(at + 1).map((m) => m.data as Trade);
      assert.equal(
        messages.filter((m) => m.type === "rollback").length,
        1,
        `one rollback (client ${i}): ${JSON.stringify(messages.map((m) => (m.type === "rollback" ? `rollback ${(m as unknown as { block: number }).block}` : `trade ${(m.data as Trade).block_number}`)))}`,
      );
      assert.deepEqual(
        corrected,
        await restTradesAfter(pool, pool.token0, rollback.block),
        "then the new branch's trades",
      );
      assert.equal(corrected.filter((trade) => trade.block_number > fork).length, 5);
    }
  });
});
