/**
 * The API at scale: latency over real HTTP of the queries a chart or a
 * token page makes, against a database filled by bench/loader.ts, the answer cache off so every
 * request reaches Postgres. One request at a time (the latency of one query, not the throughput
 * of many), each endpoint after a warm-up, with parameters varied over pairs, days, tokens and
 * cursors; beside `/healthz` measured the same way in the same run (the HTTP round trip's floor)
 * and a `SELECT 1` round trip to the same Postgres (the floor of each of the few statements an
 * answer makes: on a machine loaded well past its cores, each waits its turn for a CPU).
 */

import http from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { createApiServer } from "../src/api/server.js";
import { encodeCursor } from "../src/api/trade-records.js";
import type { Config } from "../src/config/schema.js";
import { createSilentLogger } from "../src/internal/logger.js";
import { createApiKey, revokeApiKey } from "../src/store/api-keys.js";
import type { Db } from "../src/store/db.js";
import { CHAIN, USDC, WETH } from "./loader.js";

const DAY = 86_400_000;

export type Latency = { samples: number; p50Ms: number; p99Ms: number; maxMs: number; non200: number };
export type ApiScaleResult = {
  baseline: Latency;
  /** One `SELECT 1` round trip to the same Postgres from this process: the floor of each query an answer makes. */
  databaseRoundTrip: Latency;
  endpoints: Record<string, Latency & { p99OverBaseline: number; example: string }>;
};

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * How the benchmark's client fetches: `http` (default) is node:http on one kept-alive socket, timed
 * to the answer's last byte, its body decompressed and checked after the clock stops (a real
 * client does that on its own machine, not on the API's cores); `fetch` is undici's fetch with
 * its decompression inside the timing, as a browser's page measures it (`BENCH_API_CLIENT=fetch`).
 */
export type BenchClient = "http" | "fetch";

/** GET over node:http on one kept-alive socket (`close` ends it). */
function httpGetter(base: string, key: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(base);
  const get = (path: string) =>
    new Promise<{ status: number; body: Buffer; encoding: string | undefined }>((resolve, reject) => {
      const request = http.get(
        {
          host: url.hostname,
          port: url.port,
          path,
          agent,
          // What fetch (and a browser over plain HTTP) asks for.
          headers: { "x-api-key": key, "accept-encoding": "gzip, deflate" },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks),
              encoding: response.headers["content-encoding"],
            }),
          );
        },
      );
      request.on("error", reject);
    });
  return { get, close: () => agent.destroy() };
}

/** The JSON of an answer's body as the server encoded it: a check that it is whole. */
function decodeBody(body: Buffer, encoding: string | undefined): unknown {
  const raw =
    encoding === "gzip"
      ? gunzipSync(body)
      : encoding === "br"
        ? brotliDecompressSync(body)
        : encoding === "deflate"
          ? inflateSync(body)
          : body;
  return JSON.parse(raw.toString("utf8"));
}

/** Requests `paths` one at a time (after `warmup` unmeasured ones) and returns their latencies. */
async function timeRequests(
  base: string,
  key: string,
  paths: readonly string[],
  warmup: number,
  client: BenchClient = "http",
): Promise<Latency> {
  const viaHttp = client === "http" ? httpGetter(base, key) : null;
  const get = async (path: string) => {
    if (viaHttp) {
      const { status, body, encoding } = await viaHttp.get(path);
      return { status, check: () => decodeBody(body, encoding) };
    }
    const response = await fetch(`${base}${path}`, { headers: { "x-api-key": key } });
    await response.arrayBuffer();
    return { status: response.status, check: () => {} };
  };
  try {
    return await timeEach(paths, warmup, get);
  } finally {
    viaHttp?.close();
  }
}

