import { type BrotliOptions, brotliCompressSync, constants as zlibConstants } from "node:zlib";
import compress from "@fastify/compress";
import cors from "@fastify/cors";
import rateLimit from "@fastify/rate-limit";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Registry } from "prom-client";
import { projectRoot } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { HttpError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createRpcMetrics, type RpcMetrics } from "../rpc/metrics.js";
import { findActiveApiKey } from "../store/api-keys.js";
import { type Db, withConnection } from "../store/db.js";
import {
  createFailedKeyLimiter,
  createKeyCheck,
  demoKeyAllowed,
  type FailedKeyLimiter,
  type KeyCheck,
  keyMessages,
  requireApiKey,
} from "./auth.js";
import { type ApiContext, chainRequirement, createContext } from "./context.js";
import { errorHandlerFor, handleNotFound } from "./error-handler.js";
import { createIndexerHealthWatch } from "./indexer-health-watch.js";
import { type ApiMetrics, createApiMetrics } from "./metrics.js";
import { createOpenApiTransform, placeErrorExamples } from "./openapi.js";
import { loadProjectInfo, type ProjectInfoBook } from "./project-info.js";
import { clientErrorHandler, installProtocolGuards } from "./protocol.js";
import { createPostgresRateLimitStore } from "./rate-limit-pg.js";
import { createSharedRateLimitStore } from "./rate-limit-store.js";
import { createReadRouter, type ReadRouter, registerReadMetrics } from "./read-replicas.js";
import {
  createReadiness,
  type DatabaseServerHealth,
  type IndexerHealth,
  type Readiness,
} from "./readiness.js";
import { clearedOnRollback, createResponseCache, type ResponseCache } from "./response-cache.js";
import { registerAssets } from "./routes/assets.js";
import { registerCandleChart } from "./routes/candle-chart.js";
import { registerCandles } from "./routes/candles.js";
import { registerCoinPrice } from "./routes/coin-price.js";
import { registerDexes } from "./routes/dexes.js";
import { registerHealthz } from "./routes/healthz.js";
import { registerLineChart } from "./routes/line-chart.js";
import { registerLogos } from "./routes/logos.js";
import { registerMetadata } from "./routes/metadata.js";
import { registerMetrics } from "./routes/metrics.js";
import { registerNetworks } from "./routes/networks.js";
import { registerPairMarket } from "./routes/pair-market.js";
import { registerPairs } from "./routes/pairs.js";
import { registerPriceProvenance } from "./routes/price-provenance.js";
import { registerReadyz } from "./routes/readyz.js";
import { registerSearch } from "./routes/search.js";
import { registerTokenBalances } from "./routes/token-balances.js";
import { registerTokenMarket } from "./routes/token-market.js";
import { registerTopPools } from "./routes/top-pools.js";
import { registerTrades } from "./routes/trades.js";
import { ErrorBody } from "./schemas.js";
import { registerStream } from "./stream/route.js";
import { createStream, type Stream } from "./stream/stream.js";
import type { SyncWatch } from "./sync-watch.js";
import {
  formatSchemaErrors,
  rejectLooseParams,
  rejectNonFiniteNumbers,
  rejectRepeatedParams,
} from "./validation.js";
import { type BalanceReader, createRpcBalanceReader } from "./wallet-balances.js";

/** How long an unknown key is remembered as unknown: a key created just after a failed try works within 5 s. */
const NEGATIVE_KEY_TTL_MS = 5000;

/** When the deprecated endpoints were deprecated (RFC 9745 `Deprecation: @<unix seconds>`): 2025-01-01. */
const DEPRECATED_AT = "@1735689600";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Marks a deprecated endpoint: answers carry `Deprecation` and, when given, a `Link` to the successor. */
    deprecation?: { successor?: string };
  }
}

