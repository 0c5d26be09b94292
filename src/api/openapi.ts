import type { SwaggerTransform, SwaggerTransformObject } from "@fastify/swagger";
import type { FastifySchema } from "fastify";
import type { Config } from "../config/schema.js";
import { keyMessages } from "./auth.js";
import { DATABASE_UNAVAILABLE_MESSAGE, unexpectedErrorMessage } from "./error-handler.js";
import { HOST_REQUIRED_MESSAGE } from "./protocol.js";
import { type ErrorExample, errorExamples } from "./schemas.js";
import { looseIntegerMessage } from "./validation.js";

/**
 * The `operationId` of every documented operation, by `METHOD path`, in one place: client code
 * generated from /openapi.json (web/src/api-types.ts, any SDK) names its calls by these, so they
 * never change once published. A route missing here gets none, and openapi.test.ts fails naming
 * the line to add. Names are camelCase, a verb and what it answers.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  "GET /healthz": "checkLiveness",
  "GET /readyz": "checkReadiness",
  "GET /v1/tokens/search": "searchTokens",
  "GET /v1/tokens/metadata": "getTokenMetadata",
  "GET /v1/tokens/line-chart": "getTokenLineChart",
  "GET /v1/tokens/candle-chart": "getTokenCandleChart",
  "GET /v1/tokens/price-provenance": "getTokenPriceProvenance",
  "GET /v1/wallets/token-balances": "getWalletTokenBalances",
  "GET /v1/coins/price": "getCoinPrice",
  "GET /api/v1/assets": "getAssets",
  "GET /api/v1/candles": "getCandles",
  "GET /api/v1/trades": "getTrades",
  "GET /api/v1/pairs": "getPairs",
  // Issue 12's endpoints (the agreed contract), named ahead of their routes.
  "GET /v1/tokens/market": "getTokenMarkets",
  "GET /api/v1/pairs/market": "getPairMarkets",
  "GET /api/v1/pools/top": "getTopPools",
  "GET /v1/networks": "getNetworks",
  "GET /v1/dexes": "getDexes",
  "GET /v1/stream": "openStream",
};

/** Paths whose every route is a key-protected data endpoint (docs/API.md "API keys"). */
const KEY_PROTECTED = /^\/(api\/)?v1\//;

/** The operation field that carries the error examples from the transform to placeErrorExamples. */
const ERROR_EXAMPLES = "x-error-examples";

type ResponseSchema = { $ref?: string; "x-examples"?: unknown; [key: string]: unknown };
type QuerySchema = { properties?: Record<string, unknown>; required?: readonly string[] };
type Operation = {
  [key: string]: unknown;
  responses?: Record<string, { content?: Record<string, { examples?: unknown }> }>;
};

/**
 * The `transform` of @fastify/swagger: completes each route's entry of /openapi.json, for the
 * routes of today and those added later, without touching what Fastify validates or serialises.
 * - `operationId` from OPERATION_IDS;
 * - `security: apiKey` on every `/v1/` and `/api/v1/` route, so that Swagger UI's "Try it out"
 *   sends the `x-api-key` given under "Authorize";
 * - examples on each error status (ErrorBody): the route's own (errorResponses in schemas.ts),
 *   then those every route shares, in the words the server really answers (a missing parameter,
 *   the key check, the rate limit, the error handler's 500 and 503). A 404 has no shared example:
 *   its route must give one, or openapi.test.ts fails.
 */
export function createOpenApiTransform(config: Config): SwaggerTransform {
  const { rateLimit, failedKeyLimit } = config.api;
  const shared: Record<number, readonly ErrorExample[]> = {
    403: [
      { summary: "No key", message: keyMessages.missing },
      { summary: "Unknown or revoked key", message: keyMessages.unknown },
    ],
    429: [
      {
        summary: "Over the key's rate limit",
        message: keyMessages.rateLimited(rateLimit.max, rateLimit.windowMs, rateLimit.windowMs / 2),
      },
      {
        summary: "Too many wrong keys from one address",
        message: keyMessages.tooManyFailures(Math.ceil(failedKeyLimit.windowMs / 2000)),
      },
    ],
    500: [{ summary: "Unexpected error", message: unexpectedErrorMessage("req-1a") }],
    503: [{ summary: "Database unavailable", message: DATABASE_UNAVAILABLE_MESSAGE }],
  };

  return ({ schema, url, route }) => {
    // A route without a schema arrives with none (the type says otherwise).
    if (!schema || (schema as { hide?: boolean }).hide) return { schema, url };
    const method = Array.isArray(route.method) ? route.method[0] : route.method;
    const operationId = OPERATION_IDS[`${method} ${url}`];
    const errors: Record<string, unknown> = {};
    for (const [status, body] of Object.entries((schema.response ?? {}) as Record<string, ResponseSchema>)) {
      const code = Number(status);
      if (code < 400 || body.$ref !== "ErrorBody") continue;
      // The route's own examples first, then those every route shares for the status.
      const own = (body["x-examples"] ?? {}) as Record<string, unknown>;
      const common = errorExamples(code, (code === 400 ? badRequestExamples(schema) : shared[code]) ?? []);
      const all = { ...own, ...common };
      if (Object.keys(all).length > 0) errors[status] = all;
    }
    return {
      schema: {
        ...schema,
        ...(operationId ? { operationId } : {}),
        ...(schema.security === undefined && KEY_PROTECTED.test(url) ? { security: [{ apiKey: [] }] } : {}),
        [ERROR_EXAMPLES]: errors,
      } as FastifySchema,
      url,
    };
  };
}

/**
 * The `transformObject` of @fastify/swagger: puts each operation's error examples (carried by
 * the transform in an `x-` field, which the plugin copies onto the operation) onto its responses'
 * content. They cannot ride on the response schemas: the plugin resolves a `$ref` schema
 * (ErrorBody) to the bare reference and drops what stands beside it.
 */
export const placeErrorExamples: SwaggerTransformObject = (documentObject) => {
  const document = (
    "openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
  ) as { paths?: Record<string, Record<string, Operation>> };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const errors = operation[ERROR_EXAMPLES] as Record<string, unknown> | undefined;
      delete operation[ERROR_EXAMPLES];
      for (const [status, named] of Object.entries(errors ?? {})) {
        const media = operation.responses?.[status]?.content?.["application/json"];
        if (media) media.examples = named;
      }
    }
  }
  return document as ReturnType<SwaggerTransformObject>;
};

/**
 * A 400 every route gives, in the validators' words (src/api/validation.ts): its first required
 * query parameter left out, else a malformed integer parameter; a route without either can only be
 * refused at the protocol level (src/api/protocol.ts).
 */
function badRequestExamples(schema: FastifySchema): ErrorExample[] {
  const query = schema.querystring as QuerySchema | undefined;
  const required = query?.required?.[0];
  if (required) return [{ summary: "Missing parameter", message: `query parameter ${required} is required` }];
  const integer = Object.entries(query?.properties ?? {}).find(
    ([, property]) => (property as { type?: unknown }).type === "integer",
  );
  if (integer) {
    return [{ summary: "Malformed parameter", message: looseIntegerMessage(integer[0], "one") }];
  }
  return [{ summary: "No Host header", message: HOST_REQUIRED_MESSAGE }];
}
