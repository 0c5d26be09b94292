import { BaseError, RangeTooLargeError, RetryableRpcError } from "../internal/errors.js";

/** The node executed an eth_call and it reverted (or the function does not exist there). */
export class CallRevertedError extends BaseError {
  override name = "CallRevertedError";
}

/** A retryable error that came with the provider's Retry-After. */
export class RateLimitedRpcError extends RetryableRpcError {
  override name = "RateLimitedRpcError";
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/**
 * The provider throttles us (HTTP 429, or a "rate limit" message): it answered, and asks for
 * fewer requests. Retried for as long as it takes (RpcOptions.throttledAttempts), with every
 * request of the client paused for its Retry-After, rather than failing the work in flight.
 */
export class ThrottledRpcError extends RateLimitedRpcError {
  override name = "ThrottledRpcError";
}

/**
 * A JSON-RPC call got no answer in time: one HTTP request past the client's `timeoutMs` (retried
 * like any transient failure), or a whole call past the deadline its caller gave (not retried).
 */
export class RpcTimeoutError extends RetryableRpcError {
  override name = "RpcTimeoutError";
}

/**
 * Whether `error` says the node itself did not answer in time: an RpcTimeoutError from a request
 * that was waiting for its answer. Not one the client made at a caller's deadline out of another
 * failure (a refused connection, a 503 between retries): its cause is that failure, classified.
 */
export function timedOutWaiting(error: unknown): error is RpcTimeoutError {
  return error instanceof RpcTimeoutError && !(error.cause instanceof RetryableRpcError);
}

/**
 * The HTTP answer that carried this call was over the client's response-size cap (viem's 10 MB).
 * In a JSON-RPC batch, the other calls' answers may be what made it large: the client retries the
 * call alone. Alone and still too large, it is a BaseError (retrying cannot help). eth_getLogs is
 * never this: its too-large answer is a RangeTooLargeError (the caller splits the range).
 */
export class ResponseTooLargeError extends RetryableRpcError {
  override name = "ResponseTooLargeError";
}

/**
 * The node does not serve this method (JSON-RPC -32601 "method not found", -32004 "method not
 * supported", or a message saying so). Not retryable: asking again gets the same answer; a caller
 * with another way to the same data (block receipts → full blocks → transactions) takes it.
 */
export class MethodNotSupportedError extends BaseError {
  override name = "MethodNotSupportedError";
  constructor(
    message: string,
    /** The JSON-RPC method the node does not serve. */
    readonly method: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

type ErrorFacts = {
  messages: string;
  httpStatus: number | undefined;
  rpcCode: number | undefined;
  names: Set<string>;
  retryAfterMs: number | undefined;
};

const RATE_LIMIT =
  /rate.?limit|too many requests|request rate|requests per second|exceeded .*(quota|capacity|credits|compute units)|throughput|capacity exceeded/;
const RANGE_TOO_LARGE =
  /range|too many|more than \d+ results|returned more than|response size|size exceeded|limit exceeded|limited to|too large|too wide|too big|exceeds? (the )?(max|maximum|limit)|max results|query timeout|log response/;
const REVERTED =
  /revert|vm exception|invalid opcode|function selector was not recognized|out of gas|invalid jump|stack underflow|bad instruction/;
const NOT_SUPPORTED =
  /(method|api)\b.{0,80}\b(not found|not supported|not available|does not exist|unsupported|not implemented)|unsupported method|method not allowed/;
const TRANSIENT =
  /timeout|timed out|econnreset|econnrefused|econnaborted|epipe|socket hang up|socket|fetch failed|network|connection|closed|unavailable|temporar|try again|header not found|busy|overloaded|bad gateway|gateway/;

/**
 * Turns whatever a JSON-RPC call threw (viem errors, fetch failures, JSON-RPC error objects)
 * into this project's error classes. This is the one place that reads providers' message text:
 * - timeouts → RpcTimeoutError (a RetryableRpcError);
 * - HTTP 408/425/429/5xx, dropped connections, internal errors → RetryableRpcError
 *   (RateLimitedRpcError when the provider said when to come back);
 * - for eth_getLogs, "range too large / too many results / response size exceeded / limit
 *   exceeded", or an answer over the response-size cap → RangeTooLargeError (the caller
 *   splits the range);
 * - for other methods, an answer over the response-size cap → ResponseTooLargeError (retryable:
 *   the client sends the call again on its own, out of its batch);
 * - for eth_call, a revert or a missing function → CallRevertedError;
 * - a method the node does not serve (-32601, -32004, "method … not supported") →
 *   MethodNotSupportedError (not retryable);
 * - anything else → a non-retryable BaseError with the original as its cause.
 */
export function classifyRpcError(error: unknown, method: string): BaseError {
  if (error instanceof BaseError && isOwnRpcError(error)) return error;
  const facts = collectFacts(error);
  const summary = `${method} failed: ${firstLine(error)}`;
  const { messages, httpStatus, rpcCode, names } = facts;

  if (httpStatus === 429 || RATE_LIMIT.test(messages)) {
    return new ThrottledRpcError(summary, facts.retryAfterMs, { cause: error });
  }
  if (
    method === "eth_getLogs" &&
    (names.has("ResponseBodyTooLargeError") || RANGE_TOO_LARGE.test(messages))
  ) {
    return new RangeTooLargeError(summary, { cause: error });
  }
  if (names.has("ResponseBodyTooLargeError")) {
    return new ResponseTooLargeError(summary, { cause: error });
  }
  if (method === "eth_call" && (rpcCode === 3 || REVERTED.test(messages))) {
    return new CallRevertedError(summary, { cause: error });
  }
  if (
    httpStatus === undefined &&
    (rpcCode === -32601 || rpcCode === -32004 || NOT_SUPPORTED.test(messages))
  ) {
    return new MethodNotSupportedError(summary, method, { cause: error });
  }
  if (names.has("TimeoutError")) return new RpcTimeoutError(summary, { cause: error });
  if (httpStatus !== undefined) {
    if (httpStatus === 408 || httpStatus === 425 || httpStatus === 413 || httpStatus >= 500) {
      return new RateLimitedRpcError(summary, facts.retryAfterMs, { cause: error });
    }
    return new BaseError(summary, { cause: error });
  }
  // An HTTP request that got no HTTP answer at all: the connection failed or was dropped.
  if (names.has("HttpRequestError") || names.has("WebSocketRequestError") || names.has("SocketClosedError")) {
    return new RetryableRpcError(summary, { cause: error });
  }
  if (rpcCode === -32603 || rpcCode === -32000 || rpcCode === -32005 || TRANSIENT.test(messages)) {
    return new RetryableRpcError(summary, { cause: error });
  }
  return new BaseError(summary, { cause: error });
}

function isOwnRpcError(error: BaseError): boolean {
  return (
    error instanceof RetryableRpcError ||
    error instanceof RangeTooLargeError ||
    error instanceof CallRevertedError ||
    error instanceof MethodNotSupportedError
  );
}

/** Walks the cause chain, gathering messages, HTTP status, JSON-RPC code and Retry-After. */
function collectFacts(error: unknown): ErrorFacts {
  const facts: ErrorFacts = {
    messages: "",
    httpStatus: undefined,
    rpcCode: undefined,
    names: new Set(),
    retryAfterMs: undefined,
  };
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    if (typeof current !== "object") {
      parts.push(String(current));
      break;
    }
    const e = current as Record<string, unknown>;
    if (typeof e.name === "string") facts.names.add(e.name);
    for (const key of ["message", "shortMessage", "details", "code"] as const) {
      if (typeof e[key] === "string") parts.push(e[key] as string);
    }
    if (typeof e.status === "number" && facts.httpStatus === undefined) facts.httpStatus = e.status;
    if (typeof e.code === "number" && facts.rpcCode === undefined && e.code !== -1) facts.rpcCode = e.code;
    if (facts.retryAfterMs === undefined) facts.retryAfterMs = readRetryAfter(e.headers);
    current = e.cause;
  }
  facts.messages = parts.join(" | ").toLowerCase();
  return facts;
}

/** Retry-After: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function readRetryAfter(headers: unknown): number | undefined {
  if (headers && typeof (headers as Headers).get === "function") {
    return parseRetryAfter((headers as Headers).get("retry-after"));
  }
  return undefined;
}

function firstLine(error: unknown): string {
  const e = error as { shortMessage?: unknown; message?: unknown; details?: unknown } | null;
  const text = [e?.shortMessage, e?.details]
    .filter((x): x is string => typeof x === "string" && x.length > 0)
    .join(": ");
  const message = text || (typeof e?.message === "string" ? e.message : String(error));
  return (message.split("\n")[0] ?? "").slice(0, 300);
}
