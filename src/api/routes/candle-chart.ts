import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { notFound } from "../../internal/errors.js";
import { getTokenUsdCandles } from "../charts.js";
import type { ApiContext } from "../context.js";
import { parseId } from "../ids.js";
import { seriesTokenOf } from "../pool-labels.js";
import { errorResponses, examples, ok, params } from "../schemas.js";
import { toIso } from "../times.js";

export const CHART_INTERVALS = [5, 15, 30, 60] as const;

const Query = Type.Object({
  tokenId: params.tokenId,
  days: params.days,
  interval: Type.Unsafe<(typeof CHART_INTERVALS)[number]>({
    type: "integer",
    enum: [...CHART_INTERVALS],
    description: "Candle width in minutes: 5, 15, 30 or 60.",
    examples: [60],
  }),
});

const DeprecatedCandle = Type.Object(
  {
    _id: Type.Object(
      {
        token_id: Type.String({ description: "Token id." }),
        date: Type.String({ format: "date-time", description: "Interval start, ISO 8601 UTC." }),
      },
      { additionalProperties: false },
    ),
    h: Type.Number(),
    l: Type.Number(),
    o: Type.Number(),
    c: Type.Number(),
    v: Type.Number({ description: "Volume in token units." }),
  },
  { additionalProperties: false },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(DeprecatedCandle, {
    examples: [
      [
        {
          _id: { token_id: examples.wethId, date: "2026-11-21T10:00:00Z" },
          h: 3162.5,
          l: 3149.8,
          o: 3150.1,
          c: 3160.2,
          v: 12.5,
        },
      ],
    ],
  }),
  "Candles in ascending time.",
  {
    Deprecation: { type: "string", description: "When this endpoint was deprecated (RFC 9745)." },
    Link: { type: "string", description: "The successor endpoint and the deprecation notes." },
  },
);

/**
 * GET /v1/tokens/candle-chart (deprecated; successor /api/v1/candles): USD candles of
 * a token over its qualifying pools for the last `days` days.
 */
export function registerCandleChart(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/tokens/candle-chart",
    {
      config: { deprecation: { successor: "/api/v1/candles" } },
      schema: {
        tags: ["tokens"],
        summary: "USD candles of a token (deprecated)",
        description:
          'USD candles of the token over its qualifying pools for the last `days` days, ascending; `v` in token units. Deprecated: answers carry `Deprecation` and `Link: </api/v1/candles>; rel="successor-version"`.',
        deprecated: true,
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`tokenId`, `days` or `interval` is missing or malformed, `days` is outside 1 to 90, `interval` is not 5, 15, 30 or 60, or the network is not configured.",
            404: {
              description: "No price update of the token in the range.",
              examples: [
                {
                  summary: "No price update",
                  message: `tokenId ${examples.wethId} has no price update in the last 7 days`,
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
      const { days, interval } = request.query;
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `candle-chart|${id.id}|${days}|${interval}`,
        chains: [id.chainId],
        compute: async (db) => {
          const candles = await getTokenUsdCandles(db, {
            chainId: id.chainId,
            token: seriesTokenOf(ctx.config.chains, id),
            days,
            intervalMinutes: interval,
            now: ctx.now(),
          });
          if (candles.length === 0)
            throw notFound(`tokenId ${id.id} has no price update in the last ${days} days`);
          return candles.map((c) => ({
            _id: { token_id: id.id, date: toIso(new Date(c.time)) },
            h: c.h,
            l: c.l,
            o: c.o,
            c: c.c,
            v: c.v,
          }));
        },
      });
    },
  );
}
