import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { STATUS_CODES } from "node:http";
import { after, before, describe, it } from "node:test";
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance } from "fastify";
import { mnemonicToAccount } from "viem/accounts";
import { apiTypesFile, apiTypesOf, liveOpenApiDocument } from "../../web/gen-api-types.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import { freePort } from "../_test/free-port.js";
import { type ApiAnswer, createApiClient } from "../_test/http-client.js";
import {
  type DocumentedOperation,
  exampleQuery,
  examplesOf,
  operationsOf,
} from "../_test/openapi-examples.js";
import { createOpenApiValidator } from "../_test/openapi-validator.js";
import { defaultConfigPath, loadConfig } from "../config/load.js";
import { planDeployment } from "../devnet/deploy.js";
import { DEVNET_MNEMONIC } from "../devnet/node.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { createDb } from "../store/db.js";
import { OPERATION_IDS } from "./openapi.js";
import { createApiServer } from "./server.js";
import { registerWeb } from "./web.js";

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Client = Awaited<ReturnType<typeof createApiClient>>;
type ErrorBody = { statusCode: number; error: string; message: string };

/**
 * Published operationIds: generated clients call these names, so once published an id never
 * changes (a new operation adds its own; this list only grows).
 */
const PUBLISHED: Record<string, string> = {
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
};

const DATA_PATH = /^\/(api\/)?v1\//;
const jsonOf = (operation: DocumentedOperation, status: string) =>
  operation.responses[status]?.content?.["application/json"];
const errorStatuses = (operation: DocumentedOperation) =>
  Object.keys(operation.responses).filter((status) => Number(status) >= 400);
const documentedErrors = (operation: DocumentedOperation, status: number) =>
  examplesOf(jsonOf(operation, String(status))) as ErrorBody[];
const name = (operation: DocumentedOperation) => `${operation.method} ${operation.path}`;
/** The data endpoints that answer plain HTTP (a WebSocket's upgrade documents no JSON 200). */
const httpData = (operations: DocumentedOperation[]) =>
  operations.filter((o) => DATA_PATH.test(o.path) && jsonOf(o, "200"));

/** A camelCase id to suggest for a route without one: `GET /api/v1/pools/top` → `getPoolsTop`. */
const suggestedId = (method: string, path: string) =>
  method.toLowerCase() +
  path
    .split(/[/_-]/)
    .filter((part) => part !== "" && part !== "api" && part !== "v1" && !part.startsWith("{"))
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join("");

/** Asserts that `answer` is one of the error bodies the document gives for its status. */
function assertDocumented(answer: ApiAnswer, operation: DocumentedOperation, status: number) {
  assert.equal(answer.status, status, `${name(operation)}: ${answer.text}`);
  const documented = documentedErrors(operation, status);
  assert.ok(
    documented.some((example) => JSON.stringify(example) === JSON.stringify(answer.body)),
    `${name(operation)} answered ${answer.text}, which none of its ${status} examples shows: ${JSON.stringify(documented.map((e) => e.message))}`,
  );
}

