import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HttpRequestError, LimitExceededRpcError, RpcRequestError, TimeoutError } from "viem";
import { BaseError, RangeTooLargeError, RetryableRpcError } from "../internal/errors.js";
import {
  CallRevertedError,
  classifyRpcError,
  MethodNotSupportedError,
  parseRetryAfter,
  RateLimitedRpcError,
} from "./errors.js";
import { retryDelay } from "./retry.js";

const url = "http://node.invalid";
const rpcError = (code: number, message: string) =>
  new RpcRequestError({ body: {}, error: { code, message }, url });

describe("classifyRpcError", () => {
  it("makes timeouts, 429, 5xx and dropped connections retryable", () => {
    assert.ok(
      classifyRpcError(new TimeoutError({ body: {}, url }), "eth_getLogs") instanceof RetryableRpcError,
      "timeout",
    );
    const limited = classifyRpcError(
      new HttpRequestError({ url, status: 429, headers: new Headers({ "retry-after": "3" }) }),
      "eth_blockNumber",
    );
    assert.ok(limited instanceof RateLimitedRpcError, "HTTP 429");
    assert.equal((limited as RateLimitedRpcError).retryAfterMs, 3000, "Retry-After is kept");
    assert.ok(
      classifyRpcError(new HttpRequestError({ url, status: 503 }), "eth_call") instanceof RetryableRpcError,
      "503",
    );
    const dropped = new HttpRequestError({
      url,
      cause: Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNRESET" } }),
    });
    assert.ok(classifyRpcError(dropped, "eth_getLogs") instanceof RetryableRpcError, "a dropped connection");
    assert.ok(
      classifyRpcError(
        rpcError(-32005, "daily request count exceeded, request rate limited"),
        "eth_getLogs",
      ) instanceof RateLimitedRpcError,
      "rate limit by message, even from eth_getLogs",
    );
  });

  it("recognises the providers' range errors on eth_getLogs only", () => {
    for (const message of [
      "query returned more than 10000 results",
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range",
      "block range is too wide",
      "exceed maximum block range: 5000",
      "eth_getLogs is limited to a 10,000 range",
      "limit exceeded",
    ]) {
      assert.ok(
        classifyRpcError(rpcError(-32602, message), "eth_getLogs") instanceof RangeTooLargeError,
        message,
      );
    }
    assert.ok(
      classifyRpcError(
        new LimitExceededRpcError(rpcError(-32005, "limit exceeded")),
        "eth_getLogs",
      ) instanceof RangeTooLargeError,
      "viem's wrapped -32005",
    );
    assert.ok(
      !(
        classifyRpcError(rpcError(-32602, "block range is too wide"), "eth_call") instanceof
        RangeTooLargeError
      ),
      "not for other methods",
    );
  });

  it("recognises reverted calls", () => {
    assert.ok(classifyRpcError(rpcError(3, "execution reverted"), "eth_call") instanceof CallRevertedError);
    assert.ok(
      classifyRpcError(
        rpcError(
          -32603,
          "Error: Transaction reverted: function selector was not recognized and there's no fallback function",
        ),
        "eth_call",
      ) instanceof CallRevertedError,
      "hardhat's message for a missing function",
    );
  });

  it("leaves other errors non-retryable", () => {
    const error = classifyRpcError(rpcError(-32601, "the method eth_foo does not exist"), "eth_foo");
    assert.ok(error instanceof BaseError && !error.retryable, "method not found is final");
    assert.ok(
      !classifyRpcError(new HttpRequestError({ url, status: 401 }), "eth_call").retryable,
      "401 is final",
    );
  });

  it("recognises a method the node does not serve, by code or by message", () => {
    for (const [code, message] of [
      [-32601, "the method eth_getBlockReceipts does not exist/is not available"], // geth
      [-32004, "Method eth_getBlockReceipts is not supported"], // Hardhat 2 (EDR)
      [-32600, "Unsupported method: eth_getBlockReceipts"], // a gateway's wording
      [-32000, "method eth_getBlockReceipts not found"],
    ] as const) {
      const error = classifyRpcError(rpcError(code, message), "eth_getBlockReceipts");
      assert.ok(error instanceof MethodNotSupportedError, message);
      assert.equal((error as MethodNotSupportedError).method, "eth_getBlockReceipts");
      assert.equal(error.retryable, false, `${message}: asking again would not help`);
    }
    assert.ok(
      classifyRpcError(rpcError(-32000, "header not found"), "eth_getBlockReceipts") instanceof
        RetryableRpcError,
      "a block the node does not have yet is still retried",
    );
  });

  it("parses Retry-After in seconds or as a date", () => {
    assert.equal(parseRetryAfter("2"), 2000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6000);
    assert.equal(parseRetryAfter("soon"), undefined);
  });
});

describe("retryDelay", () => {
  it("backs off exponentially with jitter, and honours Retry-After", () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1000 };
    const d1 = retryDelay(new RetryableRpcError("x"), 1, options);
    const d4 = retryDelay(new RetryableRpcError("x"), 4, options);
    assert.ok(d1 >= 50 && d1 <= 100, `first delay ${d1} in [50, 100]`);
    assert.ok(d4 >= 400 && d4 <= 800, `fourth delay ${d4} in [400, 800]`);
    const d = retryDelay(new RateLimitedRpcError("x", 2500), 1, options);
    assert.ok(d >= 2500 && d < 2600, `Retry-After 2.5 s gives ${d}`);
  });
});