export type ApiServerOptions = {
  config: Config;
  db: Db;
  logger: Logger;
  /** Reads wallet balances at the chain head; default: the chain's RPC client (src/rpc/client.ts). */
  balanceReader?: BalanceReader;
  /** The process's JSON-RPC metrics, shared with the indexer and served at /metrics; default: the API's own. */
  rpcMetrics?: RpcMetrics;
  /** The clock of time-relative answers (line chart, candles capped at now); tests pin it. */
  now?: () => Date;
  /** Which endpoints this server answers: both prefixes (default), only `/v1/` or only `/api/v1/`. */
  serve?: "all" | "base" | "data";
  /** Pieces shared by several servers of one process (startApi with `api.dataPort`). */
  shared?: ApiShared;
  /**
   * The indexer running in this process, for readiness from reality: its chains' fatal stops and
   * the age of the head last seen at each node. Without it, readiness rests on the stored lag.
   */
  indexer?: IndexerHealth;
  /** The embedded Postgres this process started and supervises, for /healthz and /readyz. */
  databaseServer?: DatabaseServerHealth;
  /** Extra registries merged into /metrics (the indexer's, pricing's). */
  extraMetrics?: Registry[];
  /** Project root (logos, curated project info); default: this repository. */
  root?: string;
  /** Poll interval of sync_state (ms, default 250). */
  syncPollMs?: number;
  /**
   * Listen for the indexers' commit notifications (default true). Off, answers and the stream
   * rely on polling alone, as they do while the notifications are down (tests of that fallback).
   */
  listenForCommits?: boolean;
  /** How long a key look-up is remembered (ms, default 1000): the most a revoked key keeps working. */
  keyCacheTtlMs?: number;
  /** Longest life of a cached answer (ms, default 10 000); a new indexed block drops it sooner. */
  answerCacheTtlMs?: number;
  /** More routes or plugins on this server (for example the web page at `/`), registered last. */
  extend?: (app: FastifyInstance) => void | Promise<void>;
};

/** What several servers of one process share: one sync watch, cache, key check, rate budget, metrics. */
export type ApiShared = {
  sync: SyncWatch;
  cache: ResponseCache;
  keys: KeyCheck;
  failedKeys: FailedKeyLimiter;
  metrics: ApiMetrics;
  projectInfo: ProjectInfoBook;
  balances: BalanceReader;
  rateLimitStore:
    | ReturnType<typeof createSharedRateLimitStore>
    | ReturnType<typeof createPostgresRateLimitStore>;
  readiness: Readiness;
  /** Where data reads go (primary, replicas); its `view` is `sync`. */
  reads: ReadRouter;
  /** The WebSocket stream of this process (served by the base listener). */
  stream: Stream;
};

