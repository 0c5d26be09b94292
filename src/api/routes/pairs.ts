import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { finite, type ProtocolName } from "../../model/index.js";
import { uniswapV3 } from "../../protocols/index.js";
import { findPoolsOfToken } from "../../store/pools.js";
import type { ApiContext } from "../context.js";
import { parseId } from "../ids.js";
import { ProtocolSchema } from "../market-records.js";
import { pairTokenFigures } from "../numbers.js";
import { poolLabelFields, poolLabels, referenceTokensOf } from "../pool-labels.js";
import { errorResponses, examples, Nullable, ok, params } from "../schemas.js";

export const DEFAULT_PAIRS = 100;
export const MAX_PAIRS = 1000;

const Query = Type.Object({
  asset_id: {
    ...params.assetId,
    description: "Token id `<address>:<network id>`: the pairs holding this token.",
  },
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAIRS,
      default: DEFAULT_PAIRS,
      description: "Most pairs answered, 1 to 1000 (default 100); the busiest come first.",
    }),
  ),
});

const Pair = Type.Object(
  {
    pair_id: Type.String({ description: "Pair id `<pair address>:<network id>`." }),
    chain: Type.Integer({ description: "Network id." }),
    change: Nullable(
      Type.Number({ description: "24 h percentage change of token0's price in token1; null when unknown." }),
    ),
    factory_address: Type.String(),
    factory_name: Type.String({ description: "The DEX's name, from configuration." }),
    liquidity_value: Nullable(Type.Number({ description: "USD value of both reserves; null when unknown." })),
    pair_address: Type.String({ description: "Without network suffix." }),
    token0_address: Type.String({ description: "Token id, with network suffix." }),
    token1_address: Type.String({ description: "Token id, with network suffix." }),
    token0_price: Nullable(Type.Number({ description: "USD price of token0; null when unknown." })),
    token1_price: Nullable(Type.Number({ description: "USD price of token1; null when unknown." })),
    token0_reserves: Nullable(Type.Number({ description: "Decimal-adjusted." })),
    token1_reserves: Nullable(Type.Number({ description: "Decimal-adjusted." })),
    token0_symbol: Nullable(Type.String()),
    token1_symbol: Nullable(Type.String()),
    protocol: ProtocolSchema,
    ...poolLabelFields,
    volume: Type.Number({ description: "USD volume over the last 24 hours." }),
  },
  { additionalProperties: false },
);

const pairExample = {
  pair_id: examples.pairId,
  chain: examples.chain,
  change: -1.25,
  factory_address: examples.v3Factory,
  factory_name: "Uniswap V3",
  liquidity_value: 80246912.4,
  pair_address: examples.PAIR,
  token0_address: examples.usdcId,
  token1_address: examples.wethId,
  ...examples.pairTokenFigures,
  protocol: uniswapV3.name,
  name: "WETH/USDC",
  base_address: examples.wethId,
  quote_address: examples.usdcId,
  hooks: null,
  volume: 5234123.5,
};

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(Type.Array(Pair, { examples: [[pairExample]] }), "Pairs, highest 24 h volume first.");

/** GET /api/v1/pairs: pairs holding a token, busiest first. */
export function registerPairs(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/pairs",
    {
      schema: {
        tags: ["market data"],
        summary: "Pairs holding a token",
        description:
          "Liquidity pairs that hold `asset_id`, ordered by 24 h USD volume, then USD liquidity. An unknown token answers `[]`.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`asset_id` is missing or malformed, `limit` is out of range, or the network is not configured.",
          }),
        },
      },
    },
    async (request, reply) => {
      const asset = parseId(request.query.asset_id, "asset_id");
      ctx.requireChain(asset.chainId, "asset_id");
      const limit = request.query.limit ?? DEFAULT_PAIRS;
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `pairs|${asset.id}|${limit}`,
        chains: [asset.chainId],
        compute: async (db) => {
          const pools = await findPoolsOfToken(db, {
            chainId: asset.chainId,
            token: asset.address,
            limit,
          });
          const reference = referenceTokensOf(ctx.config.chains, asset.chainId);
          return pools.map((p) => ({
            pair_id: `${p.address}:${p.chain_id}`,
            chain: p.chain_id,
            change: finite(p.price_change_24h),
            factory_address: p.factory,
            factory_name: p.dex,
            liquidity_value: finite(p.liquidity_usd),
            pair_address: p.address,
            token0_address: `${p.token0}:${p.chain_id}`,
            token1_address: `${p.token1}:${p.chain_id}`,
            ...pairTokenFigures([p.usd_price0, p.usd_price1], [p.reserve0, p.reserve1], p),
            protocol: p.protocol as ProtocolName,
            ...poolLabels(reference, { chainId: p.chain_id, ...p }),
            volume: finite(p.volume_usd_24h) ?? 0,
          }));
        },
      });
    },
  );
}
