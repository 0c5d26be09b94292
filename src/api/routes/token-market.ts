import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { NATIVE_COIN } from "../../model/index.js";
import { withSeriesChanges } from "../../pricing/native-coin.js";
import { findTokenMarkets } from "../../store/market-windows.js";
import type { ApiContext } from "../context.js";
import { MAX_MARKET_IDS, maxListLength, parseIdList, patterns } from "../ids.js";
import { TokenMarketRecord, tokenMarketRecord } from "../market-records.js";
import { seriesTokenOf } from "../pool-labels.js";
import { errorResponses, examples, ok } from "../schemas.js";

const Query = Type.Object({
  tokenId: Type.String({
    pattern: patterns.marketIdList,
    maxLength: maxListLength(52, MAX_MARKET_IDS),
    description: `One token id \`<address>:<network id>\`, or up to ${MAX_MARKET_IDS} separated by commas. Duplicates are answered once, in request order.`,
    examples: [`${examples.wethId},${examples.usdcId}`],
  }),
});

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(TokenMarketRecord, { examples: [TokenMarketRecord.examples] }),
  "The known tokens, in request order (unknown ones left out).",
);

/**
 * GET /v1/tokens/market (extension, not in the spec): tokens' market statistics over 5 minutes,
 * 1, 6 and 24 hours, liquidity, supply, FDV and market cap, pools and first trade.
 */
export function registerTokenMarket(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/tokens/market",
    {
      schema: {
        tags: ["tokens"],
        summary: "Market statistics of tokens (extension)",
        description:
          "Per token: USD price, and per window (5m, 1h, 6h, 24h) the price change, USD volume, buys, sells and makers; USD liquidity, total supply, FDV, circulating supply and market cap, pools, first trade. Always an array in request order; unknown tokens are left out (`[]` when none is known). An addition to the specification; the specified answers are unchanged.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: `\`tokenId\` is missing or malformed, lists more than ${MAX_MARKET_IDS} ids, or names an unconfigured network.`,
          }),
        },
      },
    },
    async (request, reply) => {
      const ids = parseIdList(request.query.tokenId, "tokenId");
      for (const id of ids) ctx.requireChain(id.chainId, "tokenId");
      const chains = [...new Set(ids.map((i) => i.chainId))];
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `tokens-market|${ids.map((i) => i.id).join(",")}`,
        chains,
        compute: async (db) => {
          const found = new Map<string, ReturnType<typeof tokenMarketRecord>>();
          for (const chain of chains) {
            const addresses = ids.filter((i) => i.chainId === chain).map((i) => i.address.toLowerCase());
            // The native coin's price changes are its USD series', the wrapped native token's.
            const series = seriesTokenOf(ctx.config.chains, { chainId: chain, address: NATIVE_COIN });
            const native = addresses.includes(NATIVE_COIN) && series !== NATIVE_COIN;
            const rows = await findTokenMarkets(db, chain, native ? [...addresses, series] : addresses);
            const nativeRow = rows.get(NATIVE_COIN);
            if (native && nativeRow) {
              nativeRow.windows = withSeriesChanges(nativeRow.windows, rows.get(series)?.windows ?? null);
            }
            for (const row of rows.values()) {
              if (!addresses.includes(row.token)) continue;
              found.set(
                `${row.token}:${chain}`,
                tokenMarketRecord(row, ctx.config.pricing.circulatingSupply),
              );
            }
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
