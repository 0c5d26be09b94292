import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { badRequest, notFound } from "../../internal/errors.js";
import { CANDLE_INTERVALS, type CandleInterval, type ChartCandle } from "../../model/index.js";
import type { CandleCurrency } from "../../pricing/candles.js";
import type { Queryable } from "../../store/db.js";
import { findPool } from "../../store/pools.js";
import { candleRecords } from "../candle-records.js";
import {
  countBackEnd,
  getAssetPairCandles,
  getPairCandles,
  getPairCandlesBefore,
  pairCandlesRetainedFrom,
} from "../charts.js";
import type { ApiContext } from "../context.js";
import { assetSide, notATokenOfPair, parseId, parsePairId } from "../ids.js";
import { errorResponses, examples, ok, params, StringEnum, timeParam } from "../schemas.js";
import { bucketCount, MAX_CANDLES, parseTimeParam, toIso } from "../times.js";

const intervals = Object.keys(CANDLE_INTERVALS) as CandleInterval[];
const CURRENCIES = ["token", "usd"] as const satisfies readonly CandleCurrency[];

const Query = Type.Object({
  asset_id: params.assetId,
  pair_id: params.pairId,
  from: Type.Optional(
    timeParam(
      "Start of the range: ISO 8601 with a time zone, e.g. `2026-11-20T00:00:00Z`, or (extension) unix seconds, e.g. `1795132800`. Required unless `limit` is given.",
    ),
  ),
  to: Type.Optional(
    timeParam(
      "End of the range (after `from`), ISO 8601 or (extension) unix seconds; candles stop at the current time. Required unless `limit` is given.",
    ),
  ),
  interval: StringEnum(intervals, {
    description: "Candle width; buckets are aligned to the UTC epoch.",
    examples: ["1h"],
  }),
  currency: Type.Optional(
    StringEnum(CURRENCIES, {
      description:
        "Extension. `token` (default): prices in the pair's other token, volume in `asset_id`. `usd`: `asset_id`'s USD price at each trade of the pair (the trade's stored USD price of that token; trades without one are left out), volume the trades' USD value.",
      examples: ["usd"],
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_CANDLES,
      description: `Extension: count-back paging. The last \`limit\` intervals (1 to ${MAX_CANDLES}) starting before \`before\`, instead of \`from\`/\`to\` (giving both is a 400 naming \`limit\`).`,
    }),
  ),
  before: Type.Optional(
    timeParam(
      "Extension, with `limit`: the exclusive end of the page, ISO 8601 or unix seconds, aligned up to the interval (default: now, which includes the current interval). The next older page is `before` = the `time` (or `date`) of this page's first candle.",
    ),
  ),
});

const Candle = Type.Object(
  {
    open: Type.Number({ description: "Price of the interval's first trade (in USD with `currency=usd`)." }),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number({ description: "Price of the interval's last trade." }),
    volume: Type.Number({
      description:
        "Amount of `asset_id` traded in the interval (with `currency=usd`: the trades' USD value); 0 when none.",
    }),
    date: Type.String({ format: "date-time", description: "Interval start, ISO 8601 UTC." }),
    time: Type.Integer({ description: "Interval start in milliseconds since the epoch." }),
  },
  { additionalProperties: false },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
export const OkResponse = ok(
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
      [
        {
          open: 3151.02,
          high: 3163.4,
          low: 3150.7,
          close: 3161.15,
          volume: 39387.5,
          date: "2026-11-21T10:00:00Z",
          time: 1795255200000,
        },
        {
          open: 3161.15,
          high: 3161.15,
          low: 3161.15,
          close: 3161.15,
          volume: 0,
          date: "2026-11-21T11:00:00Z",
          time: 1795258800000,
        },
      ],
      [],
    ],
  }),
  "Candles in ascending time. The second example is `currency=usd` (USD prices, USD volume); the third a count-back page past the pair's first trade (`limit`, `before`).",
);

/**
 * GET /api/v1/candles: OHLCV of `asset_id` priced in the other
 * token of the pair, ascending, empty intervals filled with the previous close and volume 0.
 * Extensions (the specified answers are unchanged): `currency=usd`, count-back paging with
 * `limit` and `before`, and unix seconds for the time parameters.
 */
