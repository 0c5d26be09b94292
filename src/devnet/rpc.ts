import { Agent, request as httpRequest } from "node:http";
import { BaseError } from "../internal/errors.js";

/** A JSON-RPC call of a batch. */
export type RpcCall = { method: string; params?: readonly unknown[] };

/** The devnet's JSON-RPC client: single calls and explicit batches (one HTTP request each). */
export type DevnetRpc = {
  readonly url: string;
  request<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** Results in the calls' order; the first failed call throws. The node may run them concurrently. */
  batch<T = unknown>(calls: readonly RpcCall[]): Promise<T[]>;
  /** Like batch, but a failed call gives its error in place of its result. */
  batchSettled<T = unknown>(calls: readonly RpcCall[]): Promise<(T | RpcCallError)[]>;
};

/** A JSON-RPC call answered with an error. */
export class RpcCallError extends BaseError {
  override name = "RpcCallError";
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message}`);
  }
}

/** Requests per HTTP batch: large enough to amortise the round trip, small enough to stream. */
const maxBatchSize = 1000;

type RpcResponseBody = {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

/**
 * Creates the client. Requests go over node:http with keep-alive: a round trip to the local node
 * costs about half of what fetch (undici, viem's default transport) costs, and the simulator
 * makes two per block.
 */
export function createDevnetRpc(url: string, options: { timeoutMs?: number } = {}): DevnetRpc {
  const post = createJsonPoster(url, options.timeoutMs ?? 60_000);
  let nextId = 1;

  const toResult = (call: RpcCall, response: RpcResponseBody | undefined): unknown => {
    if (response === undefined) return new RpcCallError(call.method, -32603, "no response in the batch");
    if (response.error) {
      return new RpcCallError(call.method, response.error.code, response.error.message, response.error.data);
    }
    return response.result;
  };

  const batchSettled = async <T>(calls: readonly RpcCall[]): Promise<(T | RpcCallError)[]> => {
    const results: (T | RpcCallError)[] = [];
    for (let start = 0; start < calls.length; start += maxBatchSize) {
      const chunk = calls.slice(start, start + maxBatchSize);
      const firstId = nextId;
      nextId += chunk.length;
      const body = chunk.map((call, i) => ({
        jsonrpc: "2.0" as const,
        id: firstId + i,
        method: call.method,
        params: call.params ?? [],
      }));
      const responses = (await post(body)) as RpcResponseBody[];
      const byId = new Map(responses.map((r) => [r.id, r]));
      chunk.forEach((call, i) => {
        results.push(toResult(call, byId.get(firstId + i)) as T | RpcCallError);
      });
    }
    return results;
  };

  return {
    url,
    async request<T>(method: string, params: readonly unknown[] = []): Promise<T> {
      const response = (await post({ jsonrpc: "2.0", id: nextId++, method, params })) as RpcResponseBody;
      const result = toResult({ method, params }, response);
      if (result instanceof RpcCallError) throw result;
      return result as T;
    },
    batchSettled,
    async batch<T>(calls: readonly RpcCall[]): Promise<T[]> {
      const results = await batchSettled<T>(calls);
      const failed = results.find((r) => r instanceof RpcCallError);
      if (failed) throw failed;
      return results as T[];
    },
  };
}

/** The node is unreachable or answered something that is not JSON-RPC. */
export class RpcTransportError extends BaseError {
  override name = "RpcTransportError";
}

function createJsonPoster(url: string, timeoutMs: number): (body: unknown) => Promise<unknown> {
  const target = new URL(url);
  // Idle keep-alive sockets are unref'd by the agent: they never hold the process open.
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  return (body) =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const request = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            try {
              resolve(JSON.parse(text));
            } catch {
              reject(
                new RpcTransportError(`${url} answered HTTP ${response.statusCode}: ${text.slice(0, 200)}`),
              );
            }
          });
        },
      );
      request.setTimeout(timeoutMs, () => {
        request.destroy(
          new RpcTransportError(`${url} did not answer within ${timeoutMs} ms`, { retryable: true }),
        );
      });
      request.on("error", (error) =>
        reject(
          error instanceof RpcTransportError
            ? error
            : new RpcTransportError(`${url}: ${error.message}`, { cause: error, retryable: true }),
        ),
      );
      request.end(payload);
    });
}
