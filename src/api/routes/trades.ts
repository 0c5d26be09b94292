import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { notFound } from "../../internal/errors.js";
import { findPool } from "../../store/pools.js";
import { findSwaps } from "../../store/swaps.js";
import { type ApiContext, withHeaders } from "../context.js";
import { assetSide, parseId, parsePairId } from "../ids.js";
import { errorResponses, examples, Nullable, ok, params, StringEnum } from "../schemas.js";
import { decodeCursor, encodeCursor, tradeRecord } from "../trade-records.js";

export const DEFAULT_TRADES = 100;
export const MAX_TRADES = 1000;

const Query = Type.Object({
  asset_id: params.assetId,
  pair_id: params.pairId,
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TRADES,
      default: DEFAULT_TRADES,
      description: "Trades per page, 1 to 1000 (default 100).",
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      pattern: "^[A-Za-z0-9_-]{1,40}$",
      description: "Where the page starts: the `X-Next-Cursor` of the previous page (opaque).",
    }),
  ),
});

const address = (description: string) => Type.String({ description });
/** The trade record; also the `data` of the stream's trade messages. */
export const Trade = Type.Object(
  {
    pair_id: Type.String({ description: "Pair id `<pair address>:<network id>`." }),
    date: Type.String({ format: "date-time", description: "Time of the trade's block, ISO 8601 UTC." }),
    block_number: Type.Integer(),
    chain: Type.Integer({ description: "Network id." }),
    exchange: Nullable(
      address("The contract the transaction called (router, aggregator); null when unknown."),
    ),
    factory_address: address("The pool's factory."),
    hash: Type.String({ description: "Transaction hash." }),
    log_index: Type.Integer(),
    maker: Nullable(address("The transaction's sender; null when unknown.")),
    pair_address: address("Pair address without network suffix."),
    token0_address: address("Without network suffix."),
    token1_address: address("Without network suffix."),
    token0_amount: Nullable(
      Type.Number({ description: "Amount of token0 swapped, positive, decimal-adjusted." }),
    ),
    token1_amount: Nullable(
      Type.Number({ description: "Amount of token1 swapped, positive, decimal-adjusted." }),
    ),
    token0_price: Nullable(
      Type.Number({ description: "USD price of token0 at the trade; null when unknown." }),
    ),
    token1_price: Nullable(
      Type.Number({ description: "USD price of token1 at the trade; null when unknown." }),
    ),
    token0_reserves: Nullable(Type.Number({ description: "The pool's token0 balance after the swap." })),
    token1_reserves: Nullable(Type.Number({ description: "The pool's token1 balance after the swap." })),
    token0_symbol: Nullable(Type.String()),
    token1_symbol: Nullable(Type.String()),
    side: StringEnum(["buy", "sell"] as const, {
      description: "`sell` when `asset_id` was paid into the pool, `buy` when it left the pool.",
    }),
    price: Nullable(
      Type.Number({ description: "Execution price of `asset_id` in units of the other token of the pair." }),
    ),
    volume: Nullable(Type.Number({ description: "The trade's USD value; null when unknown." })),
    hook_may_rewrite_amounts: Type.Optional(
      Type.Literal(true, {
        description:
          "Present (true) only for a pool whose hook may return deltas (a Uniswap V4 or PancakeSwap Infinity hook with return-delta permissions): the amounts are the pool's events' and may differ from what the trader paid. Such a pool never sets or moves a USD price.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const tradeExample = {
  pair_id: examples.pairId,
  date: "2026-11-21T10:00:11Z",
  block_number: 4210,
  chain: examples.chain,
  exchange: examples.v3SwapRouter,
  factory_address: examples.v3Factory,
  hash: `0x${"ab".repeat(32)}`,
  log_index: 57,
  maker: examples.wallets[0],
  pair_address: examples.PAIR,
  token0_address: examples.USDC,
  token1_address: examples.WETH,
  token0_amount: 3150.42,
  token1_amount: 1,
  ...examples.pairTokenFigures,
  side: "buy",
  price: 3150.42,
  volume: 3150.73,
};

/** The 200 answer: registered as the route's response schema and typing its payload. */
const OkResponse = ok(Type.Array(Trade, { examples: [[tradeExample]] }), "Trades, newest first.", {
  "X-Next-Cursor": {
    type: "string",
    description: "Present when older trades remain: pass it as `cursor` to get the next page.",
  },
  Link: {
    type: "string",
    description: 'The next page\'s URL, `<…>; rel="next"`, when older trades remain.',
  },
});

/** GET /api/v1/trades: newest first, paged by an opaque cursor. */
export function registerTrades(app: FastifyInstance, ctx: ApiContext) {
  app.get<{ Querystring: Static<typeof Query> }>(
    "/api/v1/trades",
    {
      schema: {
        tags: ["market data"],
        summary: "Trades of a pair",
        description:
          'Trades of the pair, newest first (block, then log index), seen from `asset_id`\'s side. A page holds `limit` trades (default 100, at most 1000); when older trades remain, the answer carries `X-Next-Cursor` and a `Link: <…>; rel="next"` header with the URL of the next page.',
        security: [{ apiKey: [] }],
        querystring: Query,
        response: {
          200: OkResponse,
          ...errorResponses({
            400: "`asset_id` or `pair_id` missing or malformed, `asset_id` not a token of the pair, bad `limit` or `cursor`, or an unconfigured network.",
            404: {
              description: "The pair is not known.",
              examples: [
                { summary: "Unknown pair", message: `pair_id ${examples.pairId} is not a known pair` },
              ],
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const asset = parseId(request.query.asset_id, "asset_id");
      const pair = parsePairId(request.query.pair_id, "pair_id");
      ctx.requireChain(pair.chainId, "pair_id");
      ctx.requireChain(asset.chainId, "asset_id");
      const limit = request.query.limit ?? DEFAULT_TRADES;
      const before = request.query.cursor === undefined ? null : decodeCursor(request.query.cursor);
      return ctx.answer(reply, {
        schema: OkResponse,
        key: `trades|${pair.id}|${asset.id}|${limit}|${request.query.cursor ?? ""}`,
        chains: [pair.chainId],
        compute: async (db) => {
          const pool = await findPool(db, pair.chainId, pair.address);
          if (!pool) throw notFound(`pair_id ${pair.id} is not a known pair`);
          const assetIsToken0 = assetSide(pool, asset, pair) === 0;
          const rows = await findSwaps(db, {
            chainId: pair.chainId,
            pool: pair.address,
            before,
            limit: limit + 1,
            // The first page's first window reaches back from the API's clock (tests and the
            // scale benchmark pin it to their data's end) as far as the pool's trades of the
            // last 24 hours say a page takes.
            now: ctx.now().getTime(),
            tradesPerDay: pool.trades_24h,
          });
          const page = rows.slice(0, limit);
          const trades = page.map((swap) => tradeRecord(pool, swap, assetIsToken0));
          const last = page[page.length - 1];
          if (rows.length <= limit || !last) return trades;
          const cursor = encodeCursor({
            block: Number(last.block_number),
            logIndex: last.log_index,
            time: last.block_time.getTime(),
          });
          const next = new URLSearchParams({
            asset_id: asset.id,
            pair_id: pair.id,
            limit: String(limit),
            cursor,
          });
          return withHeaders(trades, {
            "x-next-cursor": cursor,
            link: `</api/v1/trades?${next}>; rel="next"`,
          });
        },
      });
    },
  );
}