/** Builds the shared pieces; the caller starts and stops `sync`. */
export function createApiShared(options: ApiServerOptions): ApiShared {
  const { config, db, logger } = options;
  // The read router's view is the sync watch: starting it also starts the replicas' health
  // checks and the LISTEN for the indexers' commits.
  const reads = createReadRouter({
    config,
    db,
    logger,
    intervalMs: options.syncPollMs,
    listen: options.listenForCommits,
  });
  // Without an indexer in this process (`tokenmarket serve`), readiness reads what the indexers
  // report of themselves in the database; it is polled while the sync watch runs.
  const health = options.indexer ? undefined : createIndexerHealthWatch({ db, logger });
  const view = reads.view;
  const sync: SyncWatch = health
    ? {
        ...view,
        start() {
          view.start();
          health.start();
        },
        stop() {
          view.stop();
          health.stop();
        },
        refresh: async () => {
          await Promise.all([view.refresh(), health.refresh()]);
        },
      }
    : view;
  const rpcMetrics = options.rpcMetrics ?? createRpcMetrics();
  const readiness = createReadiness({
    config,
    sync,
    indexer: options.indexer ?? health,
    ...(options.databaseServer ? { databaseServer: options.databaseServer } : {}),
  });
  const metrics = createApiMetrics({
    config,
    sync,
    readiness,
    extra: [rpcMetrics.registry, ...(options.extraMetrics ?? [])],
  });
  registerReadMetrics(metrics.registry, reads);
  const keys = createKeyCheck({
    lookup: (key, deadline) =>
      withConnection(db, deadline, (client) =>
        findActiveApiKey(client, key, { demo: demoKeyAllowed(config) }),
      ),
    ttlMs: options.keyCacheTtlMs,
    negativeTtlMs: NEGATIVE_KEY_TTL_MS,
  });
  const failedKeys = createFailedKeyLimiter(config.api.failedKeyLimit);
  return {
    sync,
    readiness,
    reads,
    metrics,
    keys,
    failedKeys,
    stream: createStream({
      config,
      reads,
      keys,
      failedKeys,
      metrics: metrics.stream,
      logger,
      now: options.now ?? (() => new Date()),
      requireChain: chainRequirement(config),
    }),
    cache: clearedOnRollback(
      reads,
      createResponseCache({
        blockOf: sync.blockOf,
        ttlMs: options.answerCacheTtlMs,
        onLookup: metrics.cacheLookup,
      }),
    ),
    projectInfo: loadProjectInfo({ config, logger, root: options.root ?? projectRoot }),
    balances: options.balanceReader ?? createRpcBalanceReader({ config, logger, metrics: rpcMetrics }),
    rateLimitStore:
      config.api.rateLimit.store === "database"
        ? createPostgresRateLimitStore({ db, logger: logger.child({ component: "rate-limit" }) })
        : createSharedRateLimitStore(),
  };
}

/** Past this size a data answer is compressed with brotli at quality 1 rather than 2. */
const LARGE_ANSWER_BYTES = 64 * 1024;

/**
 * Compression levels of the data answers. The library defaults (gzip level 6, brotli quality 4)
 * took 9–28 ms of CPU for the 380 kB of 90 days of hourly candles on this project's 2-core
 * benchmark machine, more than the database's part of the answer; gzip level 1 takes a fifth of
 * that for answers about 10 % larger, brotli quality 2 half of it at the same size as quality 4
 * (measured on the scale benchmark's answers: BENCHMARKS.md "Scale"). Brotli's quality 1 takes
 * half the time of quality 2 on large answers at the same size (90 days of hourly candles, 417 kB:
 * 2.1 against 4.0 ms, 113.3 against 114.0 kB), but makes small ones larger and is no faster on
 * them (20 kB: 6.3 against 5.1 kB), so the quality follows the answer's size.
 */
const ANSWER_COMPRESSION = {
  zlibOptions: { level: 1 },
  // Every answer is a string in memory: compressed in one call, up to MAX_CANDLES' ~1 MB. Past
  // the library's default (8 kB on 2 cores) it went through a zlib stream on the thread pool, its
  // output handed back 16 kB at a time and sent chunked: each hand-off a turn of the event loop
  // that waits for a core, for the same CPU time.
  syncThreshold: 2 * 1024 * 1024,
  brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 2 } },
  // The plugin's one-call brotli (its streams, used past syncThreshold, keep brotliOptions).
  zlib: {
    brotliCompressSync: (buffer: Buffer, options: BrotliOptions) =>
      brotliCompressSync(
        buffer,
        buffer.length > LARGE_ANSWER_BYTES
          ? { ...options, params: { ...options.params, [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } }
          : options,
      ),
  },
};

/**
 * The HTTP API as a Fastify instance (not yet listening: use `inject` or `listen`). Serves the
 * endpoints of the specification under `/v1/` and `/api/v1/`, the price-provenance extension,
 * `/healthz`, `/readyz`, `/metrics`, `/openapi.json`, `/docs` and `/logos/*`; it leaves `/` to
 * `extend`. Data endpoints check `x-api-key` first, then the key's rate limit, then the parameters.
 */
