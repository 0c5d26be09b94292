import type { FastifyInstance } from "fastify";
import { type ApiServerOptions, createApiServer } from "../api/server.js";
import { createSilentLogger } from "../internal/logger.js";
import { createTestDb, type TestDb } from "./db.js";
import { baseOf } from "./http-client.js";
import { blockTime, fixture, fixtureConfig, loadMarketFixture } from "./market-fixture.js";

export type FixtureApi = Awaited<ReturnType<typeof startFixtureApi>>;

/**
 * An API server over a fresh test database holding the market fixture (market-fixture.ts),
 * listening on a free local port, with `fixtureConfig(config)` and its clock at the fixture's
 * indexed block; `server` adds or replaces server options once the fixture is loaded.
 * Whatever started is stopped again if a later step fails.
 */
export async function startFixtureApi(
  config: Record<string, unknown> = {},
  server: (testDb: TestDb) => Partial<ApiServerOptions> | Promise<Partial<ApiServerOptions>> = () => ({}),
) {
  const testDb = await createTestDb();
  let app: FastifyInstance | undefined;
  const close = async () => {
    await app?.close();
    await testDb.drop();
  };
  try {
    const keys = await loadMarketFixture(testDb.db);
    const created = createApiServer({
      config: fixtureConfig(config),
      db: testDb.db,
      logger: createSilentLogger(),
      now: () => blockTime(fixture.indexedBlock),
      ...(await server(testDb)),
    });
    app = created;
    await created.listen({ host: "127.0.0.1", port: 0 });
    // `key` and `revokedKey` are the fixture's; close() stops the server and drops the database.
    return { testDb, app: created, base: baseOf(created), ...keys, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
