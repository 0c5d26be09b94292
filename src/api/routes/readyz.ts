import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { getSyncStatus } from "../../store/sync-queries.js";
import type { ApiContext } from "../context.js";
import { Nullable, StringEnum } from "../schemas.js";

const ChainReadiness = Type.Object(
  {
    chain_id: Type.Integer(),
    indexed_block: Nullable(Type.Integer()),
    head_block: Nullable(Type.Integer()),
    lag_blocks: Nullable(Type.Integer()),
    max_lag_blocks: Type.Integer(),
    ready: Type.Boolean(),
  },
  { additionalProperties: false },
);
const Readiness = Type.Object(
  {
    status: StringEnum(["ready", "not ready"] as const),
    database: StringEnum(["ok", "unreachable"] as const),
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

/**
 * GET /readyz: 200 when the database answers and every configured chain's indexer is within
 * its `maxLagBlocks` of the head; 503 otherwise, saying which part is not ready. No key.
 */
export function registerReadyz(app: FastifyInstance, ctx: ApiContext) {
  app.get(
    "/readyz",
    {
      schema: {
        tags: ["operations"],
        summary: "Readiness",
        description:
          "200 when the database answers and every configured network's indexer is at most `maxLagBlocks` behind its head; 503 otherwise. Needs no key.",
        response: {
          200: { ...Readiness, description: "Ready." },
          503: { ...Readiness, description: "Not ready: the database is unreachable or a network lags." },
        },
      },
    },
    async (_request, reply) => {
      let statuses: Awaited<ReturnType<typeof getSyncStatus>> | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        statuses = await Promise.race([
          getSyncStatus(ctx.db),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error("database timeout")), TIMEOUT_MS);
          }),
        ]);
      } catch {
        statuses = undefined;
      } finally {
        clearTimeout(timer);
      }
      const chains = ctx.config.chains.map((chain) => {
        const status = statuses?.find((s) => s.chainId === chain.id);
        const lag = status?.lagBlocks ?? null;
        return {
          chain_id: chain.id,
          indexed_block: status?.indexedBlock ?? null,
          head_block: status?.headBlock ?? null,
          lag_blocks: lag,
          max_lag_blocks: chain.maxLagBlocks,
          ready: lag !== null && lag <= chain.maxLagBlocks,
        };
      });
      const ready = statuses !== undefined && chains.every((c) => c.ready);
      return reply.status(ready ? 200 : 503).send({
        status: ready ? "ready" : "not ready",
        database: statuses === undefined ? "unreachable" : "ok",
        reads: ctx.reads.status(),
        chains,
      });
    },
  );
}