export function createApiServer(options: ApiServerOptions): FastifyInstance {
  const { config, db, logger } = options;
  const serve = options.serve ?? "all";
  const ownsShared = options.shared === undefined;
  const shared = options.shared ?? createApiShared(options);
  const ctx: ApiContext = createContext({
    config,
    db,
    logger,
    sync: shared.sync,
    readiness: shared.readiness,
    reads: shared.reads,
    cache: shared.cache,
    projectInfo: shared.projectInfo,
    balances: shared.balances,
    now: options.now ?? (() => new Date()),
  });

  const app = Fastify({
    loggerInstance: logger.child({ component: "api" }) as FastifyBaseLogger,
    // Per-request lines would dominate the cost of a cached answer; 5xx are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: true,
    // A request without Host reaches installProtocolGuards (a JSON 400) instead of Node's bare 400.
    // Slow clients are cut at the configured bounds: a request (headers included) must arrive
    // within api.requestTimeoutMs, checked every second (Node's default check runs every 30 s, and
    // its headers bound is 60 s, so a trickling client held a connection up to 90 s), and is then
    // answered 408 and closed (clientErrorHandler); a silent connection closes at the same bound,
    // an idle keep-alive one at api.keepAliveTimeoutMs, and an answer the client does not read at
    // api.writeTimeoutMs (installProtocolGuards).
    http: {
      requireHostHeader: false,
      headersTimeout: config.api.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.api.requestTimeoutMs),
    },
    clientErrorHandler,
    // No idle bound on a connection as such: it would cut an answer still being computed (a
    // balance read waits for a node); the bounds above cover each stage of a connection's life.
    connectionTimeout: 0,
    requestTimeout: config.api.requestTimeoutMs,
    keepAliveTimeout: config.api.keepAliveTimeoutMs,
    // verbose: a validation error carries the failing value and its schema, for plain messages.
    ajv: { customOptions: { verbose: true } },
    schemaErrorFormatter: formatSchemaErrors,
  });
  app.setErrorHandler(errorHandlerFor(config.chains));
  app.setNotFoundHandler(handleNotFound);
  app.addSchema(ErrorBody);
  installProtocolGuards(app, { writeTimeoutMs: config.api.writeTimeoutMs });

  // One database bound per request (api.databaseTimeoutMs from its arrival), shared by all its
  // waits: a connection, the key check, the answer's queries (request.databaseDeadline). Not
  // for a WebSocket upgrade: the stream's subscriptions outlive their request.
  const databaseTimeoutMs = config.api.databaseTimeoutMs;
  app.decorateRequest("databaseDeadline", undefined);
  app.addHook("onRequest", (request, _reply, done) => {
    if (request.headers.upgrade === undefined) request.databaseDeadline = Date.now() + databaseTimeoutMs;
    done();
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    shared.metrics.observe(
      { method: request.method, route, status_code: reply.statusCode },
      reply.elapsedTime / 1000,
    );
    if (reply.statusCode < 500)
      request.log.debug({ route, status_code: reply.statusCode, ms: reply.elapsedTime }, "request");
  });
  if (ownsShared) {
    app.addHook("onReady", async () => {
      shared.sync.start();
      await shared.sync.refresh();
    });
    app.addHook("onClose", async () => shared.sync.stop());
  }

  // Browser apps and charting widgets on other origins call the API directly (CORS). The
  // preflight (OPTIONS) is answered here, outside the key-protected scope; the key itself travels
  // in a header, so no credentials mode is needed.
  if (config.api.corsOrigins.length > 0) {
    const origins = config.api.corsOrigins;
    // A bare OPTIONS (no Origin or no Access-Control-Request-Method) is no preflight: a JSON 400
    // here, before the CORS plugin would answer it in plain text.
    app.addHook("onRequest", async (request) => {
      if (
        request.method === "OPTIONS" &&
        (!request.headers.origin || !request.headers["access-control-request-method"])
      ) {
        throw new HttpError(
          400,
          "OPTIONS is answered only as a CORS preflight, with Origin and Access-Control-Request-Method",
        );
      }
    });
    void app.register(cors, {
      origin: origins.includes("*") ? "*" : origins,
      methods: ["GET", "HEAD", "OPTIONS"],
      allowedHeaders: ["x-api-key", "content-type"],
      exposedHeaders: [
        "x-indexed-block",
        "x-indexed-at",
        "x-next-cursor",
        "link",
        "deprecation",
        "retry-after",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
        "x-balances-block",
        "x-indexing-stopped",
      ],
      maxAge: 600,
    });
  }

  void app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "tokenmarket API",
        version: "1.0.0",
        description: [
          "Market data of EVM tokens derived from Uniswap V2/V3 trades: search, metadata, USD prices, candles, trades, pairs, wallet balances and coin prices.",
          "",
          "Every data endpoint needs the header `x-api-key` (403 otherwise), checked before the parameters, and is rate-limited per key (429 with `Retry-After`).",
          "Every data answer carries `X-Indexed-Block` and `X-Indexed-At`: per network involved, the last block the indexer fully ingested and its time.",
          "Errors answer `{statusCode, error, message}`; the message names the parameter. Unknown query parameters are ignored; a parameter given twice is a 400.",
          "Paths under `/v1/` are served on the base URL, paths under `/api/v1/` on the data URL (the same server unless configured apart).",
        ].join("\n"),
      },
      tags: [
        { name: "tokens", description: "Search, metadata, price series and coin prices (base URL, `/v1/`)." },
        { name: "market data", description: "Prices, candles, trades and pairs (data URL, `/api/v1/`)." },
        { name: "wallets", description: "Balances read from the chain (base URL, `/v1/`)." },
        {
          name: "stream",
          description:
            "Live trades, candles and prices over a WebSocket (base URL, `/v1/stream`); ours beyond the specification.",
        },
        {
          name: "discovery",
          description: "Networks and DEXes (extensions beyond the specification, base URL, `/v1/`).",
        },
        { name: "operations", description: "Liveness and readiness; no key." },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "Your API key." },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === "string" ? json.$id : `def-${i}`,
    },
    // operationIds, the key's security and the shared error examples, for every route (openapi.ts).
    transform: createOpenApiTransform(config),
    transformObject: placeErrorExamples,
  });
  void app.register(swaggerUi, {
    routePrefix: "/docs",
    // The key given under "Authorize" is sent as x-api-key by "Try it out", and kept over reloads.
    uiConfig: { docExpansion: "list", deepLinking: true, persistAuthorization: true },
  });

  // The stream authenticates on its own (the header, or a first message for browsers), outside
  // the key-protected scope; served with the /v1/ paths on the base listener. Its WebSocket
  // plugin goes before every route so that it sees them all.
  if (serve !== "data") registerStream(app, shared.stream);

  // Routes are added inside plugins, after @fastify/swagger, so that the document sees them.
  void app.register(async (scope) => {
    scope.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
    registerHealthz(scope, ctx);
    registerReadyz(scope, ctx);
    if (serve !== "data") {
      registerMetrics(scope, shared.metrics);
      registerLogos(scope, options.root ?? projectRoot);
    }
  });

  // The key-protected data endpoints: key check (onRequest), then the key's rate limit
  // (preParsing), then repeated parameters (preValidation), then schema validation.
  void app.register(async (scope) => {
    scope.addHook("onRequest", deprecationHeaders);
    scope.addHook("onRequest", requireApiKey(shared.keys, shared.failedKeys));
    await scope.register(rateLimit, {
      global: true,
      hook: "preParsing",
      max: config.api.rateLimit.max,
      timeWindow: config.api.rateLimit.windowMs,
      keyGenerator: (request) => `key:${request.apiKey?.id ?? "none"}`,
      store: shared.rateLimitStore,
      errorResponseBuilder: (_request, context) =>
        new HttpError(429, keyMessages.rateLimited(context.max, config.api.rateLimit.windowMs, context.ttl)),
    });
    // Chart and trade answers run to tens of kB of JSON: brotli/gzip when the client accepts it,
    // at the fast levels (ANSWER_COMPRESSION): the compression is the answer's CPU time.
    await scope.register(compress, {
      global: true,
      threshold: 1024,
      encodings: ["br", "gzip"],
      ...ANSWER_COMPRESSION,
    });
    scope.addHook("preValidation", rejectRepeatedParams);
    scope.addHook("preValidation", rejectLooseParams);
    scope.addHook("preHandler", rejectNonFiniteNumbers);
    if (serve !== "data") {
      registerSearch(scope, ctx);
      registerMetadata(scope, ctx);
      registerLineChart(scope, ctx);
      registerCandleChart(scope, ctx);
      registerPriceProvenance(scope, ctx);
      registerTokenBalances(scope, ctx);
      registerCoinPrice(scope, ctx);
      // Market statistics and discovery: extensions beyond the common token-market API.
      registerTokenMarket(scope, ctx);
      registerNetworks(scope, ctx);
      registerDexes(scope, ctx);
    }
    if (serve !== "base") {
      registerAssets(scope, ctx);
      registerCandles(scope, ctx);
      registerTrades(scope, ctx);
      registerPairs(scope, ctx);
      registerPairMarket(scope, ctx);
      registerTopPools(scope, ctx);
    }
  });
  if (options.extend) {
    void app.register(async (scope) => {
      // What is registered here is the page (`/`, its assets, /web-config.json), not the API:
      // it stays out of /openapi.json whatever routes the page adds.
      scope.addHook("onRoute", (route) => {
        route.schema = { ...route.schema, hide: true };
      });
      await options.extend?.(scope);
    });
  }
  return app;
}

