import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { findTokens } from "../../store/tokens.js";
import type { ApiContext } from "../context.js";
import { parseIdList } from "../ids.js";
import { AssetToken, errorResponses, exampleTokens, ok, params } from "../schemas.js";
import { tokenFields } from "../token-records.js";

const Query = Type.Object({ asset_ids: params.assetIds });

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(AssetToken, { examples: [[exampleTokens.asset]] }),
  "The known tokens, in request order.",
);

/** GET /api/v1/assets: USD prices of tokens; unknown ids are left out. */
export function registerAssets(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/assets",
    {
      schema: {
        tags: ["market data"],
        summary: "USD prices of tokens",
        description:
          "Token records with `chain` as an integer, in request order, duplicates once. Unknown ids are left out (`[]` when none is known).",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`asset_ids` is missing or malformed, lists more than 100 ids, or names an unconfigured network.",
          }),
        },
      },
    },
    async (request, reply) => {
      const ids = parseIdList(request.query.asset_ids, "asset_ids");
      for (const id of ids) ctx.requireChain(id.chainId, "asset_ids");
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `assets|${ids.map((i) => i.id).join(",")}`,
        chains: [...new Set(ids.map((i) => i.chainId))],
        compute: async (db) => {
          const found = await findTokens(db, ids);
          return ids.flatMap((id) => {
            const row = found.get(id.id);
            return row ? [{ contract: row.address, chain: row.chain_id, ...tokenFields(row) }] : [];
          });
        },
      });
    },
  );
}
