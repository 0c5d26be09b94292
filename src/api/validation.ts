import type { FastifyRequest, FastifySchemaValidationError } from "fastify";
import { badRequest, type HttpError } from "../internal/errors.js";
import { listLimits, MAX_LIST_ITEMS, patternPhrases, quote } from "./ids.js";
import { isTimeParam } from "./schemas.js";
import { parseTimeParam } from "./times.js";

type SchemaFacts = {
  minimum?: number;
  maximum?: number;
  pattern?: string;
  description?: string;
};

/**
 * Fastify's schema error formatter: turns the first Ajv error into a 400 whose message names the
 * parameter in plain words, for example `query parameter days must be an integer from 1 to 90 (got 91)`.
 * Ajv runs in verbose mode so the failing value and its schema are at hand.
 */
export function formatSchemaErrors(errors: FastifySchemaValidationError[], dataVar: string): HttpError {
  const error = errors[0];
  if (!error) return badRequest(`invalid ${dataVar}`);
  const where = dataVar === "querystring" ? "query parameter" : dataVar;
  const params = error.params as Record<string, unknown>;
  const verbose = error as FastifySchemaValidationError & { data?: unknown; parentSchema?: SchemaFacts };
  const name =
    error.keyword === "required"
      ? String(params.missingProperty)
      : error.instancePath.replace(/^\//, "").replaceAll("/", ".") || "(all)";
  const got = verbose.data === undefined ? "" : ` (got ${quote(verbose.data)})`;
  // A time parameter that takes a date-time or unix seconds fails both branches of its anyOf:
  // one message for both, not the first branch's.
  const either = errors.find((e) => e.keyword === "anyOf" && e.instancePath === error.instancePath) as
    | (FastifySchemaValidationError & { parentSchema?: unknown })
    | undefined;
  if (either && isTimeParam(either.parentSchema)) {
    return badRequest(
      `${where} ${name} must be an ISO 8601 date-time with a time zone or unix seconds in plain decimal digits, for example 2026-11-21T10:00:00Z or 1795255200${got}`,
    );
  }
  const schema = verbose.parentSchema ?? {};
  const range = () =>
    schema.minimum !== undefined && schema.maximum !== undefined
      ? ` from ${schema.minimum} to ${schema.maximum}`
      : schema.minimum !== undefined
        ? ` of at least ${schema.minimum}`
        : schema.maximum !== undefined
          ? ` of at most ${schema.maximum}`
          : "";

  let what: string;
  switch (error.keyword) {
    case "required":
      return badRequest(`${where} ${name} is required`);
    case "type": {
      const type = String(params.type);
      if (type === "integer" || type === "number")
        what = `must be ${type === "integer" ? "an integer" : "a number"}${range()}`;
      else what = `must be a single ${type} value`;
      break;
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      what = `must be ${Number.isInteger(schema.minimum ?? 0) ? "an integer" : "a number"}${range()}`;
      break;
    case "pattern": {
      const phrase = patternPhrases[String(params.pattern)];
      what = phrase ? `must be ${phrase}` : (schema.description ?? `must match ${String(params.pattern)}`);
      break;
    }
    case "format":
      what =
        params.format === "date-time"
          ? "must be an ISO 8601 date-time with a time zone, for example 2026-11-21T10:00:00Z"
          : `must be a ${String(params.format)}`;
      break;
    case "enum":
      what = `must be one of ${(params.allowedValues as unknown[]).map(String).join(", ")}`;
      break;
    case "maxLength":
      what =
        schema.pattern && patternPhrases[schema.pattern]?.includes("list")
          ? `lists too many items; at most ${listLimits[schema.pattern] ?? MAX_LIST_ITEMS} are allowed`
          : `must be at most ${String(params.limit)} characters long`;
      return badRequest(`${where} ${name} ${what}`);
    case "minLength":
      what = "must not be empty";
      break;
    default:
      what = error.message ?? "is invalid";
  }
  return badRequest(`${where} ${name} ${what}${got}`);
}

type PropertySchema = { type?: unknown; format?: unknown; anyOf?: unknown };

/** A request's query parameters, and the properties of its route's querystring schema (its known parameters). */
function queryAndSchema(request: FastifyRequest): {
  query: Record<string, unknown> | undefined;
  known: Record<string, PropertySchema> | undefined;
} {
  const schema = request.routeOptions.schema?.querystring as
    | { properties?: Record<string, PropertySchema> }
    | undefined;
  return { query: request.query as Record<string, unknown> | undefined, known: schema?.properties };
}

/**
 * preValidation hook: a query parameter of the route given more than once (`?days=1&days=2`)
 * is a 400 naming it, rather than an ambiguous pick. Unknown parameters are ignored, repeated or not.
 */
export async function rejectRepeatedParams(request: FastifyRequest): Promise<void> {
  const { query, known } = queryAndSchema(request);
  if (!query || !known) return;
  for (const name of Object.keys(known)) {
    if (Array.isArray(query[name])) throw badRequest(`query parameter ${name} is given more than once`);
  }
}

/**
 * preHandler of every data endpoint: Ajv's type coercion turns `Infinity` and `1e309` into
 * Infinity, which then passes `integer`, `minimum` and `maximum`; no number parameter of this API
 * is infinite, so any such value is a 400 naming the parameter.
 */
export async function rejectNonFiniteNumbers(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return;
  for (const [name, value] of Object.entries(query)) {
    if (typeof value === "number" && !Number.isFinite(value)) {
      throw badRequest(`query parameter ${name} must be a finite number`);
    }
  }
}

/** The range of every time parameter (docs/API.md): Postgres and JavaScript dates both hold it exactly. */
export const EARLIEST_TIME = Date.UTC(1970, 0, 1);
export const LATEST_TIME = Date.UTC(2100, 0, 1);

/** Integers as documented: plain decimal digits, no sign, no leading zero, no exponent, no hex. */
const PLAIN_INTEGER = /^(0|[1-9][0-9]{0,15})$/;

/** The 400 of an integer parameter not written in plain decimal digits. */
export const looseIntegerMessage = (name: string, value: string) =>
  `query parameter ${name} must be an integer written in plain decimal digits (got ${quote(value)})`;

/**
 * preValidation hook of every data endpoint, before Ajv's coercion (which reads `0x10` as 16 and
 * accepts `1e1`, `+5`, ` 5`): an integer parameter must be plain decimal digits, and a date-time
 * parameter (ISO, or unix seconds where a time parameter takes them) must lie from
 * 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z, so no year 0 or 10000 reaches Postgres (whose
 * date arithmetic overflows near both ends). A 400 names the parameter.
 */
export async function rejectLooseParams(request: FastifyRequest): Promise<void> {
  const { query, known } = queryAndSchema(request);
  if (!query || !known) return;
  for (const [name, property] of Object.entries(known)) {
    const value = query[name];
    if (typeof value !== "string") continue;
    if ((property.type === "integer" || property.type === "number") && !PLAIN_INTEGER.test(value)) {
      throw badRequest(looseIntegerMessage(name, value));
    }
    if (property.format === "date-time" || isTimeParam(property)) {
      // Unix seconds count as the instant they name (a date-time branch of a time parameter).
      const time = isTimeParam(property) ? parseTimeParam(value).getTime() : Date.parse(value);
      // Malformed values are left to the schema's own message.
      if (Number.isNaN(time)) continue;
      if (time < EARLIEST_TIME || time > LATEST_TIME) {
        throw badRequest(
          `query parameter ${name} must be a date-time from 1970-01-01T00:00:00Z to 2100-01-01T00:00:00Z (got ${quote(value)})`,
        );
      }
    }
  }
}