/** The example's message as a pattern in which each number may differ (limits, seconds to wait). */
const withAnyNumbers = (message: string) =>
  new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\d+/g, "\\d+")}$`);

describe("the OpenAPI document", { timeout: 120_000 }, () => {
  let testDb: TestDb;
  let app: FastifyInstance;
  let api: Client;
  let key: string;
  let deadUrl: string;
  let operations: DocumentedOperation[];
  const day = { from: new Date(Date.now() - 86_400_000), to: new Date() };

  /** The demo's configuration, its node and database pointed at a port where nothing listens. */
  const demoConfig = (env: Record<string, string> = {}) =>
    loadConfig({ file: defaultConfigPath, env: { TOKENMARKET_RPC_31337: deadUrl, ...env } });

  /** A listening server of the demo's configuration over `db`; closed by the caller. */
  const listen = async (config = demoConfig(), db = testDb.db) => {
    const server = createApiServer({ config, db, logger: createSilentLogger(), keyCacheTtlMs: 300 });
    await server.listen({ host: "127.0.0.1", port: 0 });
    return server;
  };

  before(async () => {
    testDb = await createTestDb();
    ({ key } = await createApiKey(testDb.db, "openapi"));
    deadUrl = `http://127.0.0.1:${await freePort()}`;
    app = createApiServer({
      config: demoConfig(),
      db: testDb.db,
      logger: createSilentLogger(),
      // The page, and a page route added later, as `tokenmarket start` registers them.
      extend: (scope) => {
        registerWeb(scope);
        scope.get("/token/:id", async () => "a page");
      },
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    api = await createApiClient(app, { key });
    operations = operationsOf(api.document);
  });
  after(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it("is what the committed web/src/api-types.ts was generated from (npm run gen:api-types)", async () => {
    const live = await liveOpenApiDocument();
    assert.deepEqual(api.document, live, "the served document is the one the generator reads");
    const expected = await apiTypesOf(live);
    const committed = readFileSync(apiTypesFile, "utf8");
    if (committed !== expected) {
      const lines = committed.split("\n");
      const at = expected.split("\n").findIndex((line, i) => line !== lines[i]);
      assert.fail(
        `web/src/api-types.ts is not what the API's document gives (first difference at line ${at + 1}): run \`npm run gen:api-types\` and commit the file`,
      );
    }
  });

  it("gives every operation its own stable camelCase operationId, from OPERATION_IDS", () => {
    const seen = new Map<string, string>();
    for (const operation of operations) {
      const mapped = OPERATION_IDS[name(operation)];
      assert.ok(
        mapped,
        `${name(operation)} has no operationId: add "${name(operation)}": "${suggestedId(operation.method, operation.path)}" (a camelCase verb and what it answers) to OPERATION_IDS in src/api/openapi.ts`,
      );
      assert.equal(operation.operationId, mapped, `${name(operation)} is documented with its mapped id`);
      assert.match(mapped, /^[a-z][A-Za-z0-9]*$/, `${mapped} is camelCase`);
      assert.equal(
        seen.get(mapped),
        undefined,
        `${mapped} names both ${seen.get(mapped)} and ${name(operation)}`,
      );
      seen.set(mapped, name(operation));
    }
    for (const [route, id] of Object.entries(PUBLISHED)) {
      assert.equal(OPERATION_IDS[route], id, `${route} keeps its published operationId ${id}`);
      assert.equal(seen.get(id), route, `${route} is documented as ${id}`);
    }
  });

  it("leaves out the explorer page, its assets and the operational extras, which still answer", async () => {
    const paths = Object.keys(api.document.paths);
    for (const path of paths) {
      assert.ok(DATA_PATH.test(path) || path === "/healthz" || path === "/readyz", `${path} is an API path`);
    }
    for (const hidden of ["/", "/index.html", "/assets/{*}", "/{file}", "/web-config.json", "/token/{id}"]) {
      assert.ok(!paths.includes(hidden), `${hidden} is not in the document`);
    }
    for (const [path, status] of [
      ["/web-config.json", 200],
      ["/token/0xab", 200],
      ["/logos/usdc.svg", 200],
      ["/metrics", 200],
      ["/docs", 200],
    ] as const) {
      assert.equal((await api.get(path, {}, { key: null })).status, status, `${path} is served`);
    }
  });

  it("declares the x-api-key scheme on every data operation, which answers 403 without the key", async () => {
    const components = (api.document as { components?: { securitySchemes?: Record<string, unknown> } })
      .components;
    assert.deepEqual(components?.securitySchemes?.apiKey, {
      type: "apiKey",
      in: "header",
      name: "x-api-key",
      description: "Your API key.",
    });
    for (const operation of operations) {
      const { query } = exampleQuery(operation, day);
      if (!DATA_PATH.test(operation.path)) {
        assert.equal(operation.security, undefined, `${name(operation)} needs no key`);
        assert.notEqual((await api.get(operation.path, query, { key: null })).status, 403);
        continue;
      }
      assert.deepEqual(operation.security, [{ apiKey: [] }], `${name(operation)} declares the key`);
    }
    for (const operation of httpData(operations)) {
      const { query } = exampleQuery(operation, day);
      const none = await api.get(operation.path, query, { key: null });
      assertDocumented(none, operation, 403);
      assert.equal((none.body as ErrorBody).message, "the x-api-key header is required");
      const wrong = await api.get(operation.path, query, { key: "tm_not_a_key_not_a_key_not_a_key_x" });
      assertDocumented(wrong, operation, 403);
      assert.equal((wrong.body as ErrorBody).message, "the API key is unknown or revoked");
    }
  });

  it("gives every error status examples of that status, and every example fits its schema", () => {
    const validator = createOpenApiValidator(api.document);
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const operation of operations) {
      for (const status of errorStatuses(operation)) {
        const examples = examplesOf(jsonOf(operation, status));
        assert.ok(
          examples.length > 0,
          `${name(operation)}: ${status} has no example; give it the route's own message: errorResponses({ ${status}: { description, examples: [{ summary, message }] } })`,
        );
        const isErrorBody =
          (jsonOf(operation, status)?.schema as { $ref?: string })?.$ref === "#/components/schemas/ErrorBody";
        for (const example of examples) {
          validator.check(operation.path, Number(status), example);
          if (!isErrorBody) continue;
          const body = example as ErrorBody;
          assert.equal(
            body.statusCode,
            Number(status),
            `${name(operation)}: a ${status} example shows ${status}`,
          );
          assert.equal(body.error, STATUS_CODES[Number(status)]);
        }
      }
      for (const example of examplesOf(jsonOf(operation, "200")))
        validator.check(operation.path, 200, example);
      for (const parameter of operation.parameters) {
        if (parameter.example === undefined) continue;
        const validate = ajv.compile(parameter.schema ?? {});
        assert.ok(
          validate(parameter.example),
          `${name(operation)}: the example of ${parameter.name} fits its schema: ${ajv.errorsText(validate.errors)}`,
        );
      }
      for (const example of documentedErrors(operation, 500)) {
        if (example.message.startsWith("unexpected processing error")) {
          assert.match(example.message, /^unexpected processing error \(request id [^)]+\)$/);
        }
      }
    }
  });

  it("answers a missing parameter, an unknown id and a node failure as the examples show", async () => {
    let replayed = 0;
    const data = httpData(operations);
    for (const operation of data) {
      const { query } = exampleQuery(operation, day);
      for (const example of documentedErrors(operation, 400)) {
        const missing = /^query parameter (\S+) is required$/.exec(example.message)?.[1];
        if (!missing) continue;
        const { [missing]: _left, ...rest } = query;
        assertDocumented(await api.get(operation.path, rest), operation, 400);
        replayed += 1;
      }
      // An empty database knows none of the example ids: a 404 example naming them is the answer
      // (a 404 for other reasons, an unconfigured network say, must at least be documented).
      if (operation.responses["404"]) {
        const answer = await api.get(operation.path, query);
        const values = Object.values(query).filter((value) => value.length >= 4);
        const named = documentedErrors(operation, 404).some((e) => values.some((v) => e.message.includes(v)));
        if (named || answer.status === 404) {
          assertDocumented(answer, operation, 404);
          replayed += 1;
        }
      }
      // A node that cannot be reached: the 500 of the routes that read one.
      if (documentedErrors(operation, 500).some((e) => !e.message.startsWith("unexpected processing"))) {
        assertDocumented(await api.get(operation.path, query), operation, 500);
        replayed += 1;
      }
    }
    assert.ok(replayed > data.length, `replayed ${replayed} examples`);
  });

  it("answers a key over its rate limit and a flood of wrong keys as the 429 examples show", async () => {
    const config = demoConfig({
      TOKENMARKET__api__rateLimit__max: "1",
      TOKENMARKET__api__rateLimit__store: "memory",
      TOKENMARKET__api__failedKeyLimit__max: "1",
    });
    const limited = await listen(config);
    try {
      const client = await createApiClient(limited, { key });
      const data = httpData(operations);
      await client.get("/v1/coins/price", { symbol: "ETH" });
      for (const operation of data) {
        const answer = await client.get(operation.path, exampleQuery(operation, day).query);
        assert.equal(answer.status, 429, `${name(operation)}: ${answer.text}`);
        const message = (answer.body as ErrorBody).message;
        assert.ok(
          documentedErrors(operation, 429).some((e) => withAnyNumbers(e.message).test(message)),
          `${name(operation)}: "${message}" is worded like a 429 example`,
        );
      }
      const wrong = { key: "tm_not_a_key_not_a_key_not_a_key_y" };
      assert.equal((await client.get("/v1/coins/price", { symbol: "ETH" }, wrong)).status, 403);
      for (const operation of data) {
        const answer = await client.get(operation.path, exampleQuery(operation, day).query, wrong);
        assert.equal(answer.status, 429, `${name(operation)}: ${answer.text}`);
        const message = (answer.body as ErrorBody).message;
        assert.ok(
          documentedErrors(operation, 429).some((e) => withAnyNumbers(e.message).test(message)),
          `${name(operation)}: "${message}" is worded like a 429 example`,
        );
      }
    } finally {
      await limited.close();
    }
  });

  it("answers 503 as the example shows when the database does not answer", async () => {
    const dead = createDb({ url: `postgres://nobody@127.0.0.1:${await freePort()}/none` });
    const server = await listen(demoConfig(), dead);
    try {
      const client = await createApiClient(server, { key });
      for (const operation of httpData(operations)) {
        const answer = await client.get(operation.path, exampleQuery(operation, day).query);
        assertDocumented(answer, operation, 503);
        assert.equal(answer.headers.get("retry-after"), "5");
      }
    } finally {
      await server.close();
      await dead.end();
    }
  });

  it("takes its parameter examples from the demo devnet, so that Try it out answers with data", () => {
    // The demo's node derives its accounts from Hardhat's mnemonic; the deployment's addresses
    // follow from them (planDeployment computes them without a node).
    const accounts = Array.from(
      { length: 30 },
      (_, i) => mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex: i }).address,
    );
    const plan = planDeployment({ chainId: 31337, seed: 42, accounts });
    const known = new Set<string>([
      ...Object.values(plan.tokens).map((t) => t.address),
      ...plan.pools.map((p) => p.address),
      ...plan.accounts.traders,
    ]);
    let checked = 0;
    for (const operation of operations) {
      const { missing } = exampleQuery(operation, day);
      assert.deepEqual(missing, [], `${name(operation)}: every required parameter has an example`);
      for (const parameter of operation.parameters) {
        if (parameter.example === undefined) continue;
        for (const item of String(parameter.example).split(",")) {
          const id = /^(0x[0-9a-f]{40})(?::(\d+))?$/.exec(item.trim());
          if (parameter.name === "chain" || parameter.name === "chains") {
            assert.equal(item, String(plan.chainId), `${name(operation)}: ${parameter.name} is the devnet`);
          }
          if (!id) continue;
          assert.ok(
            known.has(id[1] as string),
            `${name(operation)}: ${item} is a contract or trader of the devnet`,
          );
          if (id[2] !== undefined) assert.equal(Number(id[2]), plan.chainId, `${name(operation)}: ${item}`);
          checked += 1;
        }
      }
    }
    assert.ok(checked >= 10, `${checked} ids checked`);
  });
});
