import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { createTestDb, type TestDb } from "../_test/db.js";
import { fixtureConfig } from "../_test/market-fixture.js";
import { projectRoot } from "../config/load.js";
import { createSilentLogger } from "../internal/logger.js";
import { type ApiContext, createContext, withHeaders } from "./context.js";
import { handleError } from "./error-handler.js";
import { loadProjectInfo } from "./project-info.js";
import { createReadRouter } from "./read-replicas.js";
import { createReadiness } from "./readiness.js";
import { createResponseCache } from "./response-cache.js";
import { ErrorBody, Nullable, ok } from "./schemas.js";

const Holding = ok(
  Type.Object(
    {
      wallet: Type.String(),
      total: Type.Number(),
      price: Nullable(Type.Number()),
      lots: Type.Array(Type.Object({ size: Type.Number() }, { additionalProperties: false })),
    },
    { additionalProperties: false },
  ),
  "A holding.",
);
const Other = ok(Type.Object({ wallet: Type.String() }, { additionalProperties: false }), "Another.");

/**
 * Never run: it only has to compile. Each `@ts-expect-error` line is a payload that disagrees
 * with its schema; if `answer` stopped checking payloads against the schema, the directive would
 * be unused and `npm run typecheck` would fail.
 */
export function typeLevelChecks(ctx: ApiContext, reply: FastifyReply) {
  const options = { schema: Holding, key: "", chains: [] };
  const lots = [{ size: 1 }];
  void ctx.answer(reply, {
    ...options,
    compute: async () => ({ wallet: "0x", total: 1, price: null, lots }),
  });
  void ctx.answer(reply, {
    ...options,
    compute: async () => withHeaders({ wallet: "0x", total: 1, price: 2, lots }, { "x-a": "b" }),
  });
  void ctx.answer(reply, {
    ...options,
    // @ts-expect-error a misspelt field: `totl` instead of `total`
    compute: async () => ({ wallet: "0x", totl: 1, price: null, lots }),
  });
  void ctx.answer(reply, {
    ...options,
    // @ts-expect-error a field of the wrong type: the total as text
    compute: async () => ({ wallet: "0x", total: "1", price: 1, lots }),
  });
  void ctx.answer(reply, {
    ...options,
    // @ts-expect-error null where the schema has a plain number (it would be serialised as 0)
    compute: async () => ({ wallet: "0x", total: null, price: 1, lots }),
  });
  void ctx.answer(reply, {
    ...options,
    // @ts-expect-error a wrong field inside an array item
    compute: async () => ({ wallet: "0x", total: 1, price: 1, lots: [{ sise: 1 }] }),
  });
  void ctx.answer(reply, {
    ...options,
    // @ts-expect-error withHeaders around a payload of another shape
    compute: async () => withHeaders({ wallet: "0x" }, {}),
  });
}

describe("ctx.answer", () => {
  let testDb: TestDb;
  let app: FastifyInstance;

  before(async () => {
    testDb = await createTestDb();
    const config = fixtureConfig();
    const logger = createSilentLogger();
    const reads = createReadRouter({ config, db: testDb.db, logger, listen: false });
    const sync = reads.view;
    const ctx = createContext({
      config,
      db: testDb.db,
      reads,
      logger,
      sync,
      readiness: createReadiness({ config, sync }),
      cache: createResponseCache({ blockOf: sync.blockOf }),
      projectInfo: loadProjectInfo({ config, logger, root: projectRoot }),
      balances: async () => {
        throw new Error("no balances in this test");
      },
      now: () => new Date(),
    });
    app = Fastify();
    app.setErrorHandler(handleError);
    app.addSchema(ErrorBody);
    const payload = { wallet: "0xab", total: 2.5, price: null, lots: [{ size: 2.5 }] };
    app.get("/right", { schema: { response: { 200: Holding } } }, async (_request, reply) =>
      ctx.answer(reply, { schema: Holding, key: "right", chains: [], compute: async () => payload }),
    );
    app.get("/wrong", { schema: { response: { 200: Holding } } }, async (_request, reply) =>
      ctx.answer(reply, { schema: Other, key: "wrong", chains: [], compute: async () => ({ wallet: "0x" }) }),
    );
    await app.ready();
  });

  after(async () => {
    await app?.close();
    await testDb?.drop();
  });

  it("serialises the payload with the route's 200 schema", async () => {
    const answer = await app.inject({ url: "/right" });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.deepEqual(answer.json(), { wallet: "0xab", total: 2.5, price: null, lots: [{ size: 2.5 }] });
  });

  it("refuses a schema that is not the route's 200 response, so the payload's type is the one served", async () => {
    const answer = await app.inject({ url: "/wrong" });
    assert.equal(answer.statusCode, 500, answer.body);
  });
});
