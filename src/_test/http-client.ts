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
    const response = await fetch(`${base}${path}${search ? `?${search}` : ""}`, {
      headers: key === null || key === undefined ? {} : { "x-api-key": key },
      signal: AbortSignal.timeout(10_000),
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

function baseOf(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the server is not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}

const stringify = (query: Record<string, string | number>) =>
  Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));
