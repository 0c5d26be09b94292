import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { maxListLength, patterns } from "./ids.js";
import { UNIX_SECONDS_PATTERN } from "./times.js";

/**
 * The JSON schemas of the API, written once: Fastify validates requests with them, serialises
 * responses with them and @fastify/swagger turns them into the OpenAPI 3.0 document. Nullable
 * values use OpenAPI's `nullable: true`, which Ajv and fast-json-stringify both honour (a plain
 * `number` would be serialised as 0 when null, which the API must never answer).
 */

const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
const PAIR = "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc";
export const examples = { USDC, WETH, PAIR, usdcId: `${USDC}:1`, wethId: `${WETH}:1`, pairId: `${PAIR}:1` };

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
) {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

// ---------------------------------------------------------------------------------------------
// Errors

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer({ description: "The HTTP status code." }),
    error: Type.String({ description: "The status text (Bad Request, Forbidden, …)." }),
    message: Type.String({ description: "What was wrong, naming the parameter." }),
  },
  {
    $id: "ErrorBody",
    additionalProperties: false,
    description: "The body of every 4xx and 5xx answer.",
    examples: [{ statusCode: 400, error: "Bad Request", message: "query parameter tokenId is required" }],
  },
);

const errorResponse = (description: string) => ({ ...Type.Ref("ErrorBody"), description });

/** The error answers every key-protected endpoint can give, plus any listed. */
export function errorResponses(extra: Partial<Record<400 | 404 | 500 | 503, string>> = {}) {
  const out: Record<number, unknown> = {
    400: errorResponse(extra[400] ?? "A parameter is missing or invalid; the message names it."),
    403: errorResponse("The x-api-key header is missing, unknown or revoked."),
    429: errorResponse("Too many requests for this key; retry after the Retry-After header's seconds."),
    500: errorResponse(extra[500] ?? "Unexpected processing error (no internals are given)."),
  };
  if (extra[404]) out[404] = errorResponse(extra[404]);
  if (extra[503]) out[503] = errorResponse(extra[503]);
  return out;
}

/** Response headers documented on every data answer. */
export const freshnessHeaders = {
  "X-Indexed-Block": {
    type: "string",
    description:
      "Per network involved, the last block fully ingested: `<chainId>=<block>`, comma-separated (for example `1=23800123`). A network with nothing indexed yet is left out.",
  },
  "X-Indexed-At": {
    type: "string",
    description: "Per network involved, the time of that block: `<chainId>=<ISO 8601 UTC>`, comma-separated.",
  },
};

/** A 200 response schema with the freshness headers and a description, for the OpenAPI document. */
export function ok<T extends TSchema>(
  schema: T,
  description: string,
  headers: Record<string, unknown> = {},
): T {
  return { ...schema, description, headers: { ...freshnessHeaders, ...headers } };
}

// ---------------------------------------------------------------------------------------------
// Query parameters

export const params = {
  tokenId: Type.String({
    pattern: patterns.id,
    description: "Token id `<token contract address>:<network id>`; any letter case.",
    examples: [examples.usdcId],
  }),
  tokenIds: Type.String({
    pattern: patterns.idList,
    maxLength: maxListLength(52),
    description:
      "One token id `<address>:<network id>`, or up to 100 separated by commas. Duplicates are answered once, in request order.",
    examples: [examples.usdcId],
  }),
  assetIds: Type.String({
    pattern: patterns.idList,
    maxLength: maxListLength(52),
    description: "Comma-separated token ids `<address>:<network id>`, at most 100. Unknown ids are left out.",
    examples: [`${examples.wethId},${examples.usdcId}`],
  }),
  assetId: Type.String({
    pattern: patterns.id,
    description: "Token id `<address>:<network id>`; one of the two tokens of the pair.",
    examples: [examples.wethId],
  }),
  pairId: Type.String({
    pattern: patterns.id,
    description: "Pair id `<pair contract address>:<network id>`.",
    examples: [examples.pairId],
  }),
  days: Type.Integer({
    minimum: 1,
    maximum: 90,
    description: "Number of days of data, 1 to 90.",
    examples: [7],
  }),
};

