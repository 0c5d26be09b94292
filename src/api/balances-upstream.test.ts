import * as assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import { type SilentNode, startSilentNode } from "../_test/rpc-nodes.js";
import { parseConfig } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { createApiServer } from "./server.js";
import { BALANCE_RETRY_AFTER_S, BALANCE_TIMEOUT_MS } from "./wallet-balances.js";

const CHAIN = 31337;
const TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const FACTORY = "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512";
const WALLETS = ["0x70997970c51812dc3a010c7d01b50e0d17dc79c8", "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"];

/** A node that answers every request the same way, counting them. */
async function startNode(answer: (res: import("node:http").ServerResponse) => void) {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on("end", () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}/key-1234`,
    requests: () => requests,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * GET /v1/wallets/token-balances when the chain's node fails: a failure upstream is a gateway
 * status (502 the node answered wrong, 503 it could not be reached or refused for now, 504 it was
 * silent) with Retry-After and words saying what the node did, never a 500, and never the node's
 * URL (the path of a provider's URL is often its key).
 */
describe("wallet balances when the node fails", { timeout: 60_000 }, () => {
  let testDb: TestDb;
  let key: string;
  let silent: SilentNode;
  const stops: (() => Promise<unknown>)[] = [];

  before(async () => {
    testDb = await createTestDb();
    ({ key } = await createApiKey(testDb.db, "upstream"));
    silent = await startSilentNode();
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop();
    await silent?.stop();
    await testDb?.drop();
  });

  const read = async (rpc: string): Promise<ApiAnswer> => {
    const config = parseConfig({
      api: { host: "127.0.0.1", port: 0 },
      devnet: { enabled: false },
      chains: [
        {
          id: CHAIN,
          name: "Devnet",
          rpc: [rpc],
          dexes: [{ name: "Uniswap V2", protocol: "v2", factory: FACTORY, fee: 3000 }],
          referenceTokens: { stablecoins: [TOKEN], wrappedNative: TOKEN },
        },
      ],
    });
    const app: FastifyInstance = createApiServer({ config, db: testDb.db, logger: createSilentLogger() });
    try {
      await app.listen({ host: "127.0.0.1", port: 0 });
      const api = await createApiClient(app, { key });
      return await api.get("/v1/wallets/token-balances", {
        contract: TOKEN,
        chain: String(CHAIN),
        wallets: WALLETS.join(","),
      });
    } finally {
      await app.close();
    }
  };

  const assertGateway = (answer: ApiAnswer, status: number, why: string, retryAfter: string) => {
    assert.equal(answer.status, status, answer.text);
    assert.deepEqual(answer.body, {
      statusCode: status,
      error: { 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout" }[status],
      message: `could not read balances from network ${CHAIN} (Devnet): ${why}; try again later`,
    });
    assert.equal(answer.headers.get("retry-after"), retryAfter);
    assert.doesNotMatch(answer.text, /key-1234|127\.0\.0\.1/);
  };

  it("answers 502 naming the status when the node answers HTTP 500", async () => {
    const node = await startNode((res) => {
      res.writeHead(500, { "content-type": "text/plain" }).end("internal error at http://10.0.0.1/key-1234");
    });
    stops.push(node.stop);
    const answer = await read(node.url);
    assertGateway(
      answer,
      502,
      "its node answered HTTP 500 Internal Server Error",
      String(BALANCE_RETRY_AFTER_S),
    );
    assert.ok(node.requests() >= 1);
  });

  it("answers 502 when the node answers something that is not JSON", async () => {
    const node = await startNode((res) => {
      res.writeHead(200, { "content-type": "text/html" }).end("<html>garbage</html>");
    });
    stops.push(node.stop);
    const answer = await read(node.url);
    assertGateway(answer, 502, "its node answered something that is not JSON", String(BALANCE_RETRY_AFTER_S));
  });

  /** A node that answers JSON-RPC: the head, no Multicall3, and every eth_call as `call` says. */
  const startCallingNode = (call: (id: unknown) => Record<string, unknown>) => {
    return new Promise<{ url: string; stop: () => Promise<void> }>((resolve) => {
      const server: Server = createServer((req, res) => {
        let body = "";
        req.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        req.on("end", () => {
          const parsed = JSON.parse(body) as
            | { id: unknown; method: string }
            | { id: unknown; method: string }[];
          const one = ({ id, method }: { id: unknown; method: string }) =>
            method === "eth_blockNumber"
              ? { jsonrpc: "2.0", id, result: "0x10" }
              : method === "eth_getCode"
                ? { jsonrpc: "2.0", id, result: "0x" }
                : { jsonrpc: "2.0", ...call(id) };
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify(Array.isArray(parsed) ? parsed.map(one) : one(parsed)));
        });
      });
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        if (address === null || typeof address === "string") throw new Error("no TCP address");
        resolve({
          url: `http://127.0.0.1:${address.port}/key-1234`,
          stop: () => new Promise<void>((done) => server.close(() => done())),
        });
      });
    });
  };

  it("answers 400 naming the contract when its calls revert (a JSON-RPC 'execution reverted' is the node answering right) or return 0x", async () => {
    for (const call of [
      (id: unknown) => ({ id, error: { code: 3, message: "execution reverted" } }),
      (id: unknown) => ({ id, error: { code: -32000, message: "execution reverted" } }),
      (id: unknown) => ({ id, result: "0x" }),
      (id: unknown) => ({ id, result: "0x01" }),
    ]) {
      const node = await startCallingNode(call);
      stops.push(node.stop);
      const answer = await read(node.url);
      assert.equal(answer.status, 400, answer.text);
      assert.match(
        (answer.body as { message: string }).message,
        new RegExp(
          `contract ${TOKEN} does not answer decimals\\(\\) and balanceOf\\(\\) on network ${CHAIN}: not an ERC-20 token`,
        ),
      );
      assert.equal(answer.headers.get("retry-after"), null);
    }
  });

  it("answers 503 with the node's own Retry-After when it answers HTTP 429", async () => {
    const node = await startNode((res) => {
      res.writeHead(429, { "content-type": "text/plain", "retry-after": "7" }).end("slow down");
    });
    stops.push(node.stop);
    const answer = await read(node.url);
    assertGateway(answer, 503, "its node refused the request for now (HTTP 429 Too Many Requests)", "7");
  });

  it("answers 503 when nothing listens at the node's address", async () => {
    const port = await freePort();
    const answer = await read(`http://127.0.0.1:${port}/key-1234`);
    assertGateway(
      answer,
      503,
      "its node could not be reached: it refused the connection",
      String(BALANCE_RETRY_AFTER_S),
    );
  });

  it(`answers 504 when the node never answers (after ${BALANCE_TIMEOUT_MS / 1000} s)`, async () => {
    const answer = await read(`${silent.url}key-1234`);
    assertGateway(
      answer,
      504,
      `its node did not answer within ${BALANCE_TIMEOUT_MS / 1000} s`,
      String(BALANCE_RETRY_AFTER_S),
    );
  });
});