async function deprecationHeaders(request: FastifyRequest, reply: FastifyReply) {
  const deprecation = request.routeOptions.config.deprecation;
  if (!deprecation) return;
  reply.header("deprecation", DEPRECATED_AT);
  const links = ['</docs>; rel="deprecation"; type="text/html"'];
  if (deprecation.successor) links.unshift(`<${deprecation.successor}>; rel="successor-version"`);
  reply.header("link", links.join(", "));
}

export type RunningApi = {
  /** Base URL of `/v1/` and, unless `api.dataPort` is set, of `/api/v1/`. */
  urls: { base: string; data: string };
  close(): Promise<void>;
};

/**
 * Starts the API on `api.host`:`api.port`; with `api.dataPort`, `/api/v1/` is served on that
 * second listener instead (both share one cache, key check, rate budget and metrics).
 */
export async function startApi(options: ApiServerOptions): Promise<RunningApi> {
  const { config } = options;
  const shared = options.shared ?? createApiShared(options);
  shared.sync.start();
  await shared.sync.refresh();
  const separate = config.api.dataPort !== undefined;
  const servers: FastifyInstance[] = [];
  try {
    const base = createApiServer({ ...options, shared, serve: separate ? "base" : "all" });
    servers.push(base);
    const baseUrl = await base.listen({ host: config.api.host, port: config.api.port });
    let dataUrl = baseUrl;
    if (separate) {
      const { extend: _extend, ...rest } = options;
      const data = createApiServer({ ...rest, shared, serve: "data" });
      servers.push(data);
      dataUrl = await data.listen({ host: config.api.host, port: config.api.dataPort });
    }
    options.logger.info({ base_url: baseUrl, data_url: dataUrl }, "API listening");
    return {
      urls: { base: baseUrl, data: dataUrl },
      close: async () => {
        await Promise.all(servers.map((s) => s.close()));
        shared.sync.stop();
      },
    };
  } catch (error) {
    await Promise.all(servers.map((s) => s.close().catch(() => {})));
    shared.sync.stop();
    throw error;
  }
}