export type ApiSchemas = typeof params;

// ---------------------------------------------------------------------------------------------
// Records

const projectInfo = Type.Object(
  {
    website: Nullable(Type.String()),
    logo_url: Nullable(
      Type.String({ description: "Absolute URL, or a path on this API's host (/logos/…)." }),
    ),
    twitter: Nullable(Type.String()),
    discord: Nullable(Type.String()),
  },
  {
    additionalProperties: false,
    description: "Project links from token lists and curated files; unknown: null.",
  },
);

const tokenFields = {
  name: Nullable(Type.String({ description: "null when the contract does not tell." })),
  symbol: Nullable(Type.String({ description: "null when the contract does not tell." })),
  usd_price: Nullable(
    Type.Number({ description: "USD price; null when no qualifying pool routes the token to USD." }),
  ),
  price_change: Nullable(
    Type.Number({
      description: "Percentage change of the USD price over 24 hours (5.2 = +5.2 %); null when unknown.",
    }),
  ),
  decimals: Nullable(Type.Integer()),
  total_supply: Nullable(Type.Number({ description: "Decimal-adjusted total supply." })),
};
const contract = Type.String({ description: "Token contract address, lowercase." });
const chainString = Type.String({ description: "Network id, as a string." });

const tokenExample = {
  name: "USD Coin",
  symbol: "USDC",
  usd_price: 1.0002,
  price_change: 0.03,
  decimals: 6,
  total_supply: 26123456789.12,
};

export const SearchToken = Type.Object(
  { contract, chain: chainString, ...tokenFields, project_info: projectInfo },
  { additionalProperties: false },
);
export const MetadataToken = Type.Object(
  { chain: chainString, ...tokenFields },
  { additionalProperties: false },
);
export const MetadataTokenWithContract = Type.Object(
  { contract, chain: chainString, ...tokenFields },
  { additionalProperties: false },
);
export const AssetToken = Type.Object(
  { contract, chain: Type.Integer({ description: "Network id, as an integer." }), ...tokenFields },
  { additionalProperties: false },
);
export const exampleTokens = {
  search: {
    contract: USDC,
    chain: "1",
    ...tokenExample,
    project_info: {
      website: "https://www.circle.com/usdc",
      logo_url: "https://assets.coingecko.com/coins/images/6319/thumb/USD_Coin_Icon.png",
      twitter: "https://x.com/circle",
      discord: null,
    },
  },
  metadata: { chain: "1", ...tokenExample },
  metadataWithContract: { contract: USDC, chain: "1", ...tokenExample },
  asset: { contract: USDC, chain: 1, ...tokenExample },
};

export type SearchTokenRecord = Static<typeof SearchToken>;
export type AssetTokenRecord = Static<typeof AssetToken>;
export type ProjectInfo = Static<typeof projectInfo>;

export const dateTime = (description: string) => Type.String({ format: "date-time", description });

/**
 * A time parameter that takes an ISO 8601 date-time with a time zone or unix seconds (plain
 * decimal digits); read it with `parseTimeParam`. The date-time branch keeps Ajv's own check of
 * ISO values, so an ISO value is accepted or refused exactly as by `dateTime`.
 */
export const timeParam = (description: string, examples: readonly string[]) =>
  Type.Unsafe<string>({
    anyOf: [
      { type: "string", format: "date-time" },
      { type: "string", pattern: UNIX_SECONDS_PATTERN },
    ],
    description,
    examples: [...examples],
  });

/** Whether a property schema is a `timeParam`. */
export const isTimeParam = (schema: unknown): boolean =>
  typeof schema === "object" &&
  schema !== null &&
  Array.isArray((schema as { anyOf?: unknown }).anyOf) &&
  (schema as { anyOf: { format?: unknown }[] }).anyOf.some((branch) => branch.format === "date-time");
