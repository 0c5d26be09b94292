import { startApi } from "../api/server.js";
import { registerWeb } from "../api/web.js";
import type { Config } from "../config/schema.js";
import { startDevnet } from "../devnet/index.js";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createPricing } from "../pricing/pricing.js";
import { rotateDemoKey, seedApiKeysFromEnv } from "../store/api-keys.js";
import { createIndexer } from "../sync/indexer.js";
import { openDatabase } from "./database.js";

/** How often the 24-hour statistics slide forward when no block arrives to move them. */
const STATS_REFRESH_MS = 60_000;

export type Service = {
  /** What runs where, printed by `tokenmarket start`. */
  summary: string;
};

/**
 * Starts the service: the database (embedded unless DATABASE_URL), the devnet with its market
 * simulator when enabled, the indexer with pricing on every configured chain, and the API with
 * the explorer page. Each started part registers its cleanup with `onStop`, so a failure half
 * way, Ctrl-C or SIGTERM stops exactly what was started.
 */
export async function startService(options: {
  config: Config;
  logger: Logger;
  onStop: (name: string, cleanup: () => Promise<void> | void) => void;
}): Promise<Service> {
  const { logger, onStop } = options;
  let config = options.config;
  const started = Date.now();
  const lines: string[] = [];

  const database = await openDatabase({ config, logger });
  onStop("database", database.close);
  const { db } = database;
  lines.push(`database   ${database.where}`);
  const seeded = await seedApiKeysFromEnv(db, process.env.TOKENMARKET_API_KEYS);
  if (seeded > 0) logger.info({ keys: seeded }, "API keys seeded from TOKENMARKET_API_KEYS");

  if (config.devnet.enabled) {
    const devnet = await startDevnet({
      port: config.devnet.port,
      chainId: config.devnet.chainId,
      seed: config.devnet.seed,
      historyDays: config.devnet.historyDays,
      liveBlockIntervalMs: config.devnet.liveBlockIntervalMs,
      logger: logger.child({ component: "devnet" }),
    });
    onStop("devnet", devnet.stop);
    // The devnet chain is read from wherever the devnet really listens.
    config = {
      ...config,
      chains: config.chains.map((c) => (c.id === devnet.chainId ? { ...c, rpc: [devnet.rpcUrl] } : c)),
    };
    lines.push(
      `devnet     ${devnet.rpcUrl} (chain ${devnet.chainId}, hardhat with Uniswap V2 + V3, simulator trading live)`,
    );
  }

  const pricing = createPricing({ config, logger: logger.child({ component: "pricing" }) });
  const indexer = createIndexer({ config, db, logger, derived: pricing });
  await indexer.start();
  onStop("indexer", indexer.stop);
  const statsTimer = setInterval(() => {
    // Only the chain's writer refreshes them; a standby (another process holds the chain) does not.
    const writing = new Set(
      indexer
        .status()
        .filter((c) => c.phase !== "standby")
        .map((c) => c.chainId),
    );
    for (const chain of config.chains) {
      if (!writing.has(chain.id)) continue;
      pricing.refreshStats(db, chain.id).catch((error: unknown) => {
        logger.warn({ err: error, chain_id: chain.id }, "refreshing 24-hour statistics failed");
      });
    }
  }, STATS_REFRESH_MS);
  statsTimer.unref();
  onStop("statistics", () => clearInterval(statsTimer));

  const demoKey = config.api.demoKey ? await rotateDemoKey(db) : undefined;
  const api = await startApi({
    config,
    db,
    logger: logger.child({ component: "api" }),
    extend: (app) => registerWeb(app, demoKey === undefined ? {} : { demoKey }),
  }).catch((error: unknown) => {
    const { code, port } = error as { code?: string; port?: number };
    if (code !== "EADDRINUSE") throw error;
    const key = port === config.api.dataPort ? "api.dataPort" : "api.port";
    throw new LaunchError(
      `API port ${port} on ${config.api.host} is already in use: set ${key} (or TOKENMARKET_API_PORT) to a free port`,
      { cause: error },
    );
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
    lines.push(`demo API key (new at each start): ${demoKey}`);
    lines.push(`try: curl -H "x-api-key: ${demoKey}" "${api.urls.base}/v1/tokens/search?searchString=WETH"`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  return {
    summary: [`\ntokenmarket is running (started in ${seconds} s). Ctrl-C stops it.\n`, ...lines, ""].join(
      "\n",
    ),
  };
}
