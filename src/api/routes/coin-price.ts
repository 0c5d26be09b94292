import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { badRequest, notFound } from "../../internal/errors.js";
import { findTokens } from "../../store/tokens.js";
import type { ApiContext } from "../context.js";
import { toDecimalString } from "../numbers.js";
import { errorResponses, Nullable, ok } from "../schemas.js";

const Query = Type.Object({
  symbol: Type.String({
    pattern: "^[A-Za-z0-9]{1,10}$",
    description: "Coin symbol, any letter case (BTC, ETH, BNB, …): one of the coins configured.",
    examples: ["ETH"],
  }),
});

const CoinPrice = Type.Object(
  {
    price: Type.String({ description: "USD price as decimal text." }),
    change: Nullable(
      Type.String({
        description:
          'Percentage change of the USD price over 24 hours, as decimal text ("-1.25" = −1.25 %); null when unknown.',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ price: "3150.73", change: "-1.25" }] },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(CoinPrice, "The coin's price and change.");

/**
 * GET /v1/coins/price: a configured symbol maps to a
 * reference token (ETH → WETH, …) whose USD price and 24 h change are answered as decimal text.
 */
export function registerCoinPrice(app: FastifyInstance, ctx: ApiContext) {
  const coins = ctx.config.coins;
  const known = Object.keys(coins).sort();
  const unknownCoin = (symbol: string) =>
    `query parameter symbol: ${symbol} is not a known coin; known coins are ${known.join(", ") || "none"}`;
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/coins/price",
    {
      schema: {
        tags: ["tokens"],
        summary: "Price of a common coin",
        description: `USD price and 24 h change of a coin by symbol, from its reference token's price. Configured symbols: ${known.join(", ") || "none"}.`,
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: {
              description: "`symbol` is missing, malformed or not a configured coin.",
              examples: [{ summary: "Unknown coin", message: unknownCoin("DOGE") }],
            },
            404: {
              description: "The coin is configured but has no price yet.",
              examples: [{ summary: "No price yet", message: "ETH has no price yet" }],
            },
            500: "Unexpected processing error.",
          }),
        },
      },
    },
    async (request, reply) => {
      const symbol = request.query.symbol.toUpperCase();
      const coin = coins[symbol];
      if (!coin) throw badRequest(unknownCoin(symbol));
      const id = { chainId: coin.chain, address: coin.token, id: `${coin.token}:${coin.chain}` };
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `coin|${symbol}`,
        chains: [coin.chain],
        compute: async (db) => {
          const row = (await findTokens(db, [id])).get(id.id);
          if (!row || row.usd_price === null || !Number.isFinite(row.usd_price)) {
            throw notFound(`${symbol} has no price yet`);
          }
          const change = row.price_change;
          return {
            price: toDecimalString(row.usd_price),
            change: change === null || !Number.isFinite(change) ? null : toDecimalString(change),
          };
        },
      });
    },
  );
}
