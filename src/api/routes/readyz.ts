import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { getSyncStatus } from "../../store/chain-state.js";
import type { ApiContext } from "../context.js";
import { Nullable, StringEnum } from "../schemas.js";
import { toIso } from "../times.js";

const ChainReadiness = Type.Object(
  {
    chain_id: Type.Integer(),
    indexed_block: Nullable(Type.Integer()),
    head_block: Nullable(Type.Integer()),
    lag_blocks: Nullable(Type.Integer()),
    max_lag_blocks: Type.Integer(),
    head_age_seconds: Nullable(
      Type.Number({ description: "Seconds since the node last answered the head; null when unknown." }),
    ),
    indexer: StringEnum(["running", "node-unreachable", "stopped", "unknown"] as const),
    stopped_since: Nullable(Type.String({ format: "date-time" })),
    ready: Type.Boolean(),
    reason: Nullable(Type.String({ description: "Why the network is not ready; null when it is." })),
  },
  { additionalProperties: false },
);
const Readiness = Type.Object(
  {
    status: StringEnum(["ready", "not ready"] as const),
    database: StringEnum(["ok", "unreachable"] as const),
    reasons: Type.Array(Type.String(), {
      description: "Every reason for not being ready; empty when ready.",
    }),
    /** Where data reads go: the replicas, or the primary when none is usable (or none is configured). */
    reads: Type.Object(
      {
        source: StringEnum(["replicas", "primary"] as const),
        replicas: Type.Array(
          Type.Object(
            {
              host: Type.String(),
              state: StringEnum(["ok", "lagging", "down"] as const),
              lag_seconds: Nullable(Type.Number()),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    chains: Type.Array(ChainReadiness),
  },
  { additionalProperties: false },
);

const TIMEOUT_MS = 2000;

const lagging = "chain 31337 lags 45 blocks behind the head (limit 20)";
const notReadyExample = {
  status: "not ready",
  database: "ok",
  reasons: [lagging],
  reads: { source: "primary", replicas: [] },
  chains: [
    {
      chain_id: 31337,
      indexed_block: 4165,
      head_block: 4210,
      lag_blocks: 45,
      max_lag_blocks: 20,
      head_age_seconds: 1.2,
      indexer: "running",
      stopped_since: null,
      ready: false,
      reason: lagging,
    },
  ],
};

/**
 * GET /readyz: 200 when the database answers (and the embedded Postgres, when this process
 * started one, runs: not while it is being restarted) and, for every configured chain, the indexer runs,
 * its node answered the head within `maxHeadAgeMs`, and it is within `maxLagBlocks` of that head;
 * 503 otherwise, with the reasons in words. No key.
 */
export function registerReadyz(app: FastifyInstance, ctx: ApiContext) {
  app.get(
    "/readyz",
    {
      schema: {
        tags: ["operations"],
        summary: "Readiness",
        description:
          "200 when the database answers and every configured network is indexed: its indexer has not stopped on a fatal error, its node answered within `maxHeadAgeMs`, and it is at most `maxLagBlocks` behind the head. 503 otherwise, with `reasons`. Needs no key.",
        response: {
          200: { ...Readiness, description: "Ready." },
          503: {
            ...Readiness,
            examples: [notReadyExample],
            description:
              "Not ready: the database is unreachable (or the embedded Postgres is being restarted), a network's indexer stopped, its node is unreachable, or it lags. A stale head while the database is down, or within a moment of its return, is put on the database, never on the node.",
          },
        },
      },
    },
    async (_request, reply) => {
      let reachable = true;
      let timer: NodeJS.Timeout | undefined;
      try {
        // A fresh look at the database (within 2 s), which also refreshes the sync watch's lag.
        await Promise.race([
          getSyncStatus(ctx.db).then(() => ctx.sync.refresh()),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error("database timeout")), TIMEOUT_MS);
          }),
        ]);
        reachable = ctx.sync.reachable();
      } catch {
        reachable = false;
      } finally {
        clearTimeout(timer);
      }
      const chains = ctx.readiness.chains();
      const server = ctx.readiness.databaseServer();
      const reasons = [
        ...(server?.reason ? [server.reason] : []),
        ...(reachable ? [] : [`the database did not answer within ${TIMEOUT_MS / 1000} s`]),
        ...chains.flatMap((c) => (c.reason === null ? [] : [c.reason])),
      ];
      const ready = reasons.length === 0;
      return reply.status(ready ? 200 : 503).send({
        status: ready ? "ready" : "not ready",
        database: reachable ? "ok" : "unreachable",
        reasons,
        reads: ctx.reads.status(),
        chains: chains.map((c) => ({
          chain_id: c.chainId,
          indexed_block: c.indexedBlock,
          head_block: c.headBlock,
          lag_blocks: c.lagBlocks,
          max_lag_blocks: c.maxLagBlocks,
          head_age_seconds: c.headAgeSeconds,
          indexer: c.indexer,
          stopped_since: c.stalledSince ? toIso(c.stalledSince) : null,
          ready: c.ready,
          reason: c.reason,
        })),
      });
    },
  );
}
