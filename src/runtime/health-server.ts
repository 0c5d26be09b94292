import Fastify, { type FastifyInstance } from "fastify";
import { collectDefaultMetrics, Registry } from "prom-client";
import {
  type DatabaseServerHealth,
  type DatabaseServerReadiness,
  databaseServerFailing,
  judgeDatabaseServer,
} from "../api/readiness.js";
import type { Config } from "../config/schema.js";
import { formatDuration } from "../internal/duration.js";
import type { Logger } from "../internal/logger.js";
import { perChainGauge } from "../internal/metrics.js";
import type { ChainStatus } from "../sync/progress.js";

export type HealthServer = { url: string; close(): Promise<void> };

/** Whether a chain's indexer is ready, and why not. */
export function chainReadiness(
  status: ChainStatus,
  maxLagBlocks: number,
): { ready: boolean; reason: string | null } {
  // A standby is healthy: it waits for the writer lock of a chain another indexer holds.
  if (status.phase === "standby") return { ready: true, reason: null };
  if (status.phase === "failed")
    return { ready: false, reason: `indexing stopped: ${status.error ?? "fatal error"}` };
  if (status.phase !== "following") {
    const eta = status.etaSeconds === null ? "" : `, about ${formatDuration(status.etaSeconds)} to go`;
    const lag = status.lagBlocks === null ? "" : ` (${status.lagBlocks} blocks behind${eta})`;
    return { ready: false, reason: `${status.phase}${lag}${status.error ? `: ${status.error}` : ""}` };
  }
  if (status.lagBlocks === null || status.lagBlocks > maxLagBlocks) {
    return {
      ready: false,
      reason: `lagging: ${status.lagBlocks ?? "?"} blocks behind the head (limit ${maxLagBlocks})`,
    };
  }
  return { ready: true, reason: null };
}

/**
 * The `tokenmarket index` role's operations listener: `/healthz` (alive), `/readyz` (every chain
 * following its head within `maxLagBlocks`; 503 naming why not) and `/metrics` (process metrics,
 * the indexer's per-chain figures, and any extra registries such as the RPC client's).
 */
export async function startHealthServer(options: {
  config: Pick<Config, "chains" | "indexer">;
  logger: Logger;
  status: () => ChainStatus[];
  /** The embedded Postgres this process started and supervises. */
  databaseServer?: DatabaseServerHealth | undefined;
  extraMetrics?: Registry[];
}): Promise<HealthServer> {
  const { config } = options;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tokenmarket_indexer_process_" });
  const gauge = (name: string, help: string, value: (s: ChainStatus) => number | null) =>
    perChainGauge(registry, name, help, () => options.status().map((s) => [s.chainId, value(s)]));
  gauge("tokenmarket_indexed_block", "The last block fully ingested, per chain.", (s) => s.indexedBlock);
  gauge("tokenmarket_head_block", "The chain head as last seen at the node, per chain.", (s) => s.headBlock);
  gauge(
    "tokenmarket_indexer_lag_blocks",
    "Blocks between the chain head and the last ingested block.",
    (s) => s.lagBlocks,
  );
  gauge(
    "tokenmarket_indexer_swaps_per_second",
    "Swaps ingested per second over the recent batches.",
    (s) => s.swapsPerSecond,
  );
  gauge(
    "tokenmarket_indexer_ready",
    "1 when the chain's indexer follows its head within maxLagBlocks, else 0.",
    (s) => {
      const chain = config.chains.find((c) => c.id === s.chainId);
      return chainReadiness(s, chain?.maxLagBlocks ?? 0).ready ? 1 : 0;
    },
  );

  const app: FastifyInstance = Fastify({ logger: false, forceCloseConnections: true });
  const databaseServer = () => {
    const health = options.databaseServer?.();
    return health ? judgeDatabaseServer(health, Date.now()) : null;
  };
  const embedded = (server: DatabaseServerReadiness) => ({
    state: server.state,
    exits: server.exits,
    down_seconds: server.downSeconds,
  });
  // As the API's /healthz: failing once the embedded Postgres has been down past its bound.
  app.get("/healthz", async (_request, reply) => {
    const server = databaseServer();
    if (!server) return { status: "ok" };
    const failing = databaseServerFailing(server);
    return reply.status(failing ? 503 : 200).send({
      status: failing ? "failing" : "ok",
      ...(server.reason ? { reason: server.reason } : {}),
      embedded_postgres: embedded(server),
    });
  });
  app.get("/readyz", async (_request, reply) => {
    const chains = options.status().map((s) => {
      const maxLag = config.chains.find((c) => c.id === s.chainId)?.maxLagBlocks ?? 0;
      const { ready, reason } = chainReadiness(s, maxLag);
      return {
        chain_id: s.chainId,
        phase: s.phase,
        indexed_block: s.indexedBlock,
        head_block: s.headBlock,
        lag_blocks: s.lagBlocks,
        max_lag_blocks: maxLag,
        ready,
        reason,
      };
    });
    const server = databaseServer();
    const ready = chains.length > 0 && chains.every((c) => c.ready) && !server?.reason;
    return reply.status(ready ? 200 : 503).send({
      status: ready ? "ready" : "not ready",
      role: "index",
      ...(server ? { embedded_postgres: { ...embedded(server), reason: server.reason } } : {}),
      chains,
    });
  });
  app.get("/metrics", async (_request, reply) => {
    const extra = options.extraMetrics ?? [];
    const merged = extra.length > 0 ? Registry.merge([registry, ...extra]) : registry;
    return reply.type(registry.contentType).send(await merged.metrics());
  });
  const url = await app.listen({ host: config.indexer.host, port: config.indexer.port });
  options.logger.info({ url }, "indexer health listening");
  return { url, close: () => app.close() };
}
