import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { ChainConfig } from "../config/schema.js";
import { HttpError } from "../internal/errors.js";
import { isDatabaseUnavailable } from "../store/db.js";

/** Seconds a client is asked to wait when the database did not answer (Retry-After of the 503). */
export const DATABASE_RETRY_AFTER_S = 5;

/** The message of a 503 when the database did not answer within its bound. */
export const DATABASE_UNAVAILABLE_MESSAGE = "the database did not answer in time; retry later";

/** The message of an unexpected 5xx: no internals, only the request id to quote. */
export const unexpectedErrorMessage = (requestId: string) =>
  `unexpected processing error (request id ${requestId})`;

/** The one error body of the API: `{ statusCode, error, message }`. */
export function errorBody(statusCode: number, message: string) {
  return { statusCode, error: STATUS_CODES[statusCode] ?? "Error", message };
}

/**
 * The API's one error handler. 4xx errors keep their message (it names what was wrong). A 5xx
 * keeps its message only when it is an HttpError written by this code for the user (an RPC
 * failure of the balance endpoint); any other 5xx is logged in full and answered with a generic
 * message and the request id, so no stack, SQL or RPC URL ever leaves the server.
 */
export function handleError(error: FastifyError | HttpError, request: FastifyRequest, reply: FastifyReply) {
  if (isDatabaseUnavailable(error)) {
    // Not a fault of this request: the database did not answer within its bound. Logged at warn
    // (the sync watch and /readyz report the outage itself), answered 503 so clients retry.
    request.log.warn(
      { err: error, req_id: request.id, route: request.routeOptions.url },
      "database unavailable",
    );
    return reply
      .status(503)
      .header("retry-after", String(DATABASE_RETRY_AFTER_S))
      .type("application/json; charset=utf-8")
      .send(errorBody(503, DATABASE_UNAVAILABLE_MESSAGE));
  }
  const raw = (error as { statusCode?: unknown }).statusCode;
  const statusCode = typeof raw === "number" && raw >= 400 && raw <= 599 ? raw : 500;
  if (error instanceof HttpError) {
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  }
  let message = error.message;
  if (statusCode >= 500) {
    request.log.error({ err: error, req_id: request.id, route: request.routeOptions.url }, "request failed");
    if (!(error instanceof HttpError)) message = unexpectedErrorMessage(request.id);
  }
  return reply
    .status(statusCode)
    .type("application/json; charset=utf-8")
    .send(errorBody(statusCode, message));
}

/** Unknown paths: a 404 in the same error shape. */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split("?")[0] ?? "";
  const shown = path.length > 100 ? `${path.slice(0, 97)}...` : path;
  return reply.status(404).send(errorBody(404, `no endpoint ${request.method} ${shown}`));
}

/** The example ids of the 400 messages (src/api/ids.ts): mainnet's USDC and its USDC/WETH V2 pair. */
const EXAMPLE_TOKEN_ID = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48:1";
const EXAMPLE_PAIR_ID = "0xb4e16d0168e52d35cacd2c6185b44ac22d5bd1bd:1";

/**
 * The error handler of a server whose configuration lacks chain 1: a 400 that suggests an id
 * suggests one of a configured chain instead (its first stablecoin, or wrapped native token; a
 * pair as `<pool address>:<its id>`), so that the example answers on that server.
 */
export function errorHandlerFor(chains: readonly ChainConfig[]): typeof handleError {
  const chain = chains[0];
  if (chain === undefined || chains.some((c) => c.id === 1)) return handleError;
  const token = chain.referenceTokens.stablecoins[0] ?? chain.referenceTokens.wrappedNative;
  const tokenId = token === undefined ? `<token address>:${chain.id}` : `${token}:${chain.id}`;
  const pairId = `<pool address>:${chain.id}`;
  return (error, request, reply) => {
    // Each error is this request's own: its message is rewritten in place.
    if (typeof error.message === "string")
      error.message = error.message.replaceAll(EXAMPLE_TOKEN_ID, tokenId).replaceAll(EXAMPLE_PAIR_ID, pairId);
    return handleError(error, request, reply);
  };
}
