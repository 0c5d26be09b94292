/**
 * Load test of the HTTP API: each endpoint under concurrency with autocannon (in a worker thread,
 * so the server keeps the main event loop), beside a bare Fastify hello-world measured the same
 * way in the same run. Figures are requests/s, p50 and p99 latency, and requests/s as a fraction
 * of the hello-world's.
 */
import autocannon from "autocannon";
import Fastify, { type FastifyInstance } from "fastify";
import type { Config } from "../src/config/schema.js";
import type { Db } from "../src/store/db.js";

export type BenchTarget = {
  /** The endpoint's path (its name in the results). */
  name: string;
  /** Paths with query strings, cycled through by every connection. */
  paths: string[];
};

export type EndpointFigures = {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** requestsPerSecond / the hello-world's, measured right after this endpoint. */
  ratio: number;
  non2xx: number;
  errors: number;
};

export type ApiBenchResult = {
  connections: number;
  durationSeconds: number;
  /** The median of the baseline runs (one after each endpoint). */
  baseline: EndpointFigures;
  /** Spread of the baseline over the run: how much the machine's load moved. */
  baselineRange: { min: number; max: number; runs: number };
  /** Answers as served: hot answers come from the in-memory cache. */
  hot: EndpointFigures[];
  /** The cache's life set to 0: every request reaches the database (concurrent equal ones still share one query). */
  cold: EndpointFigures[];
};

type Measured = Omit<EndpointFigures, "ratio" | "name">;

/** Several runs of one target as one: mean rate, median p50, worst p99, summed failures. */
function combine(runs: Measured[]): Measured {
  const sorted = runs.map((r) => r.p50Ms).sort((a, b) => a - b);
  return {
    requestsPerSecond: Math.round(runs.reduce((s, r) => s + r.requestsPerSecond, 0) / runs.length),
    p50Ms: sorted[Math.floor(sorted.length / 2)] ?? 0,
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
  };
}

/** Runs autocannon against `base` cycling through `paths`. */
export async function measure(options: {
  base: string;
  paths: string[];
  key?: string;
  connections: number;
  durationSeconds: number;
}): Promise<Measured> {
  const result = await autocannon({
    url: options.base,
    connections: options.connections,
    duration: options.durationSeconds,
    workers: 1,
    headers: options.key ? { "x-api-key": options.key } : {},
    requests: options.paths.map((path) => ({ method: "GET", path })),
  } as autocannon.Options);
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** The bare Fastify baseline: `GET /` → `{"hello":"world"}`. */
export async function startHelloWorld(): Promise<{ base: string; close(): Promise<void> }> {
  const app = Fastify();
  app.get("/", async () => ({ hello: "world" }));
  const base = await app.listen({ host: "127.0.0.1", port: 0 });
  return { base, close: () => app.close() };
}

/** Base URL of a listening Fastify instance. */
export function baseOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("server not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}

const q = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]))).toString();

/**
 * Requests for every endpoint, drawn from what the database holds: its busiest pairs and their
 * tokens, each endpoint with a few parameter sets (so the load is not one cached answer).
 */
