import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { findPairMarkets } from "../../store/market-windows.js";
import type { ApiContext } from "../context.js";
import { MAX_MARKET_IDS, maxListLength, parsePairIdList, patterns } from "../ids.js";
import { PairMarketRecord, pairMarketRecord } from "../market-records.js";
import { referenceTokensOf } from "../pool-labels.js";
import { errorResponses, examples, ok } from "../schemas.js";

const Query = Type.Object({
  pair_id: Type.String({
    pattern: patterns.marketPairIdList,
    maxLength: maxListLength(77, MAX_MARKET_IDS),
    description: `One pair id \`<pair address>:<network id>\` (a pool inside a manager, such as Uniswap V4's: its 32-byte pool id in place of the address), or up to ${MAX_MARKET_IDS} separated by commas. Duplicates are answered once, in request order.`,
    examples: [examples.pairId],
  }),
});

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(PairMarketRecord, { examples: [PairMarketRecord.examples] }),
  "The known pairs, in request order (unknown ones left out).",
);

/**
 * GET /api/v1/pairs/market (extension, not in the spec): pairs' market statistics over 5 minutes,
 * 1, 6 and 24 hours, price, liquidity, creation and first trade.
 */
export function registerPairMarket(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/pairs/market",
    {
      schema: {
        tags: ["market data"],
        summary: "Market statistics of pairs (extension)",
        description:
          "Per pair: the pool price of token0 in token1 and the tokens' USD prices, and per window (5m, 1h, 6h, 24h) the price change of token0 in token1, USD volume, buys and sells of token0, and makers; USD liquidity, creation block and time, first trade. Always an array in request order; unknown pairs are left out. An addition to the specification; the specified answers are unchanged.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: `\`pair_id\` is missing or malformed, lists more than ${MAX_MARKET_IDS} ids, or names an unconfigured network.`,
          }),
        },
      },
    },
    async (request, reply) => {
      const ids = parsePairIdList(request.query.pair_id, "pair_id");
      for (const id of ids) ctx.requireChain(id.chainId, "pair_id");
      const chains = [...new Set(ids.map((i) => i.chainId))];
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `pairs-market|${ids.map((i) => i.id).join(",")}`,
        chains,
        compute: async (db) => {
          const found = new Map<string, ReturnType<typeof pairMarketRecord>>();
          for (const chain of chains) {
            const rows = await findPairMarkets(
              db,
              chain,
              ids.filter((i) => i.chainId === chain).map((i) => i.address),
            );
            const reference = referenceTokensOf(ctx.config.chains, chain);
            for (const row of rows.values())
              found.set(`${row.pool}:${chain}`, pairMarketRecord(row, reference));
          }
          return ids.flatMap((id) => {
            const record = found.get(id.id);
            return record ? [record] : [];
          });
        },
      });
    },
  );
}