export function registerCandles(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/candles",
    {
      schema: {
        tags: ["market data"],
        summary: "Candles of a pair",
        description: [
          `Candles of \`asset_id\` priced in the pair's other token (execution prices of the trades, other amount / asset amount), ascending. Intervals between the first trade in range and \`to\` (capped at now) without trades have volume 0 and the previous close. At most ${MAX_CANDLES} intervals per request.`,
          "",
          "Extensions beyond the specification (optional; without them the answer is the specified one):",
          "- `currency=usd`: `asset_id`'s USD price at each trade of the pair (the trade's stored USD price of that token; trades without one are left out) and the trades' USD volume. Empty intervals carry the previous USD close at volume 0.",
          `- \`limit\` (1–${MAX_CANDLES}) with optional \`before\` (default now): count-back paging, the last \`limit\` intervals starting before \`before\` aligned up to the interval, instead of \`from\`/\`to\`. Never intervals before the pair's first trade (first USD-priced trade with \`currency=usd\`); \`200 []\` once the history is exhausted. Next older page: \`before\` = this page's first \`date\`.`,
          "- `from`, `to`, `before` also take unix seconds (plain decimal digits).",
        ].join("\n"),
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: `A parameter is missing or malformed, \`from\` is not before \`to\`, the range holds more than ${MAX_CANDLES} intervals, \`limit\`/\`before\` are given with \`from\`/\`to\` (the message names \`limit\`), \`asset_id\` is not a token of the pair, or the network is not configured.`,
            404: {
              description:
                "The pair is unknown, or (with `from`/`to`) it has no trade in the range (with `currency=usd`: no trade with a USD price of `asset_id`).",
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
      const countBack = query.limit !== undefined || query.before !== undefined;
      if (countBack && (query.from !== undefined || query.to !== undefined)) {
        throw badRequest(
          "query parameter limit cannot be combined with from and to: page back with limit (and before), or give a range with from and to",
        );
      }
      if (!countBack) {
        if (query.from === undefined)
          throw badRequest(
            "query parameter from is required (with to) for a range, or give limit (and before) to page back from the latest candles",
          );
        if (query.to === undefined) throw badRequest("query parameter to is required");
      } else if (query.limit === undefined) {
        throw badRequest("query parameter limit is required with before");
      }
      const asset = parseId(query.asset_id, "asset_id");
      const pair = parsePairId(query.pair_id, "pair_id");
      ctx.requireChain(pair.chainId, "pair_id");
      ctx.requireChain(asset.chainId, "asset_id");
      const currency: CandleCurrency = query.currency ?? "token";
      const interval = query.interval;
      const intervalSeconds = CANDLE_INTERVALS[interval];
      const now = ctx.now();

      // One of the two ways to choose the intervals: a range, or a page counted back.
      let read: {
        key: string;
        load: (db: Queryable, base: PairSide) => Promise<ChartCandle[]>;
        /** The 404's message when no candle is found; null: an empty page is the answer. */
        empty: string | null;
        /** Where the range starts (ms), to tell a range older than the retention from one without trades. */
        from?: number;
        /**
         * `load` with the pool looked up in the candles' statement (a round trip fewer): undefined
         * when the pool is unknown, `side: null` when `asset_id` is neither of its tokens.
         */
        loadOfAsset?: (
          db: Queryable,
          base: Omit<PairSide, "side"> & { asset: string },
        ) => Promise<{ side: 0 | 1; candles: ChartCandle[] } | { side: null } | undefined>;
      };
      if (query.limit !== undefined) {
        const limit = query.limit;
        const end = countBackEnd(
          query.before === undefined ? now : parseTimeParam(query.before),
          now,
          intervalSeconds,
        );
        read = {
          key: `before|${limit}|${end}`,
          load: (db, base) => getPairCandlesBefore(db, { ...base, intervalSeconds, limit, end }),
          // Past the first trade: an empty page, the end of the history.
          empty: null,
        };
      } else {
        const from = parseTimeParam(query.from as string);
        const to = parseTimeParam(query.to as string);
        if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
          throw badRequest("query parameters from and to must be valid date-times");
        }
        if (from.getTime() >= to.getTime()) throw badRequest("query parameter from must be before to");
        const count = bucketCount(from, to, intervalSeconds);
        if (count > MAX_CANDLES) {
          throw badRequest(
            `query parameters from and to span ${count} intervals of ${interval}; at most ${MAX_CANDLES} are allowed`,
          );
        }
        read = {
          key: `${from.getTime()}|${to.getTime()}`,
          load: (db, base) => getPairCandles(db, { ...base, intervalSeconds, from, to, now }),
          loadOfAsset: (db, base) => getAssetPairCandles(db, { ...base, intervalSeconds, from, to, now }),
          empty:
            currency === "usd"
              ? `pair ${pair.id} has no trade with a USD price of asset_id ${asset.id} between from and to`
              : `pair ${pair.id} has no trade between from and to`,
          from: from.getTime(),
        };
      }
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `candles|${pair.id}|${asset.id}|${interval}|${currency}|${read.key}`,
        chains: [pair.chainId],
        // candleRecords builds each record to the schema exactly (up to 2,160 of them).
        plainJson: true,
        compute: async (db) => {
          const unknownPair = () => notFound(`pair_id ${pair.id} is not a known pair`);
          let stored: ChartCandle[];
          if (read.loadOfAsset && asset.chainId === pair.chainId) {
            const found = await read.loadOfAsset(db, {
              chainId: pair.chainId,
              pool: pair.address,
              asset: asset.address,
              currency,
            });
            if (found === undefined) throw unknownPair();
            if (found.side === null) throw notATokenOfPair(asset, pair);
            stored = found.candles;
          } else {
            const pool = await findPool(db, pair.chainId, pair.address);
            if (!pool) throw unknownPair();
            const side = assetSide(pool, asset, pair);
            stored = await read.load(db, { chainId: pair.chainId, pool: pair.address, side, currency });
          }
          const candles = candleRecords(stored);
          if (candles.length === 0 && read.empty !== null) {
            // A range that starts before the 1-minute candles' retention (docs/API.md, "Retention").
            const retained = await pairCandlesRetainedFrom(db, intervalSeconds);
            if (retained !== null && read.from !== undefined && read.from < retained) {
              throw notFound(
                `${read.empty}: ${interval} candles are kept from ${toIso(new Date(retained))} on (1h, 4h and 1d candles reach further back)`,
              );
            }
            throw notFound(read.empty);
          }
          return candles;
        },
      });
    },
  );
}

/** What both ways of reading share: the pair, the side of `asset_id` and the currency. */
type PairSide = { chainId: number; pool: string; side: 0 | 1; currency: CandleCurrency };
