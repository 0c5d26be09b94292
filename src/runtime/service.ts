import { createServer } from "node:net";
import path from "node:path";
import { demoKeyAllowed } from "../api/auth.js";
import type { DatabaseServerHealth } from "../api/readiness.js";
import { startApi } from "../api/server.js";
import { registerWeb } from "../api/web.js";
import { projectRoot, requireRpcUrls } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { startDevnet } from "../devnet/index.js";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { currentDemoKey, rotateDemoKey, seedApiKeysFromEnv } from "../store/api-keys.js";
import { createDb, type Db } from "../store/db.js";
import type { Indexer } from "../sync/indexer.js";
import { createIndexer } from "../sync/indexer.js";
import { apiDbTimeouts, openDatabase } from "./database.js";
import { dropVanishedDevnetData } from "./devnet-data.js";
import { startHealthServer } from "./health-server.js";
import { checkStartBlocks } from "./start-block.js";

/**
 * The statistics slide forward as each minute starts (the market windows are minute-aligned, so
 * their figures change by the clock only then), this long after the minute's first instant.
 */
const STATS_SLIDE_DELAY_MS = 250;
const MINUTE_MS = 60_000;

/** Calls `fn` as each minute starts (plus `delayMs`), until the returned stop is called. */
function everyMinute(fn: () => void, delayMs: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = () => {
    const now = Date.now();
    const next = Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS + delayMs;
    timer = setTimeout(() => {
      if (stopped) return;
      fn();
      schedule();
    }, next - now);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * What a process runs: `all` (the demo: devnet, indexer, API), `index` (indexer and pricing, one
 * writer per chain) or `serve` (API and page only; any number of them over one database).
 */
export type Role = "all" | "index" | "serve";

export type Service = {
  /** What runs where, printed by `tokenmarket start`. */
  summary: string;
};

/** Registers a cleanup, and what must still happen should the process exit without it. */
type Stop = (name: string, cleanup: () => Promise<void> | void, force?: () => void) => void;

/**
 * Starts the service in a role: the database (embedded unless DATABASE_URL; `index` and `serve`
 * attach to the embedded server of a running `start` when there is one), the devnet with its
 * market simulator (`all` only, when enabled), the indexer with pricing (`all`, `index`) and the
 * API with the explorer page (`all`, `serve`). Each started part registers its cleanup with
 * `onStop`, so a failure half way, Ctrl-C or SIGTERM stops exactly what was started.
 */
export async function startService(options: {
  config: Config;
  logger: Logger;
  onStop: Stop;
  role?: Role;
}): Promise<Service> {
  const { logger, onStop } = options;
  const role = options.role ?? "all";
  let config = options.config;
  const started = Date.now();
  const lines: string[] = [];
  const indexes = role !== "serve";
  const serves = role !== "index";

  // Before anything starts: a chain without an RPC URL is the operator's to fix, in one message.
  if (indexes)
    requireRpcUrls(role === "all" ? config : { ...config, devnet: { ...config.devnet, enabled: false } });
  // So are the listeners' ports: a command that cannot listen fails before it changes anything in
  // the database (keys, data) that another process, such as a running demo, relies on.
  const ports: [number | undefined, string][] = [];
  if (serves) ports.push([config.api.port, "api.port"], [config.api.dataPort, "api.dataPort"]);
  if (role === "index") ports.push([config.indexer.port, "indexer.port"]);
  for (const [port, key] of ports) {
    if (port) await assertPortFree(key.startsWith("api.") ? config.api.host : config.indexer.host, port, key);
  }

  // The devnet starts while the database does (neither needs the other): the two child
  // processes boot on both cores. A database that fails to open aborts the devnet's start.
  const devnetAbort = new AbortController();
  const devnetStarting =
    role === "all" && config.devnet.enabled
      ? startDevnet({
          port: config.devnet.port,
          chainId: config.devnet.chainId,
          seed: config.devnet.seed,
          historyDays: config.devnet.historyDays,
          liveBlockIntervalMs: config.devnet.liveBlockIntervalMs,
          // Beside the embedded database: the chain is kept with the data indexed from it.
          ...(config.database.url
            ? {}
            : { stateDir: path.resolve(projectRoot, config.database.embedded.dataDir, "../devnet") }),
          // The service reads the devnet at its head only.
          pruneHistory: true,
          // The indexer reads the history as it is written; the API listens once it is.
          historyInBackground: true,
          signal: devnetAbort.signal,
          logger: logger.child({ component: "devnet" }),
        })
      : undefined;
  devnetStarting?.catch(() => {});
  const database = await openDatabase({ config, logger, attach: role !== "all" }).catch(
    async (error: unknown) => {
      devnetAbort.abort();
      await devnetStarting?.catch(() => {});
      throw error;
    },
  );
  onStop("database", database.close, database.kill);
  const { db } = database;
  lines.push(`database   ${database.where}`);

  let historyWritten: Promise<unknown> | undefined;
  if (devnetStarting !== undefined) {
    const devnet = await devnetStarting;
    historyWritten = devnet.historyWritten;
    onStop("devnet", devnet.stop, devnet.kill);
    // The devnet chain is read from wherever the devnet really listens.
    config = {
      ...config,
      chains: config.chains.map((c) => (c.id === devnet.chainId ? { ...c, rpc: [devnet.rpcUrl] } : c)),
    };
    lines.push(
      `devnet     ${devnet.rpcUrl} (chain ${devnet.chainId}, anvil with Uniswap V2, V3, V4 and Algebra Integral, ${devnet.resumed ? "the chain of the previous run" : "a new chain"}, simulator trading live)`,
    );
  }

  // One set of JSON-RPC metrics for the indexer and the API's balance reads, served at /metrics.
  const rpcMetrics = createRpcMetrics();
  // Before the API listens: stored data of a devnet chain that is no longer there is dropped.
  // A start block past the node's head, or changed under stored data, stops the start here.
  if (indexes) {
    await dropVanishedDevnetData({ config, db, logger });
    await checkStartBlocks({ config, db, logger });
  }
  const parts = {
    config,
    db,
    databaseUrl: database.url,
    databaseServer: database.serverHealth,
    logger,
    onStop,
    role,
    rpcMetrics,
  };
  const indexing = indexes ? await startIndexing(parts) : undefined;
  if (indexing) lines.push(...indexing.lines);
  // Nothing is served before the devnet's history is on its chain: until then the data would
  // stop days ago.
  await historyWritten;
  if (serves) lines.push(...(await startServing({ ...parts, indexer: indexing?.indexer })));

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const what = role === "all" ? "tokenmarket" : `tokenmarket ${role}`;
  return {
    summary: [`\n${what} is running (started in ${seconds} s). Ctrl-C stops it.\n`, ...lines, ""].join("\n"),
  };
}

type Parts = {
  config: Config;
  db: Db;
  databaseUrl: string;
  /** The embedded Postgres this process supervises, for the health answers. */
  databaseServer: DatabaseServerHealth | undefined;
  logger: Logger;
  onStop: Stop;
  role: Role;
  rpcMetrics: RpcMetrics;
};

/** The indexer with pricing on every configured chain; for the `index` role also its health listener. */
async function startIndexing(args: Parts): Promise<{ lines: string[]; indexer: Indexer }> {
  const { config, db, logger, onStop, rpcMetrics } = args;
  const lines: string[] = [];
  const pricing = createPricing({ config, logger: logger.child({ component: "pricing" }) });
  const indexer = createIndexer({ config, db, logger, derived: pricing, rpcMetrics });
  await indexer.start();
  onStop("indexer", indexer.stop);
  // A slide runs in chunks for seconds at a large chain: a stop ends it after its current chunk
  // (the next slide recomputes what it left) and waits for that, before the pools close.
  const stopping = new AbortController();
  const slides = new Set<Promise<void>>();
  const stopSlide = everyMinute(() => {
    // Only the chain's writer refreshes them; a standby (another process holds the chain) does not.
    const writing = new Set(
      indexer
        .status()
        .filter((c) => c.phase !== "standby")
        .map((c) => c.chainId),
    );
    for (const chain of config.chains) {
      if (!writing.has(chain.id)) continue;
      const slide = pricing.refreshStats(db, chain.id, undefined, stopping.signal).then(
        () => undefined,
        (error: unknown) => {
          if (stopping.signal.aborted) return;
          logger.warn({ err: error, chain_id: chain.id }, "refreshing the statistics failed");
        },
      );
      slides.add(slide);
      void slide.finally(() => slides.delete(slide));
    }
  }, STATS_SLIDE_DELAY_MS);
  onStop("statistics", async () => {
    stopSlide();
    stopping.abort(new Error("the service is stopping"));
    await Promise.all(slides);
  });
  lines.push(`indexer    chains ${config.chains.map((c) => `${c.id} (${c.name})`).join(", ")}`);
  if (args.role === "index") {
    const health = await startHealthServer({
      config,
      logger,
      status: indexer.status,
      databaseServer: args.databaseServer,
      extraMetrics: [rpcMetrics.registry],
    }).catch((error: unknown) => {
      throw portError(error, config.indexer.host, "indexer.port");
    });
    onStop("health", health.close);
    lines.push(`health     ${health.url}/healthz  ${health.url}/readyz  ${health.url}/metrics`);
  }
  return { lines, indexer };
}

/** The API and the explorer page; `indexer` when it runs in this process (its readiness is read live). */
async function startServing(args: Parts & { indexer?: Indexer | undefined }) {
  const { config, db, logger, onStop, rpcMetrics } = args;
  const lines: string[] = [];
  const seeded = await seedApiKeysFromEnv(db, process.env.TOKENMARKET_API_KEYS);
  if (seeded > 0) logger.info({ keys: seeded }, "API keys seeded from TOKENMARKET_API_KEYS");
  // The demo key belongs to the local devnet demo: `start` makes a new one, a `serve` beside it
  // offers the same. Elsewhere none is made, and the API refuses any left by a demo (auth.ts)
  // without revoking it: the demo may still be running over this database.
  const demoKey = demoKeyAllowed(config)
    ? args.role === "all"
      ? await rotateDemoKey(db)
      : ((await currentDemoKey(db)) ?? (await rotateDemoKey(db)))
    : undefined;
  // The API reads through a pool of its own whose waits are bounded by api.databaseTimeoutMs, so a
  // stalled database gives a prompt 503 rather than a hung request; the indexer's long batch
  // transactions keep their longer bounds.
  const apiDb = createDb({
    url: args.databaseUrl,
    applicationName: "tokenmarket-api",
    timeouts: apiDbTimeouts(config),
  });
  onStop("API database pool", () => apiDb.end().catch(() => {}));
  const api = await startApi({
    config,
    db: apiDb,
    indexer: args.indexer,
    ...(args.databaseServer ? { databaseServer: args.databaseServer } : {}),
    logger: logger.child({ component: "api" }),
    rpcMetrics,
    extend: (app) => registerWeb(app, { demoKey, logoHosts: config.web.logoHosts }),
  }).catch((error: unknown) => {
    const port = (error as { port?: number }).port;
    throw portError(error, config.api.host, port === config.api.dataPort ? "api.dataPort" : "api.port");
  });
  onStop("api", api.close);
  lines.push(`API        ${api.urls.base}/v1/ …`);
  if (api.urls.data !== api.urls.base) lines.push(`data API   ${api.urls.data}/api/v1/ …`);
  else lines.push(`           ${api.urls.data}/api/v1/ …`);
  lines.push(`docs       ${api.urls.base}/docs   (OpenAPI: ${api.urls.base}/openapi.json)`);
  lines.push(`explorer   ${api.urls.base}/`);
  lines.push(`health     ${api.urls.base}/healthz  ${api.urls.base}/readyz  ${api.urls.base}/metrics`);
  if (demoKey) {
    lines.push("");
    lines.push(`demo API key (new at each start of the demo): ${demoKey}`);
    lines.push(`try: curl -H "x-api-key: ${demoKey}" "${api.urls.base}/v1/tokens/search?searchString=WETH"`);
  }
  return lines;
}

/** A taken port as one line naming the setting to change; anything else as it is. */
function portError(error: unknown, host: string, key: string): unknown {
  const { code, port } = error as { code?: string; port?: number };
  if (code !== "EADDRINUSE") return error;
  const env = key === "api.port" ? " (or TOKENMARKET_API_PORT)" : "";
  const what = key.startsWith("api.") ? "API" : "indexer health";
  return new LaunchError(
    `${what} port ${port} on ${host} is already in use: set ${key}${env} to a free port`,
    {
      cause: error,
    },
  );
}

/** The demo key's rule, where the API also applies it. */
export { demoKeyAllowed };

/** A port another process listens on, as the one line portError gives, before anything starts. */
async function assertPortFree(host: string, port: number, key: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error) => reject(portError(Object.assign(error, { port }), host, key)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
