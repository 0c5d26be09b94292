import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { uniswapV2 } from "../../protocols/index.js";
import { factoryFigures } from "../../store/market-windows.js";
import type { ApiContext } from "../context.js";
import { ProtocolSchema } from "../market-records.js";
import { errorResponses, examples, ok } from "../schemas.js";

const Query = Type.Object({
  chain: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: "A configured network id; all networks when absent.",
      examples: [examples.chain],
    }),
  ),
});

const Dex = Type.Object(
  {
    chain: Type.Integer({ description: "Network id." }),
    name: Type.String({ description: "The DEX's configured name (`factory_name` elsewhere)." }),
    protocol: ProtocolSchema,
    factory_address: Type.String(),
    pools: Type.Integer({ description: "Pools of its factory indexed." }),
    volume_usd_24h: Type.Number({
      description:
        "Σ of its pools' 24 h USD volumes (as /api/v1/pairs/market gives them), in pool address order.",
    }),
  },
  { additionalProperties: false },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(Dex, {
    examples: [
      [
        {
          chain: 1,
          name: "Uniswap V2",
          protocol: uniswapV2.name,
          factory_address: "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
          pools: 1234,
          volume_usd_24h: 1200000,
        },
      ],
    ],
  }),
  "The configured DEXes, in configuration order.",
);

/** GET /v1/dexes (extension, not in the spec): the configured DEXes with their pools and 24 h volume. */
export function registerDexes(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/dexes",
    {
      schema: {
        tags: ["discovery"],
        summary: "Configured DEXes (extension)",
        description:
          "The DEXes of every configured network (or of `chain`), with their numbers of pools and 24 h USD volume. An addition to the specification; the specified answers are unchanged.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({ 400: "`chain` is malformed or not a configured network." }),
        },
      },
    },
    async (request, reply) => {
      const { chain } = request.query;
      if (chain !== undefined) ctx.requireChain(chain, "chain");
      const chains = ctx.config.chains.filter((c) => chain === undefined || c.id === chain);
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `dexes|${chain ?? "all"}`,
        chains: chains.map((c) => c.id),
        compute: async (db) => {
          const out: Static<typeof Dex>[] = [];
          for (const c of chains) {
            const figures = await factoryFigures(db, c.id);
            const volumes = [...figures.volumes].sort((a, b) =>
              a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0,
            );
            for (const dex of c.dexes) {
              let volume = 0;
              for (const v of volumes) if (v.factory === dex.factory) volume += v.volumeUsd24h;
              out.push({
                chain: c.id,
                name: dex.name,
                protocol: dex.protocol,
                factory_address: dex.factory,
                pools: figures.pools.get(dex.factory) ?? 0,
                volume_usd_24h: volume,
              });
            }
          }
          return out;
        },
      });
    },
  );
}