/** The latencies of `get` over `paths`, one at a time, after `warmup` unmeasured ones. */
async function timeEach(
  paths: readonly string[],
  warmup: number,
  get: (path: string) => Promise<{ status: number; check: () => unknown }>,
): Promise<Latency> {
  for (let i = 0; i < warmup; i++) await get(paths[i % paths.length] as string);
  const times: number[] = [];
  let non200 = 0;
  for (const path of paths) {
    const t = performance.now();
    const { status, check } = await get(path);
    times.push(performance.now() - t);
    if (status !== 200) non200 += 1;
    check();
  }
  times.sort((a, b) => a - b);
  return {
    samples: times.length,
    p50Ms: round(percentile(times, 50)),
    p99Ms: round(percentile(times, 99)),
    maxMs: round(times.at(-1) ?? Number.NaN),
    non200,
  };
}

/** Deterministic pseudo-random picks (the same requests in every run of a profile). */
function picker(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

/**
 * The requests of each measured query, `samples` of each, drawn from what the database holds:
 * the 50 busiest pairs (by trades), the minute candles' days, old positions of busy pairs' trades
 * for deep cursors, and tokens' symbols and names for search.
 */
export async function scaleRequests(
  db: Db,
  options: { end: number; from: number; minuteDays: number; samples: number },
): Promise<Record<string, string[]>> {
  const { rows: busy } = await db.query<{ pool: string; token0: string }>(
    `SELECT c.pool, p.token0 FROM candles_1d c JOIN pools p ON p.chain_id = c.chain_id AND p.address = c.pool
     WHERE c.chain_id = $1 GROUP BY c.pool, p.token0 ORDER BY sum(c.trades) DESC LIMIT 50`,
    [CHAIN],
  );
  const { rows: tokens } = await db.query<{ symbol: string; name: string }>(
    "SELECT symbol, name FROM tokens WHERE chain_id = $1 ORDER BY address LIMIT 2000",
    [CHAIN],
  );
  const pick = picker(10);
  const n = options.samples;
  const qs = (params: Record<string, string | number>) =>
    new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  const pair = () => busy[pick(busy.length)] as { pool: string; token0: string };
  const id = (address: string) => `${address}:${CHAIN}`;
  const minuteDays = Math.max(
    1,
    Math.min(options.minuteDays, Math.floor((options.end - options.from) / DAY)),
  );
  const historyDays = Math.max(1, Math.min(90, Math.floor((options.end - options.from) / DAY)));

  const out: Record<string, string[]> = {
    "candles 1m × 1 day": [],
    [`candles 1h × ${historyDays} days`]: [],
    "trades, first page": [],
    "trades, deep cursor": [],
    "pairs of WETH": [],
    search: [],
  };
  for (let i = 0; i < n; i++) {
    const p = pair();
    const dayEnd = options.end - pick(minuteDays) * DAY;
    out["candles 1m × 1 day"]?.push(
      `/api/v1/candles?${qs({ asset_id: id(p.token0), pair_id: id(p.pool), interval: "1m", from: Math.floor((dayEnd - DAY) / 1000), to: Math.floor(dayEnd / 1000) })}`,
    );
    const q = pair();
    out[`candles 1h × ${historyDays} days`]?.push(
      `/api/v1/candles?${qs({ asset_id: id(q.token0), pair_id: id(q.pool), interval: "1h", from: Math.floor((options.end - historyDays * DAY) / 1000), to: Math.floor(options.end / 1000) })}`,
    );
    const r = pair();
    out["trades, first page"]?.push(`/api/v1/trades?${qs({ asset_id: id(r.token0), pair_id: id(r.pool) })}`);
    out["pairs of WETH"]?.push(
      `/api/v1/pairs?${qs({ asset_id: id(i % 4 === 3 ? USDC : WETH), limit: [100, 50, 200][i % 3] as number })}`,
    );
    const t = tokens[pick(tokens.length)] as { symbol: string; name: string };
    const texts = [
      t.symbol.toLowerCase(),
      t.name.slice(0, 5),
      t.name.slice(2, 6).toLowerCase(),
      t.symbol.slice(0, 3),
    ];
    out.search?.push(`/v1/tokens/search?${qs({ searchString: texts[i % texts.length] as string })}`);
  }
  // Deep cursors: a position between a day and (most of) the history back in a busy pair's trades.
  for (let i = 0; out["trades, deep cursor"]?.length !== n && i < n * 4; i++) {
    const p = pair();
    const back =
      DAY + pick(Math.max(1, Math.floor((options.end - options.from - 2 * DAY) / 60_000))) * 60_000;
    const { rows } = await db.query<{ block_number: number; log_index: number; block_time: Date }>(
      `SELECT block_number, log_index, block_time FROM swaps
       WHERE chain_id = $1 AND pool = $2 AND block_time >= $3 AND block_time < $4
       ORDER BY block_number DESC, log_index DESC LIMIT 1`,
      [CHAIN, p.pool, new Date(options.end - back - 6 * 3_600_000), new Date(options.end - back)],
    );
    const row = rows[0];
    if (!row) continue;
    const cursor = encodeCursor({
      block: row.block_number,
      logIndex: row.log_index,
      time: row.block_time.getTime(),
    });
    out["trades, deep cursor"]?.push(
      `/api/v1/trades?${qs({ asset_id: id(p.token0), pair_id: id(p.pool), cursor })}`,
    );
  }
  return out;
}

/** Starts the API on `db` (cache off), measures each query and /healthz, closes it. */
export async function benchApiAtScale(
  db: Db,
  config: Config,
  requests: Record<string, string[]>,
  options: { warmup: number; log?: (line: string) => void; now?: () => Date; client?: BenchClient },
): Promise<ApiScaleResult> {
  const log = options.log ?? (() => {});
  // A key name names one active key: the one of an earlier run on this database goes first.
  await revokeApiKey(db, "scale-bench");
  const { key } = await createApiKey(db, "scale-bench");
  const app = createApiServer({
    config,
    db,
    logger: createSilentLogger(),
    answerCacheTtlMs: 0,
    ...(options.now ? { now: options.now } : {}),
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  try {
    const address = app.server.address();
    if (address === null || typeof address === "string") throw new Error("API not listening on TCP");
    const base = `http://127.0.0.1:${address.port}`;
    const count = Math.max(...Object.values(requests).map((r) => r.length));
    const baseline = await timeRequests(
      base,
      key,
      Array(count).fill("/healthz"),
      options.warmup,
      options.client,
    );
    log(`api: /healthz p50 ${baseline.p50Ms} ms, p99 ${baseline.p99Ms} ms`);
    const trips: number[] = [];
    for (let i = 0; i < count + options.warmup; i++) {
      const t = performance.now();
      await db.query("SELECT 1");
      if (i >= options.warmup) trips.push(performance.now() - t);
    }
    trips.sort((a, b) => a - b);
    const databaseRoundTrip: Latency = {
      samples: trips.length,
      p50Ms: round(percentile(trips, 50)),
      p99Ms: round(percentile(trips, 99)),
      maxMs: round(trips.at(-1) ?? Number.NaN),
      non200: 0,
    };
    log(`api: SELECT 1 round trip p50 ${databaseRoundTrip.p50Ms} ms, p99 ${databaseRoundTrip.p99Ms} ms`);
    const endpoints: ApiScaleResult["endpoints"] = {};
    for (const [name, paths] of Object.entries(requests)) {
      const figures = await timeRequests(base, key, paths, options.warmup, options.client);
      endpoints[name] = {
        ...figures,
        p99OverBaseline: round(figures.p99Ms / baseline.p99Ms),
        example: paths[0] ?? "",
      };
      log(
        `api: ${name}: p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms, non-200 ${figures.non200}`,
      );
    }
    return { baseline, databaseRoundTrip, endpoints };
  } finally {
    await app.close();
  }
}
