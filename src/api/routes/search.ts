import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { badRequest, notFound } from "../../internal/errors.js";
import { searchTokensByAddress, searchTokensByText } from "../../store/tokens.js";
import type { ApiContext } from "../context.js";
import { parseChainList, patterns } from "../ids.js";
import { errorResponses, examples, exampleTokens, ok, SearchToken } from "../schemas.js";
import { tokenFields } from "../token-records.js";

export const MAX_SEARCH_RESULTS = 15;
export const MAX_SEARCH_LENGTH = 100;
const SEARCH_EXAMPLE = "usdc";

const Query = Type.Object({
  searchString: Type.String({
    maxLength: MAX_SEARCH_LENGTH,
    description:
      "Text matched against token contract addresses (full address, optionally `:<network id>`), symbols and names, case-insensitively. Trimmed; 1 to 100 characters.",
    examples: [SEARCH_EXAMPLE],
  }),
  chains: Type.Optional(
    Type.String({
      pattern: patterns.chainList,
      maxLength: 400,
      description: "Comma-separated network ids; only tokens on these networks are answered.",
      examples: [String(examples.chain)],
    }),
  ),
});

/** A searched address, with or without `:<chainId>`. */
const addressSearch = /^(0x[0-9a-f]{40})(?::([1-9][0-9]{0,9}))?$/;

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(SearchToken, { maxItems: MAX_SEARCH_RESULTS, examples: [[exampleTokens.search]] }),
  "Matching tokens, best first, at most 15.",
);

/** GET /v1/tokens/search: tokens by address, symbol or name. */
export function registerSearch(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/tokens/search",
    {
      schema: {
        tags: ["tokens"],
        summary: "Search tokens",
        description:
          "Tokens whose contract address, symbol or name matches `searchString`. Ranked: exact address, exact symbol, prefix, substring; ties by USD liquidity, highest first (so a real token comes before look-alikes). At most 15.",
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`searchString` is missing, empty, longer than 100 characters or holds control characters; or `chains` is malformed or names an unconfigured network.",
            404: {
              description: "No token matches.",
              examples: [
                { summary: "No match", message: `no token matches searchString "${SEARCH_EXAMPLE}"` },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const text = request.query.searchString.trim();
      if (text.length === 0) throw badRequest("query parameter searchString must not be empty");
      if (text.length > MAX_SEARCH_LENGTH) {
        throw badRequest(`query parameter searchString must be at most ${MAX_SEARCH_LENGTH} characters long`);
      }
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here
      if (/[\u0000-\u001f\u007f]/.test(text)) {
        throw badRequest("query parameter searchString must not contain control characters");
      }
      const chains =
        request.query.chains === undefined
          ? [...ctx.chainIds]
          : parseChainList(request.query.chains, "chains");
      for (const chainId of chains) ctx.requireChain(chainId, "chains");

      return ctx.answer(reply, {
        schema: OkResponse,
        key: `search|${text.toLowerCase()}|${chains.join(",")}`,
        chains,
        compute: async (db) => {
          const byAddress = addressSearch.exec(text.toLowerCase());
          let rows: Awaited<ReturnType<typeof searchTokensByText>>;
          if (byAddress) {
            const chainId = byAddress[2] === undefined ? undefined : Number(byAddress[2]);
            const within = chainId === undefined ? chains : chains.filter((c) => c === chainId);
            rows =
              within.length === 0
                ? []
                : await searchTokensByAddress(db, {
                    address: byAddress[1] as string,
                    chains: within,
                    limit: MAX_SEARCH_RESULTS,
                  });
          } else {
            rows = await searchTokensByText(db, { text, chains, limit: MAX_SEARCH_RESULTS });
          }
          if (rows.length === 0) throw notFound(`no token matches searchString "${text.slice(0, 100)}"`);
          return rows.map((row) => ({
            contract: row.address,
            chain: String(row.chain_id),
            ...tokenFields(row),
            project_info: ctx.projectInfo.get(row.chain_id, row.address),
          }));
        },
      });
    },
  );
}
