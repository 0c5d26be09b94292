import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WebSocket } from "ws";
import { type FixtureApi, startFixtureApi } from "../_test/api-fixture.js";
import { blockTime, fixture } from "../_test/market-fixture.js";
import { rawHttp } from "../_test/raw-http.js";
import { connectStream } from "../_test/stream-client.js";
import { updateMarketWindows } from "../pricing/market-windows.js";
import { withTransaction } from "../store/db.js";
import type { BalanceReader } from "./wallet-balances.js";

/** What "it answers" means here: no hang. Generous, so that a loaded 2-core machine never fails it. */
const ANSWER_WITHIN_MS = 20_000;

const REQUESTS_PER_ENDPOINT = 400;
const CONCURRENCY = 8;

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}

const f = fixture;
const id = (address: string) => `${address}:1`;

/** Every data endpoint with the names of its parameters, one valid query of it and a label. */
const endpoints: [string, string[], Record<string, string>, string?][] = [
  ["/v1/tokens/search", ["searchString", "chains"], { searchString: "usdc" }],
  ["/v1/tokens/metadata", ["tokenId"], { tokenId: id(f.usdc) }],
  ["/v1/tokens/line-chart", ["tokenId", "days"], { tokenId: id(f.weth), days: "1" }],
  [
    "/v1/tokens/candle-chart",
    ["tokenId", "days", "interval"],
    { tokenId: id(f.weth), days: "1", interval: "60" },
  ],
  ["/v1/tokens/price-provenance", ["tokenId"], { tokenId: id(f.weth) }],
  [
    "/v1/wallets/token-balances",
    ["contract", "chain", "wallets"],
    { contract: f.usdc, chain: "1", wallets: f.router },
  ],
  ["/v1/coins/price", ["symbol"], { symbol: "ETH" }],
  ["/api/v1/assets", ["asset_ids"], { asset_ids: id(f.usdc) }],
  [
    "/api/v1/candles",
    ["asset_id", "pair_id", "from", "to", "interval"],
    {
      asset_id: id(f.weth),
      pair_id: id(f.pair),
      from: "2026-11-20T00:00:00Z",
      to: "2026-11-20T06:00:00Z",
      interval: "1h",
    },
  ],
  [
    "/api/v1/trades",
    ["asset_id", "pair_id", "limit", "cursor"],
    { asset_id: id(f.weth), pair_id: id(f.pair) },
  ],
  ["/api/v1/pairs", ["asset_id", "limit"], { asset_id: id(f.weth) }],
  // The candle options beyond the spec: both styles of parameters mixed at random.
  [
    "/api/v1/candles",
    ["asset_id", "pair_id", "interval", "currency", "limit", "before", "from", "to"],
    {
      asset_id: id(f.weth),
      pair_id: id(f.pair),
      interval: "1h",
      currency: "usd",
      limit: "24",
      before: "1795132800",
    },
    "currency, limit, before",
  ],
];
const validValues = [
  `${f.usdc}:1`,
  `${f.weth}:1`,
  `${f.pair}:1`,
  `${f.weth}:1,${f.usdc}:1`,
  f.usdc,
  f.router,
  "1",
  "7",
  "60",
  "1h",
  "5m",
  "usdc",
  "ETH",
  "2026-11-20T00:00:00Z",
  "2026-11-20T06:00:00Z",
  "MTAyNC40",
  "100",
];
const hostileValues = [
  "",
  " ",
  "'",
  "' OR 1=1--",
  "'; DROP TABLE tokens; --",
  "\\",
  "%",
  "_",
  "%%",
  "\\%",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j-shaped string, sent literally on purpose
  "${jndi:ldap://x}",
  "<script>alert(1)</script>",
  "../../../../etc/passwd",
  "__proto__",
  "constructor",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  '{"$gt":""}',
  "-1",
  "0",
  "1e309",
  "NaN",
  "Infinity",
  "-0",
  "0x10",
  " 5",
  "5 ",
  "1.5",
  "99999999999999999999",
  "2147483648",
  "9999999999",
  `${f.usdc}:9999999999`,
  `${f.usdc}:2147483648`,
  `${f.usdc}:0`,
  `${f.usdc}:-1`,
  `${f.usdc}:1,`,
  `,${f.usdc}:1`,
  `${f.usdc}:1,,${f.weth}:1`,
  `0x${"g".repeat(40)}:1`,
  "2026-02-30T00:00:00Z",
  "2026-11-20T25:00:00Z",
  "9999-12-31T23:59:59Z",
  "9999-12-31T23:00:00Z",
  "0000-01-01T00:00:00Z",
  "0000-01-01T01:00:00Z",
  "0001-01-01T00:00:00Z",
  "10000-01-01T00:00:00Z",
  "+010000-01-01T00:00:00Z",
  "1969-12-31T23:59:59Z",
  "2100-01-01T00:00:00Z",
  "2100-01-01T00:00:01Z",
  "1e1",
  "+5",
  "05",
  "0b11",
  "0o7",
  "1_000",
  "2026-11-20T00:00:00+14:00",
  "1970-01-01T00:00:00Z",
  "ÄÖÜ",
  "😀😀😀",
  "\u202eevil",
  "\u0000",
  "\u0007bell",
  "\ud800",
  "ｕｓｄｃ",
  "İ",
  "ß",
];

