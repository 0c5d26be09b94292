import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { HttpError } from "../internal/errors.js";
import { errorBody } from "./error-handler.js";

/** A raw HTTP/1.1 error answer with a JSON body in the API's error shape; the connection is closed after it. */
function rawAnswer(statusCode: number, message: string): string {
  const body = JSON.stringify(errorBody(statusCode, message));
  return [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? "Error"}`,
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/** The 400 of an HTTP/1.1 request without `Host`. */
export const HOST_REQUIRED_MESSAGE = "the Host header is required";

const clientErrors: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, "the request headers are too large"],
  HPE_URI_TOO_LONG: [414, "the request URL is too long"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "the request was not received in time"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "the request's chunk extensions are too large"],
};

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refuses (malformed, headers too large,
 * sent too slowly) gets a JSON error body like every other error, instead of Node's bare one.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const [statusCode, message] = clientErrors[error.code ?? ""] ?? [400, "the request is not valid HTTP/1.1"];
  // end() only closes our side: a client that keeps sending (a slowloris trickling its headers)
  // would hold the connection open. One that timed out is closed once the answer is sent; any
  // other has a moment to read it first.
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    socket.end(rawAnswer(statusCode, message), () => socket.destroy());
    return;
  }
  socket.end(rawAnswer(statusCode, message));
  const timer = setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

/** How long a connection answered a client error stays open for the client to read the answer. */
const CLIENT_ERROR_LINGER_MS = 1000;

/**
 * Protocol-level guards of an API server:
 * - an `Expect` other than `100-continue` is a 417 with a JSON body (Node would send an empty one);
 * - an HTTP/1.1 request without `Host` is a 400 with a JSON body (the server is created with
 *   `requireHostHeader: false` so that the request reaches this hook instead of Node's bare 400);
 * - a response that has not drained to the client within `writeTimeoutMs` of being sent (a client
 *   that never reads) has its connection destroyed, so it cannot hold the socket and buffers.
 */
export function installProtocolGuards(app: FastifyInstance, options: { writeTimeoutMs: number }): void {
  app.server.on("checkExpectation", (request, response) => {
    const body = JSON.stringify(
      errorBody(
        417,
        `the expectation ${JSON.stringify(String(request.headers.expect).slice(0, 60))} is not supported`,
      ),
    );
    response.writeHead(417, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    response.end(body);
  });
  app.addHook("onRequest", async (request: FastifyRequest) => {
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && !request.headers.host) {
      throw new HttpError(400, HOST_REQUIRED_MESSAGE);
    }
  });
  app.addHook("onSend", async (_request: FastifyRequest, reply: FastifyReply) => {
    const response = reply.raw;
    const timer = setTimeout(() => {
      if (!response.writableFinished) response.socket?.destroy();
    }, options.writeTimeoutMs);
    timer.unref();
    response.once("close", () => clearTimeout(timer));
  });
}
