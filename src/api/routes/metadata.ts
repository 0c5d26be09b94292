import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { notFound } from "../../internal/errors.js";
import { findTokens } from "../../store/tokens.js";
import type { ApiContext } from "../context.js";
import { parseIdList } from "../ids.js";
import {
  errorResponses,
  examples,
  exampleTokens,
  MetadataToken,
  MetadataTokenWithContract,
  ok,
  params,
} from "../schemas.js";
import { tokenFields } from "../token-records.js";

const Query = Type.Object({ tokenId: params.tokenIds });

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Union([MetadataToken, Type.Array(MetadataTokenWithContract)], {
    examples: [exampleTokens.metadata, [exampleTokens.metadataWithContract]],
  }),
  "One id: a token object. Several ids: an array of token objects with `contract`.",
);

/**
 * GET /v1/tokens/metadata: one id → one record without `contract`; several ids
 * (a comma in the parameter) → an array of the found records with `contract`, in request order.
 */
export function registerMetadata(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/tokens/metadata",
    {
      schema: {
        tags: ["tokens"],
        summary: "Token metadata",
        description:
          "Price, 24 h price change, decimals and total supply of tokens. With one token id the answer is one object (no `contract`); with several (comma-separated, even if they repeat) it is an array of the tokens found, with `contract`, in request order. None found: 404.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`tokenId` is missing or malformed, lists more than 100 ids, or names an unconfigured network.",
            404: {
              description: "No token id is known.",
              examples: [
                { summary: "Unknown token", message: `tokenId ${examples.wethId} is not a known token` },
                { summary: "None of several known", message: "none of the tokenId values is a known token" },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const several = request.query.tokenId.includes(",");
      const ids = parseIdList(request.query.tokenId, "tokenId");
      for (const id of ids) ctx.requireChain(id.chainId, "tokenId");
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `metadata|${several}|${ids.map((i) => i.id).join(",")}`,
        chains: [...new Set(ids.map((i) => i.chainId))],
        compute: async (db) => {
          const found = await findTokens(db, ids);
          if (!several) {
            const [id] = ids;
            const row = id && found.get(id.id);
            if (!row) throw notFound(`tokenId ${id?.id} is not a known token`);
            return { chain: String(row.chain_id), ...tokenFields(row) };
          }
          const rows = ids.flatMap((id) => found.get(id.id) ?? []);
          if (rows.length === 0) throw notFound("none of the tokenId values is a known token");
          return rows.map((row) => ({
            contract: row.address,
            chain: String(row.chain_id),
            ...tokenFields(row),
          }));
        },
      });
    },
  );
}
