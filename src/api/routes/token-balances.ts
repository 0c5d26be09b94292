import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { toUnits } from "../../exact/ratio.js";
import type { ApiContext } from "../context.js";
import { maxListLength, parseAddress, parseAddressList, patterns } from "../ids.js";
import { errorResponses, examples, ok } from "../schemas.js";
import { BALANCE_TIMEOUT_MS } from "../wallet-balances.js";

const Query = Type.Object({
  contract: Type.String({
    pattern: patterns.address,
    description: "Token contract address.",
    examples: [examples.USDC],
  }),
  chain: Type.String({
    pattern: patterns.chain,
    description: "Network id; one of the configured networks.",
    examples: [String(examples.chain)],
  }),
  wallets: Type.String({
    pattern: patterns.addressList,
    maxLength: maxListLength(42),
    description:
      "Comma-separated wallet addresses, at most 100; duplicates are answered once, in request order.",
    examples: [examples.wallets.join(",")],
  }),
});

const Balances = Type.Object(
  {
    walletBalances: Type.Array(
      Type.Object(
        {
          walletAddress: Type.String({ description: "Lowercase address." }),
          balance: Type.Number({ description: "Decimal-adjusted balance." }),
        },
        { additionalProperties: false },
      ),
    ),
    cumulativeBalance: Type.Number({ description: "Sum of the listed wallets' balances." }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        walletBalances: [
          { walletAddress: examples.wallets[0], balance: 1250000.5 },
          { walletAddress: examples.wallets[1], balance: 300 },
        ],
        cumulativeBalance: 1250300.5,
      },
    ],
  },
);

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(Balances, "Each wallet's balance and the sum.", {
  "X-Balances-Block": {
    type: "string",
    description: "`<chainId>=<block>`: the block the balances were read at.",
  },
  Deprecation: { type: "string", description: "When this endpoint was deprecated (RFC 9745)." },
});

/**
 * GET /v1/wallets/token-balances (deprecated group): balances of one token for several
 * wallets, read from the chain's node at its head (not from the index), with their sum.
 */
export function registerTokenBalances(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/v1/wallets/token-balances",
    {
      config: { deprecation: {} },
      schema: {
        tags: ["wallets"],
        summary: "Token balances of wallets (deprecated)",
        description:
          "Balances of one ERC-20 token for up to 100 wallets, read at the chain head from the network's node in one batch (Multicall3 where deployed, else one JSON-RPC batch), decimal-adjusted, with their sum. Deprecated: answers carry a `Deprecation` header. `X-Balances-Block` gives the block the balances were read at.",
        deprecated: true,
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`contract`, `chain` or `wallets` is missing or invalid (not an address, more than 100 wallets, unconfigured network, or a contract that is not an ERC-20 token).",
            502: {
              description:
                "The network's node answered with an HTTP error, something that is not JSON, or a JSON-RPC error (retries and failover included); the message says which. No partial answer is given; retry after the Retry-After header's seconds.",
              examples: [
                {
                  summary: "Node failed",
                  message: `could not read balances from network ${examples.chain} (devnet): its node answered HTTP 500 Internal Server Error; try again later`,
                },
              ],
            },
            503: {
              description:
                "The network's node could not be reached or refused for now (HTTP 429: the Retry-After is the node's own), or the database did not answer within its bound (the key check reads it); retry after the Retry-After header's seconds.",
              examples: [
                {
                  summary: "Node unreachable",
                  message: `could not read balances from network ${examples.chain} (devnet): its node could not be reached: it refused the connection; try again later`,
                },
              ],
            },
            504: {
              description: `The network's node did not answer within ${BALANCE_TIMEOUT_MS / 1000} s (retries and failover included); retry after the Retry-After header's seconds.`,
              examples: [
                {
                  summary: "Node silent",
                  message: `could not read balances from network ${examples.chain} (devnet): its node did not answer within ${BALANCE_TIMEOUT_MS / 1000} s; try again later`,
                },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const token = parseAddress(request.query.contract, "contract");
      const chainId = Number(request.query.chain);
      ctx.requireChain(chainId, "chain");
      const wallets = parseAddressList(request.query.wallets, "wallets");
      return ctx.answer(reply, {
        schema: OkResponse,
        key: "",
        chains: [chainId],
        cache: false,
        compute: async () => {
          const read = await ctx.balances({ chainId, token, wallets });
          reply.header("x-balances-block", `${chainId}=${read.blockNumber}`);
          const total = read.balances.reduce((sum, b) => sum + b, 0n);
          return {
            walletBalances: wallets.map((walletAddress, i) => ({
              walletAddress,
              balance: toUnits(read.balances[i] ?? 0n, read.decimals),
            })),
            cumulativeBalance: toUnits(total, read.decimals),
          };
        },
      });
    },
  );
}
