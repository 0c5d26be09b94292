/**
 * The stream of one API process: its connections, their limits and the feeder they share.
 * Nothing is shared between API processes: each listens for the indexers' commits itself and
 * reads what they brought, so any number of processes stream the same data.
 */
import type { WebSocket } from "ws";
import type { Config } from "../../config/schema.js";
import type { Logger } from "../../internal/logger.js";
import type { FailedKeyLimiter, KeyCheck } from "../auth.js";
import type { StreamMetrics } from "../metrics.js";
import type { ReadRouter } from "../read-replicas.js";
import { CLOSE, openConnection, type StreamConnection } from "./connection.js";
import { createStreamFeeder } from "./feeder.js";
import { createConnectionLimiter } from "./limits.js";

/** How often idle connections are pinged; one without a pong by the next ping is dropped. */
const KEEPALIVE_MS = 30_000;
/** At shutdown, how long clients have to answer the close before their connections are dropped. */
const CLOSE_GRACE_MS = 1000;

export type Stream = {
  /** Takes over an upgraded socket (`apiKey`: the upgrade's `x-api-key` header, if any). */
  accept(socket: WebSocket, options: { apiKey: string | undefined; address: string }): void;
  /** Starts listening for commits (idempotent). */
  start(): void;
  /** Closes every connection (1001) and stops. */
  stop(): void;
  stats(): { connections: number; subscriptions: number };
};

export function createStream(options: {
  config: Config;
  reads: ReadRouter;
  keys: KeyCheck;
  failedKeys: FailedKeyLimiter;
  metrics: StreamMetrics;
  logger: Logger;
  now: () => Date;
  requireChain(chainId: number, param: string): void;
}): Stream {
  const settings = options.config.api.stream;
  const logger = options.logger.child({ component: "stream" });
  const feeder = createStreamFeeder({
    config: options.config,
    reads: options.reads,
    logger: options.logger,
    now: options.now,
    requireChain: options.requireChain,
  });
  const connections = new Set<StreamConnection>();
  const limiter = createConnectionLimiter(settings.connectionsPerKey);
  let nextId = 1;
  let keepalive: NodeJS.Timeout | undefined;
  let running = false;
  const stats = () => ({ connections: connections.size, subscriptions: feeder.subscriptionCount() });
  options.metrics.track(stats);

  return {
    accept(socket, { apiKey, address }) {
      if (!running) {
        socket.close(CLOSE.goingAway, "the server is shutting down");
        return;
      }
      const connection: StreamConnection = openConnection(
        {
          settings,
          keys: options.keys,
          failedKeys: options.failedKeys,
          connections: limiter,
          feeder,
          metrics: options.metrics,
          logger,
        },
        socket,
        { id: nextId++, apiKey, address, onClosed: () => connections.delete(connection) },
      );
      connections.add(connection);
    },
    start() {
      if (running) return;
      running = true;
      feeder.start();
      keepalive = setInterval(() => {
        for (const c of connections) c.heartbeat();
      }, KEEPALIVE_MS);
      keepalive.unref();
    },
    stop() {
      if (!running) return;
      running = false;
      clearInterval(keepalive);
      feeder.stop();
      for (const c of connections) c.close(CLOSE.goingAway, "the server is shutting down", "shutdown");
      // A client that does not answer would hold the process for the WebSocket layer's 30 s.
      setTimeout(() => {
        for (const c of connections) c.terminate();
      }, CLOSE_GRACE_MS).unref();
    },
    stats,
  };
}
