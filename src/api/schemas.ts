import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { errorBody } from "./error-handler.js";
import { maxListLength, patterns } from "./ids.js";
import { UNIX_SECONDS_PATTERN } from "./times.js";

/**
 * The JSON schemas of the API, written once: Fastify validates requests with them, serialises
 * responses with them and @fastify/swagger turns them into the OpenAPI 3.0 document. Nullable
 * values use OpenAPI's `nullable: true`, which Ajv and fast-json-stringify both honour (a plain
 * `number` would be serialised as 0 when null, which the API must never answer).
 */

/**
 * The ids of the examples are those of the demo devnet (`npm start`, config/devnet.json, chain
 * 31337), whose contracts have the same addresses on every start (src/devnet/deploy.ts
 * `planDeployment`), so "Try it out" in /docs answers with data. openapi.test.ts checks them.
 */
const DEVNET = 31337;
const USDC = "0x0165878a594ca255338adfa4d48449f69242eb8f";
const WETH = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
/** The Uniswap V3 WETH/USDC 0.05 % pool, the demo's busiest. */
const PAIR = "0x5a8e8b4b8650a452ca833b8001052fc851c157cd";
export const examples = {
  chain: DEVNET,
  USDC,
  WETH,
  PAIR,
  usdcId: `${USDC}:${DEVNET}`,
  wethId: `${WETH}:${DEVNET}`,
  pairId: `${PAIR}:${DEVNET}`,
  /** The devnet's Uniswap V2 factory and router, and two of its traders (they hold every token). */
  v2Factory: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512",
  v2Router: "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
  v3Factory: "0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9",
  v3SwapRouter: "0x5fc8d32690cc91d4c39d9d3abcbd16989f875707",
  wallets: [
    "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
    "0x976ea74026e726554db657fa54763abd0c3a0aa9",
  ] as const,
  /** The USDC/WETH pool's token figures in the pair and trade examples. */
  pairTokenFigures: {
    token0_price: 1.0001,
    token1_price: 3150.73,
    token0_reserves: 40123456.12,
    token1_reserves: 12735.5,
    token0_symbol: "USDC",
    token1_symbol: "WETH",
  },
};

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
    // No example here: each response carries examples of its own status (src/api/openapi.ts).
    description: "The body of every 4xx and 5xx answer.",
  },
);

/** An example error answer of a route: a short title and the message the route really gives. */
export type ErrorExample = { summary: string; message: string };

/** An error status of a route: its description, or its description with examples of the route's messages. */
export type ErrorDoc = string | { description: string; examples: readonly ErrorExample[] };

/**
 * The OpenAPI media-type `examples` of an error status (`x-examples` on the response schema,
 * which @fastify/swagger moves onto the response's content), each a whole error body.
 */
export function errorExamples(status: number, list: readonly ErrorExample[]) {
  return Object.fromEntries(
    list.map(({ summary, message }) => [
      summary
        .toLowerCase()
        .replaceAll("'", "")
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/^-|-$/g, ""),
      { summary, value: errorBody(status, message) },
    ]),
  );
}

const errorResponse = (status: number, doc: ErrorDoc) =>
  typeof doc === "string"
    ? { ...Type.Ref("ErrorBody"), description: doc }
    : {
        ...Type.Ref("ErrorBody"),
        description: doc.description,
        "x-examples": errorExamples(status, doc.examples),
      };

/**
 * The error answers every key-protected endpoint can give (400, 403, 429, 500, 503), plus any
 * listed (404; 502 and 504 of an endpoint that reads a node). Examples: those given here, in the route's own words; the document fills in the
 * ones every route shares (missing parameter, key, rate limit, 500, 503: src/api/openapi.ts), and
 * openapi.test.ts fails when a status is left without one.
 */
export function errorResponses(extra: Partial<Record<400 | 404 | 500 | 502 | 503 | 504, ErrorDoc>> = {}) {
  const out: Record<number, unknown> = {
    400: errorResponse(400, extra[400] ?? "A parameter is missing or invalid; the message names it."),
    403: errorResponse(403, "The x-api-key header is missing, unknown or revoked."),
    429: errorResponse(429, "Too many requests for this key; retry after the Retry-After header's seconds."),
    500: errorResponse(500, extra[500] ?? "Unexpected processing error (no internals are given)."),
    503: errorResponse(
      503,
      extra[503] ??
        "The database did not answer within its bound (the key check reads it too); retry after the Retry-After header's seconds.",
    ),
  };
  if (extra[404]) out[404] = errorResponse(404, extra[404]);
  if (extra[502]) out[502] = errorResponse(502, extra[502]);
  if (extra[504]) out[504] = errorResponse(504, extra[504]);
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
    examples: [examples.wethId],
  }),
  tokenIds: Type.String({
    pattern: patterns.idList,
    maxLength: maxListLength(52),
    description:
      "One token id `<address>:<network id>`, or up to 100 separated by commas. Duplicates are answered once, in request order.",
    examples: [examples.wethId],
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
    pattern: patterns.pairId,
    description:
      "Pair id `<pair contract address>:<network id>`; a pool inside a manager (Uniswap V4) has its 32-byte pool id (0x and 64 hex digits) in place of the address.",
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
    chain: String(DEVNET),
    ...tokenExample,
    project_info: {
      website: "https://www.circle.com/usdc",
      logo_url: "/logos/usdc.svg",
      twitter: "https://x.com/circle",
      discord: null,
    },
  },
  metadata: { chain: String(DEVNET), ...tokenExample },
  metadataWithContract: { contract: USDC, chain: String(DEVNET), ...tokenExample },
  asset: { contract: USDC, chain: DEVNET, ...tokenExample },
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
export const timeParam = (description: string, examples: readonly string[] = []) =>
  Type.Unsafe<string>({
    anyOf: [
      { type: "string", format: "date-time" },
      { type: "string", pattern: UNIX_SECONDS_PATTERN },
    ],
    description,
    ...(examples.length > 0 ? { examples: [...examples] } : {}),
  });

/** Whether a property schema is a `timeParam`. */
export const isTimeParam = (schema: unknown): boolean =>
  typeof schema === "object" &&
  schema !== null &&
  Array.isArray((schema as { anyOf?: unknown }).anyOf) &&
  (schema as { anyOf: { format?: unknown }[] }).anyOf.some((branch) => branch.format === "date-time");
