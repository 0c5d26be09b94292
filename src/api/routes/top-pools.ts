import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { Queryable } from "../../store/db.js";
import {
  findPairMarkets,
  newestTradedPools,
  poolsByLiquidity,
  poolsByVolume,
  trendingCandidates,
} from "../../store/market-windows.js";
import type { ApiContext } from "../context.js";
import { pairMarketRecord, TopPoolRecord } from "../market-records.js";
import { referenceTokensOf } from "../pool-labels.js";
import { errorResponses, examples, ok, StringEnum } from "../schemas.js";
import { rankTrending } from "../trending.js";

export const TOP_POOL_SORTS = ["volume", "liquidity", "trending", "new"] as const;
type Sort = (typeof TOP_POOL_SORTS)[number];
export const DEFAULT_TOP_POOLS = 20;
export const MAX_TOP_POOLS = 100;

const Query = Type.Object({
  chain: Type.Integer({ minimum: 1, description: "A configured network id.", examples: [examples.chain] }),
  sort: Type.Optional(
    StringEnum(TOP_POOL_SORTS, {
      default: "volume",
      description:
        "`volume`: 24 h USD volume; `liquidity`: USD liquidity; `trending`: the last hour's volume against the day's average hour, among pools at or above the liquidity floor at their depth with a minimum 1 h volume; `new`: the most recently created pools that have traded. Ties by pair address.",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TOP_POOLS,
      default: DEFAULT_TOP_POOLS,
      description: `Most pools answered, 1 to ${MAX_TOP_POOLS} (default ${DEFAULT_TOP_POOLS}).`,
    }),
  ),
});

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(TopPoolRecord, { examples: [TopPoolRecord.examples] }),
  "Pair market records, best first, with their rank (and the trending score for sort=trending).",
);

/** The pools of one order, best first, with the trending score where it applies. */
async function topPools(
  db: Queryable,
  ctx: ApiContext,
  chain: number,
  sort: Sort,
  limit: number,
): Promise<{ pool: string; score?: number }[]> {
  if (sort === "volume") return (await poolsByVolume(db, chain, limit)).map((pool) => ({ pool }));
  if (sort === "liquidity") return (await poolsByLiquidity(db, chain, limit)).map((pool) => ({ pool }));
  if (sort === "new") return (await newestTradedPools(db, chain, limit)).map((pool) => ({ pool }));
  const { liquidityFloorUsd, trendingMinVolumeUsd } = ctx.config.pricing;
  const candidates = await trendingCandidates(db, chain, trendingMinVolumeUsd);
  return rankTrending(candidates, { liquidityFloorUsd, minVolumeUsd1h: trendingMinVolumeUsd })
    .slice(0, limit)
    .map(({ pool, score }) => ({ pool, score }));
}

/** GET /api/v1/pools/top (extension, not in the spec): a network's top pools by volume, liquidity, trend or age. */
export function registerTopPools(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/pools/top",
    {
      schema: {
        tags: ["market data"],
        summary: "Top pools of a network (extension)",
        description:
          "Pair market records (as /api/v1/pairs/market) of a network's best pools for `sort`, each with its `rank`. An addition to the specification; the specified answers are unchanged.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`chain` is missing, malformed or not a configured network; `sort` or `limit` is invalid.",
          }),
        },
      },
    },
    async (request, reply) => {
      const { chain } = request.query;
      ctx.requireChain(chain, "chain");
      const sort = request.query.sort ?? "volume";
      const limit = request.query.limit ?? DEFAULT_TOP_POOLS;
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `pools-top|${chain}|${sort}|${limit}`,
        chains: [chain],
        compute: async (db) => {
          const ranked = await topPools(db, ctx, chain, sort, limit);
          const rows = await findPairMarkets(
            db,
            chain,
            ranked.map((r) => r.pool),
          );
          const reference = referenceTokensOf(ctx.config.chains, chain);
          return ranked.flatMap(({ pool, score }, i) => {
            const row = rows.get(pool);
            if (!row) return [];
            const record = { ...pairMarketRecord(row, reference), rank: i + 1 };
            return [score === undefined ? record : { ...record, trending_score: score }];
          });
        },
      });
    },
  );
}
