import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { ApiContext } from "../context.js";
import { DATABASE_SERVER_DOWN_LIMIT_MS, databaseServerFailing } from "../readiness.js";
import { Nullable, StringEnum } from "../schemas.js";

const EmbeddedPostgres = Type.Object(
  {
    state: StringEnum(["running", "restarting", "stopped"] as const),
    exits: Type.Integer({ description: "Times it exited on its own since the service started." }),
    down_seconds: Nullable(Type.Number({ description: "Seconds it has been down; null while it runs." })),
  },
  {
    additionalProperties: false,
    description:
      "The embedded Postgres this process started (absent with an external database): restarted with backoff when it exits on its own.",
  },
);
const Health = (status: "ok" | "failing") =>
  Type.Object(
    {
      status: StringEnum([status] as const),
      reason: Type.Optional(Type.String()),
      embedded_postgres: Type.Optional(EmbeddedPostgres),
    },
    { additionalProperties: false },
  );

/**
 * GET /healthz: liveness; answers 200 as long as the process serves HTTP, unless the embedded
 * Postgres it supervises has been down (restarts failing) for longer than
 * DATABASE_SERVER_DOWN_LIMIT_MS: then 503, so that a supervisor's liveness probe restarts the
 * service. No key.
 */
export function registerHealthz(app: FastifyInstance, ctx: ApiContext) {
  app.get(
    "/healthz",
    {
      schema: {
        tags: ["operations"],
        summary: "Liveness",
        description: `Answers 200 while the process serves HTTP; 503 when the embedded Postgres it started has been down for more than ${DATABASE_SERVER_DOWN_LIMIT_MS / 1000} s (it is restarted with backoff until then). Needs no key.`,
        response: {
          200: { ...Health("ok"), description: "Alive." },
          503: {
            ...Health("failing"),
            examples: [
              {
                status: "failing",
                reason:
                  "the embedded Postgres exited unexpectedly (killed by SIGKILL) 64 s ago and is being restarted",
                embedded_postgres: { state: "restarting", exits: 1, down_seconds: 64.2 },
              },
            ],
            description: `The embedded Postgres has been down for more than ${DATABASE_SERVER_DOWN_LIMIT_MS / 1000} s.`,
          },
        },
      },
    },
    async (_request, reply) => {
      const server = ctx.readiness.databaseServer();
      if (!server) return reply.send({ status: "ok" as const });
      const embedded_postgres = {
        state: server.state,
        exits: server.exits,
        down_seconds: server.downSeconds,
      };
      if (databaseServerFailing(server)) {
        return reply
          .status(503)
          .send({ status: "failing" as const, reason: server.reason ?? "", embedded_postgres });
      }
      return reply.send({
        status: "ok" as const,
        ...(server.reason ? { reason: server.reason } : {}),
        embedded_postgres,
      });
    },
  );
}
