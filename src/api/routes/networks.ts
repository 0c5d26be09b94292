import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { getSyncStatus } from "../../store/chain-state.js";
import { chainCounts } from "../../store/market-windows.js";
import type { ApiContext } from "../context.js";
import { errorResponses, Nullable, ok } from "../schemas.js";
import { toIso } from "../times.js";

const Network = Type.Object(
  {
    chain: Type.Integer({ description: "Network id." }),
    name: Type.String({ description: "The configured name." }),
    native_symbol: Nullable(
      Type.String({ description: "The native coin's symbol; null when not configured." }),
    ),
    explorer_url: Nullable(
      Type.String({
        description:
          "Block explorer base URL; links are `{explorer_url}/tx/<hash>`, `/address/<addr>`, `/token/<addr>`, `/block/<n>`. Null when not configured.",
      }),
    ),
    indexed_block: Nullable(
      Type.Integer({ description: "The last block fully indexed; null before the first." }),
    ),
    indexed_at: Nullable(Type.String({ format: "date-time", description: "That block's time." })),
    ready: Type.Boolean({ description: "The network's readiness, as /readyz judges it." }),
    dexes: Type.Integer({ description: "Configured DEXes." }),
    pools: Type.Integer({ description: "Pools indexed." }),
    tokens: Type.Integer({ description: "Tokens indexed." }),
  },
  { additionalProperties: false },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(
  Type.Array(Network, {
    examples: [
      [
        {
          chain: 1,
          name: "Ethereum",
          native_symbol: "ETH",
          explorer_url: "https://etherscan.io",
          indexed_block: 23800123,
          indexed_at: "2026-11-21T10:00:11Z",
          ready: true,
          dexes: 3,
          pools: 1234,
          tokens: 567,
        },
      ],
    ],
  }),
  "One record per configured network, in configuration order.",
);

/** GET /v1/networks (extension, not in the spec): the configured networks and how far each is indexed. */
export function registerNetworks(app: FastifyInstance, ctx: ApiContext) {
  app.get(
    "/v1/networks",
    {
      schema: {
        tags: ["discovery"],
        summary: "Configured networks (extension)",
        description:
          "Every configured network with its native coin, block explorer, indexing progress, readiness and the numbers of DEXes, pools and tokens. An addition to the specification; the specified answers are unchanged.",
        security: [{ apiKey: [] }],
        response: { 200: OkResponse, ...errorResponses() },
      },
    },
    async (_request, reply) => {
      const chains = ctx.chainIds;
      return ctx.answer(reply, {
        schema: OkResponse,
        key: "networks",
        chains,
        compute: async (db) => {
          const [status, counts] = await Promise.all([getSyncStatus(db, chains), chainCounts(db, chains)]);
          const ready = new Map(ctx.readiness.chains().map((c) => [c.chainId, c.ready]));
          return ctx.config.chains.map((chain): Static<typeof Network> => {
            const s = status.find((x) => x.chainId === chain.id);
            const c = counts.get(chain.id);
            return {
              chain: chain.id,
              name: chain.name,
              native_symbol: chain.nativeSymbol ?? null,
              explorer_url: chain.explorerUrl ?? null,
              indexed_block: s ? s.indexedBlock : null,
              indexed_at: s?.indexedBlockTime ? toIso(s.indexedBlockTime) : null,
              ready: ready.get(chain.id) ?? false,
              dexes: chain.dexes.length,
              pools: c?.pools ?? 0,
              tokens: c?.tokens ?? 0,
            };
          });
        },
      });
    },
  );
}