/** A raw query-string value: URL-encoded, or deliberately left malformed. */
function encodeValue(raw: string, rng: ReturnType<typeof random>): string {
  // encodeURIComponent refuses lone surrogates; mode 3 sends one on purpose.
  const value = raw.replace(/[\ud800-\udfff]/g, "\ufffd");
  const mode = rng.int(10);
  if (mode === 0) return value.replace(/[&#= ]/g, "+"); // raw, as a sloppy client would send it
  if (mode === 1) return `${encodeURIComponent(value)}%`; // dangling escape
  if (mode === 2) return `%zz${encodeURIComponent(value)}`; // invalid escape
  if (mode === 3) return "%ED%A0%80"; // an encoded lone surrogate
  if (mode === 4) return "%C0%AF"; // overlong UTF-8
  return encodeURIComponent(value);
}

function randomValue(rng: ReturnType<typeof random>): string {
  const kind = rng.int(10);
  if (kind < 3) return rng.pick(validValues);
  if (kind < 7) return rng.pick(hostileValues);
  if (kind === 7) return rng.pick(validValues) + rng.pick(hostileValues);
  if (kind === 8) {
    const length = rng.pick([101, 500, 2000, 6000]);
    return rng
      .pick(["a", "0", ",", `${f.usdc}:1,`, "é", "%"])
      .repeat(Math.ceil(length / 4))
      .slice(0, length);
  }
  return Array.from({ length: 1 + rng.int(30) }, () => String.fromCharCode(rng.int(0x3000))).join("");
}

/**
 * A valid query with at most one parameter replaced by a random value, so that requests also get
 * past validation into the handler (purely random queries almost never do on most endpoints).
 */
function mutatedQuery(
  params: string[],
  valid: Record<string, string>,
  rng: ReturnType<typeof random>,
): string {
  const query = new URLSearchParams(valid);
  if (rng.int(3) > 0) query.set(rng.pick(params), randomValue(rng));
  return query.toString();
}

function randomQuery(params: string[], rng: ReturnType<typeof random>): string {
  const parts: string[] = [];
  const count = rng.int(params.length + 3);
  for (let i = 0; i < count; i++) {
    const name =
      rng.int(5) === 0
        ? rng.pick(["foo", "__proto__", "constructor", "", "a[b]", "x-api-key"])
        : rng.pick(params);
    const shape = rng.int(12);
    if (shape === 0)
      parts.push(name); // no "="
    else if (shape === 1) parts.push(`${name}=`);
    else parts.push(`${name}=${encodeValue(randomValue(rng), rng)}`);
  }
  return parts.join(rng.int(15) === 0 ? ";" : "&");
}

/**
 * One fuzzed GET with the key, its status counted: a 5xx, or a 4xx (but 431) without the JSON
 * error body, is a failure.
 */
async function fuzzGet(url: string, key: string, statuses: Map<number, number>, failures: string[]) {
  const response = await fetch(url, {
    headers: { "x-api-key": key },
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  const text = await response.text();
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  if (response.status >= 500)
    failures.push(`${response.status} ${url.slice(0, 300)} → ${text.slice(0, 200)}`);
  else if (response.status >= 400 && response.status !== 431) {
    const body = JSON.parse(text) as { statusCode?: unknown; message?: unknown };
    if (body.statusCode !== response.status || typeof body.message !== "string") {
      failures.push(`bad error body ${url.slice(0, 300)} → ${text.slice(0, 200)}`);
    }
  }
}

/** A rate limit the fuzzing never reaches. */
const UNLIMITED = { max: 1_000_000, windowMs: 60_000 };

const balances: BalanceReader = async ({ wallets }) => ({
  blockNumber: 1n,
  decimals: 6,
  balances: wallets.map(() => 1n),
});

describe("fuzz: random and hostile query strings", () => {
  let served: FixtureApi | undefined;
  let base: string;
  let key: string;

  before(async () => {
    served = await startFixtureApi({ api: { rateLimit: UNLIMITED } }, () => ({ balanceReader: balances }));
    ({ base, key } = served);
  });
  after(() => served?.close());

  for (const [index, [path, params, valid, label]] of endpoints.entries()) {
    const name = label ? `${path} (${label})` : path;
    it(`${name}: ${REQUESTS_PER_ENDPOINT} requests, never a 5xx, never a hang`, async () => {
      const rng = random(1000 + index);
      const queries = Array.from({ length: REQUESTS_PER_ENDPOINT }, () =>
        rng.int(4) === 0 ? mutatedQuery(params, valid, rng) : randomQuery(params, rng),
      );
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      let next = 0;
      const worker = async () => {
        while (next < queries.length) {
          const query = queries[next++] as string;
          const url = `${base}${path}?${query}`;
          try {
            await fuzzGet(url, key, statuses, failures);
          } catch (error) {
            failures.push(`${(error as Error).name} ${url.slice(0, 300)}`);
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      assert.deepEqual(failures, [], `statuses seen: ${JSON.stringify([...statuses])}`);
      assert.ok(
        statuses.has(200) || statuses.has(404),
        `some requests reach the handler and succeed: ${JSON.stringify([...statuses])}`,
      );
    });
  }

  /**
   * Fetches `path` with the key; asserts a JSON body in the error shape and an answer (no hang:
   * the signal aborts a fetch or a body still waiting).
   */
  const get = async (path: string) => {
    const response = await fetch(`${base}${path}`, {
      headers: { "x-api-key": key },
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    const text = await response.text();
    const body = JSON.parse(text) as { statusCode?: number; message?: string };
    return { status: response.status, body };
  };

  it("extreme dates: years 0, 1, 9999 and 10000 are a 400 naming the parameter, never a 5xx", async () => {
    const [, , valid] = endpoints.find(([p]) => p === "/api/v1/candles") as (typeof endpoints)[number];
    const cases: [string, string, string][] = [
      ["0000-01-01T00:00:00Z", "0000-01-01T01:00:00Z", "from"],
      ["0001-01-01T00:00:00Z", "0001-01-01T01:00:00Z", "from"],
      ["2026-11-20T00:00:00Z", "9999-12-31T23:00:00Z", "to"],
      ["9999-12-31T22:00:00Z", "9999-12-31T23:59:59Z", "from"],
      ["2026-11-20T00:00:00Z", "10000-01-01T00:00:00Z", "to"],
      ["1969-12-31T23:00:00Z", "1970-01-01T01:00:00Z", "from"],
      ["2099-12-31T23:00:00Z", "2100-01-01T00:00:01Z", "to"],
    ];
    for (const [from, to, named] of cases) {
      const query = new URLSearchParams({ ...valid, from, to });
      const { status, body } = await get(`/api/v1/candles?${query}`);
      assert.equal(status, 400, `${from} … ${to}: ${JSON.stringify(body)}`);
      assert.equal(body.statusCode, 400);
      assert.match(String(body.message), new RegExp(`query parameter ${named}\\b`));
    }
    // The bounds themselves are inside the range: no 4xx about the dates, no 5xx.
    for (const [from, to] of [
      ["1970-01-01T00:00:00Z", "1970-01-01T05:00:00Z"],
      ["2099-12-31T20:00:00Z", "2100-01-01T00:00:00Z"],
    ] as const) {
      const query = new URLSearchParams({ ...valid, from, to });
      const { status, body } = await get(`/api/v1/candles?${query}`);
      assert.ok(status === 200 || status === 404, `${from} … ${to}: ${status} ${JSON.stringify(body)}`);
    }
  });

  it("candle options: unix seconds at and past the bounds, extreme pages, mixed styles; never a 5xx", async () => {
    const base = { asset_id: id(f.weth), pair_id: id(f.pair), interval: "1h" };
    const cases: [Record<string, string>, number | "ok", string?][] = [
      [{ from: "0", to: "3600" }, "ok"],
      [{ from: "4102440000", to: "4102444800" }, "ok"],
      [{ from: "0", to: "4102444801" }, 400, "to"],
      [{ from: "99999999999999999", to: "3600" }, 400, "from"],
      [{ from: "1795132800", to: "1795132800" }, 400, "from"],
      [{ limit: "5000", before: "4102444800", interval: "1m" }, 200],
      [{ limit: "5000", before: "0", interval: "1d" }, 200],
      [{ limit: "1", before: "1" }, 200],
      [{ limit: "5000", interval: "1d", currency: "usd" }, 200],
      [{ limit: "1", before: "4102444801" }, 400, "before"],
      [{ limit: "1", before: "-1" }, 400, "before"],
      [{ limit: "1", before: "1e3" }, 400, "before"],
      [{ limit: "0" }, 400, "limit"],
      [{ limit: "5001" }, 400, "limit"],
      [{ limit: "10", from: "0" }, 400, "limit"],
      [{ before: "0" }, 400, "limit"],
      [{ currency: "USD", limit: "1" }, 400, "currency"],
    ];
    for (const [params, want, named] of cases) {
      const query = new URLSearchParams({ ...base, ...params });
      const { status, body } = await get(`/api/v1/candles?${query}`);
      const what = `${query}: ${status} ${JSON.stringify(body)}`;
      if (want === "ok") assert.ok(status === 200 || status === 404, what);
      else assert.equal(status, want, what);
      if (named) assert.match(String(body.message), new RegExp(`^query parameter ${named}\\b`), what);
    }
  });

  it("numbers are plain decimal digits only: 0x10, 1e1, +5, 05, ' 5' are a 400 naming the parameter", async () => {
    for (const days of ["0x10", "1e1", "+5", "05", " 5", "5 ", "0b1", "1.0", "1_0"]) {
      const query = new URLSearchParams({ tokenId: id(f.weth), days });
      const { status, body } = await get(`/v1/tokens/line-chart?${query}`);
      assert.equal(status, 400, `days=${JSON.stringify(days)}: ${JSON.stringify(body)}`);
      assert.match(String(body.message), /query parameter days /);
    }
    for (const limit of ["0x10", "1e1", "+5", "010"]) {
      const query = new URLSearchParams({ asset_id: id(f.weth), limit });
      const { status, body } = await get(`/api/v1/pairs?${query}`);
      assert.equal(status, 400, `limit=${limit}: ${JSON.stringify(body)}`);
      assert.match(String(body.message), /query parameter limit /);
    }
    // The same parameters written plainly reach the handler.
    const plain = await get(
      `/v1/tokens/line-chart?${new URLSearchParams({ tokenId: id(f.weth), days: "1" })}`,
    );
    assert.ok(plain.status === 200 || plain.status === 404, JSON.stringify(plain));
  });

  it("protocol-level errors (Expect, no Host, bare OPTIONS, garbage) answer JSON in the error shape", async () => {
    const port = Number(new URL(base).port);
    const requests = [
      "GET /v1/tokens/search?searchString=usdc HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nConnection: close\r\n\r\n",
      "GET /v1/tokens/search?searchString=usdc HTTP/1.1\r\nConnection: close\r\n\r\n",
      "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "OPTIONS /v1/tokens/search HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "OPTIONS /api/v1/pairs HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\nConnection: close\r\n\r\n",
      "GARBAGE\r\n\r\n",
      "GET /v1/tokens/search HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      `GET /${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n${"X-Big: y\r\n".repeat(3000)}\r\n`,
    ];
    for (const request of requests) {
      const started = performance.now();
      // rawHttp gives up at this bound with what it has: a body still hanging then fails below.
      const answer = await rawHttp(port, request, ANSWER_WITHIN_MS);
      const what = `${JSON.stringify(request.slice(0, 60))} → ${JSON.stringify(answer.raw.slice(0, 300))}`;
      assert.ok(performance.now() - started < ANSWER_WITHIN_MS, what);
      assert.ok(answer.status < 500, what);
      if (answer.status >= 400) {
        assert.match(answer.headers["content-type"] ?? "", /^application\/json/, what);
        const body = JSON.parse(answer.body) as { statusCode?: number; message?: string };
        assert.equal(body.statusCode, answer.status, what);
        assert.equal(typeof body.message, "string", what);
      }
    }
  });
});

/** A random JSON value: any type, nesting, hostile strings, long strings, odd numbers. */
function randomJson(rng: ReturnType<typeof random>, depth = 0): unknown {
  const kind = rng.int(depth > 2 ? 6 : 9);
  if (kind === 0) return null;
  if (kind === 1) return rng.pick([true, false]);
  if (kind === 2) return rng.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 31337, 1300]);
  if (kind === 3) return randomValue(rng);
  if (kind === 4) return rng.pick(validValues);
  if (kind === 5) return rng.pick(hostileValues);
  if (kind === 6) return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
  const fields = [
    "type",
    "channel",
    "pair_id",
    "asset_id",
    "asset_ids",
    "interval",
    "currency",
    "api_key",
    "__proto__",
    "constructor",
    "x",
  ];
  return Object.fromEntries(
    Array.from({ length: rng.int(5) }, () => [rng.pick(fields), randomJson(rng, depth + 1)]),
  );
}

/**
 * A hostile client message: a subscription with one field replaced by a random value (so that
 * messages reach the data checks), random JSON of any shape, huge strings, invalid JSON, or a
 * binary frame. Returns the frame and whether it goes as binary.
 */
function randomMessage(rng: ReturnType<typeof random>): { data: string | Buffer; binary: boolean } {
  const kind = rng.int(10);
  if (kind < 4) {
    const message: Record<string, unknown> = rng.pick([
      { type: "subscribe", channel: "trades", pair_id: id(f.pair), asset_id: id(f.weth) },
      { type: "subscribe", channel: "candles", pair_id: id(f.pair), asset_id: id(f.usdc), interval: "1h" },
      { type: "subscribe", channel: "prices", asset_ids: `${id(f.weth)},${id(f.usdc)}` },
      { type: "unsubscribe", channel: "trades", pair_id: id(f.pair), asset_id: id(f.weth) },
      { type: "unsubscribe", channel: "prices", asset_ids: id(f.usdc) },
      { type: "ping" },
      { type: "auth", api_key: "x" },
    ]);
    message[rng.pick(["type", "channel", "pair_id", "asset_id", "asset_ids", "interval", "currency"])] =
      randomJson(rng);
    return { data: JSON.stringify(message), binary: false };
  }
  if (kind < 7) return { data: JSON.stringify(randomJson(rng)), binary: false };
  if (kind === 7) {
    const size = rng.pick([100, 20_000, 200_000]);
    return {
      data: JSON.stringify({ type: "subscribe", channel: "prices", asset_ids: "a".repeat(size) }),
      binary: false,
    };
  }
  if (kind === 8) {
    return {
      data: rng.pick(["{", "}", "[1,", '{"type":', "nul", "", " ", "\u0000", '{"a":1}}', "😀"]),
      binary: false,
    };
  }
  return { data: Buffer.from(Array.from({ length: rng.int(64) }, () => rng.int(256))), binary: true };
}

describe("fuzz: random and hostile stream messages", () => {
  let served: FixtureApi | undefined;
  let base: string;
  let key: string;

  before(async () => {
    served = await startFixtureApi({
      api: { stream: { messagesPerSecond: 100_000, subscriptionsPerConnection: 10 } },
    });
    ({ base, key } = served);
  });
  after(() => served?.close());

  it("500 hostile messages on an open connection: each answered (a 4xx error when bad), never a crash", async () => {
    const rng = random(4242);
    const c = await connectStream(base, { key });
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 500; i++) {
      const { data, binary } = randomMessage(rng);
      const from = c.received.length;
      c.send(data, { binary });
      // A marker after each message (an unsubscription of an id of its own, acknowledged):
      // everything before its acknowledgement answers the message.
      const marker = `0x${i.toString(16).padStart(40, "0")}:1`;
      c.send({ type: "unsubscribe", channel: "prices", asset_ids: marker });
      await c.next((m) => m.type === "unsubscribed" && m.asset_ids === marker, 5000);
      const answers = c.received.slice(from).map((r) => r.message);
      answers.pop();
      const what = `${String(data).slice(0, 120)} → ${JSON.stringify(answers).slice(0, 300)}`;
      if (answers.length === 0) failures.push(`no answer: ${what}`);
      for (const answer of answers) {
        if (answer.type === "error") {
          const status = Number(answer.statusCode);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status < 400 || status > 499 || typeof answer.message !== "string") failures.push(what);
        } else if (
          !["subscribed", "unsubscribed", "price", "candle", "trade", "pong"].includes(answer.type)
        ) {
          failures.push(what);
        }
      }
    }
    assert.deepEqual(failures, [], `statuses: ${JSON.stringify([...statuses])}`);
    assert.ok(
      (statuses.get(400) ?? 0) > 100,
      `most hostile messages are 400s: ${JSON.stringify([...statuses])}`,
    );
    assert.equal(c.ws.readyState, WebSocket.OPEN, "the connection survived");
    await c.close();
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
  });

  it("hostile first messages (no key yet) are a 403 (or 429 after many failed keys) and a close, never a crash", async () => {
    const rng = random(777);
    for (let i = 0; i < 40; i++) {
      const c = await connectStream(base);
      const message =
        rng.int(3) === 0
          ? { data: JSON.stringify({ type: "auth", api_key: randomJson(rng) }), binary: false }
          : randomMessage(rng);
      c.send(message.data, { binary: message.binary });
      const answer = await c.next(() => true, 5000);
      const { code } = await c.closed;
      assert.equal(answer.type, "error", String(message.data).slice(0, 100));
      assert.ok(
        (answer.statusCode === 403 && code === 4403) || (answer.statusCode === 429 && code === 4429),
        `${String(message.data).slice(0, 100)} → ${JSON.stringify(answer)} ${code}`,
      );
    }
    // A text frame that is not UTF-8 is a protocol error the WebSocket layer closes (1007).
    const c = await connectStream(base, { key });
    c.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    assert.equal((await c.closed).code, 1007);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
  });
});

/** The market and discovery endpoints, over the fixture with its market windows built. */
const marketEndpoints: [string, string[], Record<string, string>][] = [
  ["/v1/tokens/market", ["tokenId"], { tokenId: `${id(f.weth)},${id(f.usdc)},${id(f.unpriced)}` }],
  ["/api/v1/pairs/market", ["pair_id"], { pair_id: `${id(f.pair)},${id(f.fakePair)}` }],
  ["/api/v1/pools/top", ["chain", "sort", "limit"], { chain: "1", sort: "trending" }],
  ["/v1/networks", ["chain"], {}],
  ["/v1/dexes", ["chain"], { chain: "1" }],
];

describe("fuzz: market and discovery endpoints", () => {
  let served: FixtureApi | undefined;
  let base: string;
  let key: string;

  before(async () => {
    served = await startFixtureApi({ api: { rateLimit: UNLIMITED } }, async (testDb) => {
      const now = blockTime(f.indexedBlock).getTime();
      await withTransaction(testDb.db, (client) =>
        updateMarketWindows(client, f.chainId, f.indexedBlock, () => now),
      );
      // The server's clock is the real one here.
      return { balanceReader: balances, now: undefined };
    });
    ({ base, key } = served);
  });
  after(() => served?.close());

  for (const [index, [path, params, valid]] of marketEndpoints.entries()) {
    it(`${path}: ${REQUESTS_PER_ENDPOINT / 2} requests, never a 5xx`, async () => {
      const rng = random(2000 + index);
      const statuses = new Map<number, number>();
      const failures: string[] = [];
      for (let i = 0; i < REQUESTS_PER_ENDPOINT / 2; i++) {
        const query = rng.int(3) === 0 ? mutatedQuery(params, valid, rng) : randomQuery(params, rng);
        await fuzzGet(`${base}${path}?${query}`, key, statuses, failures);
      }
      assert.deepEqual(failures, [], `statuses seen: ${JSON.stringify([...statuses])}`);
      assert.ok(statuses.has(200), `some requests succeed: ${JSON.stringify([...statuses])}`);
    });
  }

  it("the fixture's pair has its windows: 250 trades in its 24 hours", async () => {
    const response = await fetch(`${base}/api/v1/pairs/market?pair_id=${id(f.pair)}`, {
      headers: { "x-api-key": key },
    });
    const [pair] = (await response.json()) as { windows: Record<string, { buys: number; sells: number }> }[];
    const day = pair?.windows["24h"];
    assert.equal((day?.buys ?? 0) + (day?.sells ?? 0), f.swaps, JSON.stringify(pair));
  });
});
