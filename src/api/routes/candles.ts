import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { badRequest, notFound } from "../../internal/errors.js";
import { getPairCandles } from "../../pricing/charts.js";
import { findPool } from "../../store/pools.js";
import type { ApiContext } from "../context.js";
import { parseId } from "../ids.js";
import { finite } from "../numbers.js";
import { dateTime, errorResponses, examples, ok, params, StringEnum } from "../schemas.js";
import { bucketCount, CANDLE_INTERVALS, type CandleInterval, MAX_CANDLES, toIso } from "../times.js";

const intervals = Object.keys(CANDLE_INTERVALS) as CandleInterval[];

const Query = Type.Object({
  asset_id: params.assetId,
  pair_id: params.pairId,
  from: dateTime("Start of the range, ISO 8601 with a time zone, e.g. `2026-11-20T00:00:00Z`."),
  to: dateTime("End of the range (after `from`); candles stop at the current time."),
  interval: StringEnum(intervals, {
    description: "Candle width; buckets are aligned to the UTC epoch.",
    examples: ["1h"],
  }),
});

const Candle = Type.Object(
  {
    open: Type.Number({ description: "Price of the interval's first trade." }),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number({ description: "Price of the interval's last trade." }),
    volume: Type.Number({ description: "Amount of `asset_id` traded in the interval (0 when none)." }),
    date: Type.String({ format: "date-time", description: "Interval start, ISO 8601 UTC." }),
    time: Type.Integer({ description: "Interval start in milliseconds since the epoch." }),
  },
  { additionalProperties: false },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(Candle, {
    examples: [
      [
        {
          open: 3150.1,
          high: 3162.5,
          low: 3149.8,
          close: 3160.2,
          volume: 12.5,
          date: "2026-11-21T10:00:00Z",
          time: 1795255200000,
        },
        {
          open: 3160.2,
          high: 3160.2,
          low: 3160.2,
          close: 3160.2,
          volume: 0,
          date: "2026-11-21T11:00:00Z",
          time: 1795258800000,
        },
      ],
    ],
  }),
  "Candles in ascending time.",
);

/**
 * GET /api/v1/candles (spec 4.4, decisions.md "Candles"): OHLCV of `asset_id` priced in the other
 * token of the pair, ascending, empty intervals filled with the previous close and volume 0.
 */
export function registerCandles(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/candles",
    {
      schema: {
        tags: ["market data"],
        summary: "Candles of a pair",
        description: `Candles of \`asset_id\` priced in the pair's other token (execution prices of the trades, other amount / asset amount), ascending. Intervals between the first trade in range and \`to\` (capped at now) without trades have volume 0 and the previous close. At most ${MAX_CANDLES} intervals per request.`,
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: `A parameter is missing or malformed, \`from\` is not before \`to\`, the range holds more than ${MAX_CANDLES} intervals, \`asset_id\` is not a token of the pair, or the network is not configured.`,
            404: {
              description: "The pair is unknown, or it has no trade in the range.",
              examples: [
                { summary: "Unknown pair", message: `pair_id ${examples.pairId} is not a known pair` },
                { summary: "No trade", message: `pair ${examples.pairId} has no trade between from and to` },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const { query } = request;
      const asset = parseId(query.asset_id, "asset_id");
      const pair = parseId(query.pair_id, "pair_id");
      ctx.requireChain(pair.chainId, "pair_id");
      ctx.requireChain(asset.chainId, "asset_id");
      const from = new Date(query.from);
      const to = new Date(query.to);
      if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
        throw badRequest("query parameters from and to must be valid date-times");
      }
      if (from.getTime() >= to.getTime()) throw badRequest("query parameter from must be before to");
      const intervalSeconds = CANDLE_INTERVALS[query.interval];
      const count = bucketCount(from, to, intervalSeconds);
      if (count > MAX_CANDLES) {
        throw badRequest(
          `query parameters from and to span ${count} intervals of ${query.interval}; at most ${MAX_CANDLES} are allowed`,
        );
      }
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `candles|${pair.id}|${asset.id}|${query.interval}|${from.getTime()}|${to.getTime()}`,
        chains: [pair.chainId],
        compute: async (db) => {
          const pool = await findPool(db, pair.chainId, pair.address);
          if (!pool) throw notFound(`pair_id ${pair.id} is not a known pair`);
          const side = asset.address === pool.token0 ? 0 : asset.address === pool.token1 ? 1 : undefined;
          if (side === undefined || asset.chainId !== pool.chain_id) {
            throw badRequest(`asset_id ${asset.id} is not one of the two tokens of pair ${pair.id}`);
          }
          const stored = await getPairCandles(db, {
            chainId: pair.chainId,
            pool: pair.address,
            side,
            intervalSeconds,
            from,
            to,
            now: ctx.now(),
          });
          // The schema's prices are plain numbers (spec 2.4): a non-finite stored price (the
          // reciprocal of a zero) has no honest value, and null would be serialised as 0, so such
          // a candle is left out rather than answered wrong.
          const candles = stored.filter((c) => [c.open, c.high, c.low, c.close].every(Number.isFinite));
          if (candles.length === 0) throw notFound(`pair ${pair.id} has no trade between from and to`);
          return candles.map((c) => ({
            open: c.open,
            high: c.high,
            low: c.low,
            close: c.close,
            volume: finite(c.volume) ?? 0,
            date: toIso(new Date(c.time)),
            time: c.time,
          }));
        },
      });
    },
  );
}
