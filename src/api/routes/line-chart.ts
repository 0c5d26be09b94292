import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { notFound } from "../../internal/errors.js";
import { getTokenLineChart } from "../charts.js";
import type { ApiContext } from "../context.js";
import { parseId } from "../ids.js";
import { seriesTokenOf } from "../pool-labels.js";
import { errorResponses, examples, ok, params } from "../schemas.js";
import { toIso } from "../times.js";

const Query = Type.Object({ tokenId: params.tokenId, days: params.days });

const LineChart = Type.Object(
  {
    labels: Type.Array(Type.String({ format: "date-time" }), { description: "Hour starts, ISO 8601 UTC." }),
    data: Type.Array(Type.Number(), {
      description: "Volume-weighted average USD price of the token in the hour at the same index.",
    }),
  },
  {
    additionalProperties: false,
    examples: [{ labels: ["2026-11-21T09:00:00Z", "2026-11-21T10:00:00Z"], data: [3148.2, 3155.9] }],
  },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(LineChart, "Hour labels and prices, index by index.");

/**
 * GET /v1/tokens/line-chart: hourly volume-weighted USD
 * prices over the last `days` days up to the current hour.
 */
export function registerLineChart(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/tokens/line-chart",
    {
      schema: {
        tags: ["tokens"],
        summary: "Hourly USD price series",
        description:
          "One point per hour over the last `days × 24` hours up to the current hour: the volume-weighted average USD price of the token over its qualifying pools. Hours without a trade carry the previous point; hours before the first known price are left out.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`tokenId` or `days` is missing or malformed, `days` is outside 1 to 90, or the network is not configured.",
            404: {
              description: "No trade of the token falls in the range.",
              examples: [
                {
                  summary: "No trade",
                  message: `tokenId ${examples.wethId} has no trade in the last 7 days`,
                },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const id = parseId(request.query.tokenId, "tokenId");
      ctx.requireChain(id.chainId, "tokenId");
      const days = request.query.days;
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `line|${id.id}|${days}`,
        chains: [id.chainId],
        compute: async (db) => {
          const chart = await getTokenLineChart(db, {
            chainId: id.chainId,
            token: seriesTokenOf(ctx.config.chains, id),
            days,
            now: ctx.now(),
          });
          if (chart.labels.length === 0)
            throw notFound(`tokenId ${id.id} has no trade in the last ${days} days`);
          return { labels: chart.labels.map((label) => toIso(new Date(label))), data: chart.data };
        },
      });
    },
  );
}
