import { collectDefaultMetrics, Registry } from "prom-client";
import type { Config } from "../config/schema.js";
import { metricsIn, perChainGauge } from "../internal/metrics.js";
import type { ChainReadiness, Readiness } from "./readiness.js";
import type { SyncWatch } from "./sync-watch.js";

export type ApiMetrics = {
  registry: Registry;
  /** Records one answered request; `route` is the route pattern, never the raw URL. */
  observe(labels: { method: string; route: string; status_code: number }, seconds: number): void;
  cacheLookup(hit: boolean): void;
  /** The WebSocket stream's figures. */
  stream: StreamMetrics;
  /** The text exposition of this registry and any extra registries (the indexer's, pricing's). */
  render(): Promise<{ contentType: string; body: string }>;
};

/** Metrics of the stream (/v1/stream). */
export type StreamMetrics = {
  /** One message sent to a client, by type (trade, candle, price, rollback, error, …). */
  sent(type: string): void;
  /** One connection closed, by reason (client, auth, limit, slow_consumer, too_big, shutdown, error). */
  closed(reason: string): void;
  /** Seconds from hearing a commit to sending the data it brought. */
  delay(seconds: number): void;
  /** Where the gauges read the open connections and subscriptions at scrape time. */
  track(state: () => { connections: number; subscriptions: number }): void;
};

/**
 * Prometheus metrics of the API, in a registry of its own (no global state): requests by route
 * and status, latency in seconds, cache hits, and per chain the indexer's lag behind the head in
 * blocks and seconds, read from the sync watch at scrape time.
 */
export function createApiMetrics(options: {
  config: Config;
  sync: SyncWatch;
  readiness?: Readiness;
  extra?: Registry[];
}): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tokenmarket_" });
  const { counter, histogram, readGauge } = metricsIn(registry);
  const labelNames = ["method", "route", "status_code"] as const;
  const requests = counter(
    "tokenmarket_http_requests_total",
    "HTTP requests answered, by route pattern and status code.",
    labelNames,
  );
  const duration = histogram(
    "tokenmarket_http_request_duration_seconds",
    "Time from receiving a request to sending its answer, in seconds.",
    labelNames,
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const cache = counter(
    "tokenmarket_api_cache_lookups_total",
    "Look-ups of the API's answer cache, by result (hit or miss).",
    ["result"],
  );
  let streamState = () => ({ connections: 0, subscriptions: 0 });
  readGauge(
    "tokenmarket_stream_connections",
    "Open WebSocket stream connections (authenticated or not yet).",
    () => streamState().connections,
  );
  readGauge(
    "tokenmarket_stream_subscriptions",
    "Stream subscriptions held over all connections (each asset of a prices subscription counts).",
    () => streamState().subscriptions,
  );
  const streamSent = counter(
    "tokenmarket_stream_messages_sent_total",
    "Messages sent to stream clients, by type.",
    ["type"],
  );
  const streamClosed = counter(
    "tokenmarket_stream_connections_closed_total",
    "Stream connections closed, by reason (client, auth, limit, slow_consumer, too_big, shutdown, error).",
    ["reason"],
  );
  const streamDelay = histogram(
    "tokenmarket_stream_commit_to_send_seconds",
    "Seconds from hearing an indexer's commit (its notification, or the poll that saw it) to sending its data to a client.",
    [],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  const chainIds = options.config.chains.map((c) => c.id);
  const perChain = (name: string, help: string, value: (chainId: number) => number | undefined) =>
    perChainGauge(registry, name, help, () => chainIds.map((id) => [id, value(id)]));
  perChain(
    "tokenmarket_indexed_block",
    "The last block fully ingested, per chain.",
    (id) => options.sync.get(id)?.indexedBlock,
  );
  const readinessOf = (id: number) => options.readiness?.chains().find((c) => c.chainId === id);
  perChain(
    "tokenmarket_indexer_lag_blocks",
    "Blocks between the chain head (as last seen at the node) and the last ingested block.",
    (id) => {
      const live = readinessOf(id);
      if (live) return live.lagBlocks ?? undefined;
      const s = options.sync.get(id);
      return s && s.headBlock !== null ? Math.max(0, s.headBlock - s.indexedBlock) : undefined;
    },
  );
  perChain(
    "tokenmarket_node_head_age_seconds",
    "Seconds since the chain's node last answered the head (absent without an indexer in this process).",
    (id) => readinessOf(id)?.headAgeSeconds ?? undefined,
  );
  /** 1 or 0 by the chain's live readiness; absent without an indexer in this process. */
  const readinessFlag = (name: string, help: string, holds: (r: ChainReadiness) => boolean) =>
    perChain(name, help, (id) => {
      const r = readinessOf(id);
      return r === undefined ? undefined : holds(r) ? 1 : 0;
    });
  readinessFlag(
    "tokenmarket_chain_ready",
    "1 when the chain is ready (indexer running, node answering, lag within the limit), else 0; /readyz says why.",
    (r) => r.ready,
  );
  perChain(
    "tokenmarket_indexer_factory_scan_ratio",
    "Share (0 to 1) of the scan of the factories for pools created before the start block, while it runs.",
    (id) => readinessOf(id)?.factoryScan ?? undefined,
  );
  readinessFlag(
    "tokenmarket_indexer_stopped",
    "1 when the chain's indexing has stopped on a fatal error (an operator must act), else 0.",
    (r) => r.indexer === "stopped",
  );
  readinessFlag(
    "tokenmarket_node_unreachable",
    "1 when the chain's node has not answered the head for longer than maxHeadAgeMs, else 0.",
    (r) => r.indexer === "node-unreachable",
  );
  perChain(
    "tokenmarket_indexer_lag_seconds",
    "Seconds between the chain head's time and the last ingested block's time.",
    (id) => {
      const s = options.sync.get(id);
      return s?.headAt && s.indexedAt
        ? Math.max(0, (s.headAt.getTime() - s.indexedAt.getTime()) / 1000)
        : undefined;
    },
  );
  perChain("tokenmarket_indexed_block_age_seconds", "Seconds since the last ingested block's time.", (id) => {
    const at = options.sync.get(id)?.indexedAt;
    return at ? Math.max(0, (Date.now() - at.getTime()) / 1000) : undefined;
  });

  return {
    registry,
    observe(labels, seconds) {
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    cacheLookup(hit) {
      cache.inc({ result: hit ? "hit" : "miss" });
    },
    stream: {
      sent: (type) => streamSent.inc({ type }),
      closed: (reason) => streamClosed.inc({ reason }),
      delay: (seconds) => streamDelay.observe(seconds),
      track(state) {
        streamState = state;
      },
    },
    async render() {
      const extra = options.extra ?? [];
      const merged = extra.length > 0 ? Registry.merge([registry, ...extra]) : registry;
      return { contentType: registry.contentType, body: await merged.metrics() };
    },
  };
}
