import type { FastifyInstance } from "fastify";
import { createOpenApiValidator, type OpenApiDocument } from "./openapi-validator.js";

export type ApiAnswer = { status: number; headers: Headers; body: unknown; text: string };

/**
 * A client of a listening API server for the tests: real HTTP through `fetch`, and every JSON
 * answer checked against the server's own /openapi.json (path and status must be documented).
 * `app` is an in-process server, or the base URL of one in another process.
 */
export async function createApiClient(app: FastifyInstance | string, options: { key?: string } = {}) {
  const base = typeof app === "string" ? app : baseOf(app);
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as OpenApiDocument;
  const validator = createOpenApiValidator(document);

  /** GET `path` with `query` (a string is sent as is), with the client's key unless `key` says otherwise. */
  const get = async (
    path: string,
    query: Record<string, string | number> | string = {},
    requestOptions: { key?: string | null; check?: boolean } = {},
  ): Promise<ApiAnswer> => {
    const search = typeof query === "string" ? query : new URLSearchParams(stringify(query)).toString();
    const key = requestOptions.key === undefined ? options.key : requestOptions.key;
    const url = `${base}${path}${search ? `?${search}` : ""}`;
    const init = (): RequestInit => ({
      headers: key === null || key === undefined ? {} : { "x-api-key": key },
      // A guard against a hung request only (a loaded machine may take seconds).
      signal: AbortSignal.timeout(60_000),
    });
    // A GET sent on a kept-alive connection the server closed at that moment (its keep-alive
    // timeout: a race a loaded machine can lose) is sent again once, as browsers do.
    const response = await fetch(url, init()).catch((error: unknown) => {
      if (!closedUnderUs(error)) throw error;
      return fetch(url, init());
    });
    const text = await response.text();
    const isJson = (response.headers.get("content-type") ?? "").includes("application/json");
    const body: unknown = isJson ? JSON.parse(text) : text;
    if (isJson && requestOptions.check !== false && document.paths[path]) {
      validator.check(path, response.status, body);
    }
    return { status: response.status, headers: response.headers, body, text };
  };
  return { base, document, get };
}

/** fetch's error for a connection the other side closed before any answer. */
function closedUnderUs(error: unknown): boolean {
  const cause = error instanceof TypeError ? (error.cause as { code?: string } | undefined) : undefined;
  return cause?.code === "UND_ERR_SOCKET" || cause?.code === "ECONNRESET";
}

/** The base URL (`http://127.0.0.1:<port>`) of a listening server. */
export function baseOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the server is not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}

const stringify = (query: Record<string, string | number>) =>
  Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));
