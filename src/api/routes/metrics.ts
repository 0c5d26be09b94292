import type { FastifyInstance } from "fastify";
import type { ApiMetrics } from "../metrics.js";

/** GET /metrics: Prometheus text exposition. No key; not in the OpenAPI document. */
export function registerMetrics(app: FastifyInstance, metrics: ApiMetrics) {
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}
