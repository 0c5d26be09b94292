import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { StringEnum } from "../schemas.js";

/** GET /healthz: liveness; answers as long as the process serves HTTP. No key. */
export function registerHealthz(app: FastifyInstance) {
  app.get(
    "/healthz",
    {
      schema: {
        tags: ["operations"],
        summary: "Liveness",
        description: "Answers 200 while the process serves HTTP. Needs no key.",
        response: {
          200: Type.Object(
            { status: StringEnum(["ok"] as const) },
            { additionalProperties: false, description: "Alive." },
          ),
        },
      },
    },
    async () => ({ status: "ok" as const }),
  );
}