export async function pickTargets(
  db: Db,
  config: Config,
  options: { wallets: string[] },
): Promise<BenchTarget[]> {
  const { rows: pools } = await db.query<{
    chain_id: number;
    address: string;
    token0: string;
    token1: string;
  }>(
    `SELECT p.chain_id, p.address, p.token0, p.token1
     FROM pools p LEFT JOIN pair_windows s ON s.chain_id = p.chain_id AND s.pool = p.address
     WHERE EXISTS (SELECT 1 FROM swaps w WHERE w.chain_id = p.chain_id AND w.pool = p.address)
     ORDER BY COALESCE(s.volume_usd_24h, 0) DESC, p.address LIMIT 4`,
  );
  if (pools.length === 0) throw new Error("bench: the database holds no traded pool");
  const { rows: last } = await db.query<{ t: Date }>("SELECT max(block_time) AS t FROM swaps");
  const end = last[0]?.t ?? new Date();
  const day = 86_400_000;
  const id = (address: string, chainId: number) => `${address}:${chainId}`;
  const tokens = [...new Set(pools.flatMap((p) => [id(p.token0, p.chain_id), id(p.token1, p.chain_id)]))];
  const first = pools[0] as (typeof pools)[number];
  const coins = Object.keys(config.coins);
  const { rows: symbols } = await db.query<{ symbol: string }>(
    "SELECT DISTINCT lower(symbol) AS symbol FROM tokens WHERE symbol IS NOT NULL ORDER BY 1 LIMIT 6",
  );

  return [
    {
      name: "/v1/tokens/search",
      paths: [...symbols.map((s) => s.symbol), "us", "wrapped", first.token0].map(
        (searchString) => `/v1/tokens/search?${q({ searchString })}`,
      ),
    },
    {
      name: "/v1/tokens/metadata",
      paths: [
        ...tokens.map((tokenId) => `/v1/tokens/metadata?${q({ tokenId })}`),
        `/v1/tokens/metadata?${q({ tokenId: tokens.join(",") })}`,
      ],
    },
    {
      name: "/v1/tokens/line-chart",
      paths: tokens.flatMap((tokenId) =>
        [1, 7].map((days) => `/v1/tokens/line-chart?${q({ tokenId, days })}`),
      ),
    },
    {
      name: "/v1/tokens/candle-chart",
      paths: tokens.flatMap((tokenId) =>
        [15, 60].map((interval) => `/v1/tokens/candle-chart?${q({ tokenId, days: 1, interval })}`),
      ),
    },
    {
      name: "/v1/tokens/price-provenance",
      paths: tokens.map((tokenId) => `/v1/tokens/price-provenance?${q({ tokenId })}`),
    },
    {
      name: "/v1/wallets/token-balances",
      paths: [first.token0, first.token1].map(
        (contract) =>
          `/v1/wallets/token-balances?${q({ contract, chain: first.chain_id, wallets: options.wallets.join(",") })}`,
      ),
    },
    {
      name: "/v1/coins/price",
      paths: (coins.length > 0 ? coins : ["ETH"]).map((symbol) => `/v1/coins/price?${q({ symbol })}`),
    },
    {
      name: "/api/v1/assets",
      paths: [tokens.join(","), ...tokens].map((asset_ids) => `/api/v1/assets?${q({ asset_ids })}`),
    },
    {
      name: "/api/v1/candles",
      paths: pools.flatMap((p) =>
        (["5m", "1h"] as const).map(
          (interval) =>
            `/api/v1/candles?${q({
              asset_id: id(p.token0, p.chain_id),
              pair_id: id(p.address, p.chain_id),
              from: new Date(end.getTime() - day).toISOString(),
              to: end.toISOString(),
              interval,
            })}`,
        ),
      ),
    },
    {
      name: "/api/v1/trades",
      paths: pools.flatMap((p) =>
        [p.token0, p.token1].map(
          (asset) =>
            `/api/v1/trades?${q({ asset_id: id(asset, p.chain_id), pair_id: id(p.address, p.chain_id) })}`,
        ),
      ),
    },
    {
      name: "/api/v1/pairs",
      paths: tokens.map((asset_id) => `/api/v1/pairs?${q({ asset_id })}`),
    },
  ];
}

/**
 * Runs every target, hot and then cold. The machine may be shared, so the hello-world baseline is
 * interleaved with each endpoint: `slices` rounds of (endpoint, baseline), each `durationSeconds`
 * / `slices` long, and the endpoint's ratio is its requests over the baseline's across those
 * rounds. A load that moves during the run then weighs on both sides alike.
 */
export async function benchApi(options: {
  hotBase: string;
  coldBase: string;
  key: string;
  targets: BenchTarget[];
  connections?: number;
  durationSeconds?: number;
  slices?: number;
  log?: (line: string) => void;
}): Promise<ApiBenchResult> {
  const connections = options.connections ?? 32;
  const durationSeconds = options.durationSeconds ?? 3;
  const slices = options.slices ?? 3;
  const slice = durationSeconds / slices;
  const log = options.log ?? (() => {});
  const hello = await startHelloWorld();
  const baselines: Measured[] = [];
  try {
    await measure({ base: hello.base, paths: ["/"], connections, durationSeconds: 1 }); // warm-up
    const run = async (base: string, label: string) => {
      const figures: EndpointFigures[] = [];
      for (const target of options.targets) {
        const common = { base, paths: target.paths, key: options.key, connections };
        await measure({ ...common, durationSeconds: 0.5 }); // warm-up
        const own: Measured[] = [];
        const theirs: Measured[] = [];
        for (let i = 0; i < slices; i++) {
          own.push(await measure({ ...common, durationSeconds: slice }));
          theirs.push(await measure({ base: hello.base, paths: ["/"], connections, durationSeconds: slice }));
        }
        const m = combine(own);
        const baseline = combine(theirs);
        baselines.push(baseline);
        const row = { name: target.name, ...m, ratio: m.requestsPerSecond / baseline.requestsPerSecond };
        figures.push(row);
        log(
          `${label} ${target.name}: ${row.requestsPerSecond} req/s (${(row.ratio * 100).toFixed(1)} % of the interleaved baseline's ${baseline.requestsPerSecond}), p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms${row.non2xx ? `, ${row.non2xx} non-2xx` : ""}`,
        );
      }
      return figures;
    };
    const hot = await run(options.hotBase, "hot ");
    const cold = await run(options.coldBase, "cold");
    const median = <T>(items: T[], by: (t: T) => number) =>
      [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)] as T;
    const mid = median(baselines, (b) => b.requestsPerSecond);
    const rates = baselines.map((b) => b.requestsPerSecond);
    return {
      connections,
      durationSeconds,
      baseline: { name: "hello-world (bare Fastify)", ...mid, ratio: 1 },
      baselineRange: { min: Math.min(...rates), max: Math.max(...rates), runs: rates.length },
      hot,
      cold,
    };
  } finally {
    await hello.close();
  }
}
