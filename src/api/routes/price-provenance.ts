import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { notFound } from "../../internal/errors.js";
import { finite } from "../../model/index.js";
import { getTokenMarkets } from "../../store/prices.js";
import type { ApiContext } from "../context.js";
import { parseId } from "../ids.js";
import { errorResponses, examples, Nullable, ok, params } from "../schemas.js";
import { toIso } from "../times.js";

const Query = Type.Object({ tokenId: params.tokenId });

const Provenance = Type.Object(
  {
    token_id: Type.String(),
    usd_price: Nullable(
      Type.Number({ description: "The current USD price; null when no qualifying route exists." }),
    ),
    block_number: Type.Integer({ description: "The block at which the price was set." }),
    date: Type.String({ format: "date-time", description: "That block's time." }),
    provenance: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "How the price was derived, as stored by the pricing stage: `method` (`anchor` for a USD anchor, `pools` otherwise), the `pools` used with their quote token, USD liquidity, price and weight, and a `confidence`. See docs/PRICING.md.",
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        token_id: examples.wethId,
        usd_price: 3150.73,
        block_number: 4210,
        date: "2026-11-21T10:00:11Z",
        provenance: {
          method: "pools",
          pools: [
            {
              pool: examples.PAIR,
              dex: "Uniswap V3",
              quote: examples.USDC,
              liquidity_usd: 250000000,
              price_usd: 3150.7,
              weight: 0.93,
            },
          ],
          confidence: 0.98,
        },
      },
    ],
  },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(Provenance, "The price and how it was derived.");

/**
 * GET /v1/tokens/price-provenance (opt-in extension, not in the spec): how a token's USD price
 * was derived. The specified endpoints are unchanged by it.
 */
export function registerPriceProvenance(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/tokens/price-provenance",
    {
      schema: {
        tags: ["tokens"],
        summary: "Provenance of a token's USD price (extension)",
        description:
          "The pools, their liquidity and weights, and the confidence behind a token's current USD price. An addition to the specification; the specified answers are unchanged.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`tokenId` is missing or malformed, or names an unconfigured network.",
            404: {
              description: "The token has no price record.",
              examples: [{ summary: "No price", message: `tokenId ${examples.wethId} has no price record` }],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const id = parseId(request.query.tokenId, "tokenId");
      ctx.requireChain(id.chainId, "tokenId");
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `provenance|${id.id}`,
        chains: [id.chainId],
        compute: async (db) => {
          const market = (await getTokenMarkets(db, id.chainId, [id.address])).get(id.address);
          // A token with 24 h statistics but no token_prices row has no price block.
          if (!market || market.priceBlock === null || market.priceTime === null) {
            throw notFound(`tokenId ${id.id} has no price record`);
          }
          const { provenance } = market;
          return {
            token_id: id.id,
            usd_price: finite(market.usdPrice),
            block_number: Number(market.priceBlock),
            date: toIso(market.priceTime),
            provenance: typeof provenance === "object" && provenance !== null ? provenance : {},
          };
        },
      });
    },
  );
}
