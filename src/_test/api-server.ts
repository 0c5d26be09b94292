import type { FastifyInstance } from "fastify";
import { type ApiServerOptions, createApiServer } from "../api/server.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import { createTestDb } from "./db.js";
import { createApiClient } from "./http-client.js";
import { type Pipeline, startPipeline } from "./pipeline.js";

export type ApiClient = Awaited<ReturnType<typeof createApiClient>>;

/** An API server listening on a free local port, and a client of it sending `key`. */
export async function listenApi(
  options: ApiServerOptions,
  key?: string,
): Promise<{ app: FastifyInstance; api: ApiClient }> {
  const app = createApiServer(options);
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    return { app, api: await createApiClient(app, { key }) };
  } catch (error) {
    await app.close();
    throw error;
  }
}

export type ApiPipeline = Awaited<ReturnType<typeof startApiPipeline>>;

/**
 * The devnet pipeline (simulated trading on the real contracts, indexed and priced into a fresh
 * test database) served by a listening API server with the pipeline's configuration and a silent
 * logger. Whatever started is stopped again if a later step fails.
 */
export async function startApiPipeline(options: {
  keyName: string;
  pipeline?: Omit<Parameters<typeof startPipeline>[0], "db">;
  /** Runs once the pipeline is up, before the server is made. */
  ready?: (pipeline: Pipeline) => Promise<void>;
  /** More server options, or other ones than the pipeline's configuration. */
  server?: (pipeline: Pipeline) => Partial<ApiServerOptions>;
}) {
  const testDb = await createTestDb({ max: 10 });
  let pipeline: Pipeline | undefined;
  let app: FastifyInstance | undefined;
  const close = async () => {
    await app?.close();
    await pipeline?.close();
    await testDb.drop();
  };
  try {
    const started = await startPipeline({ ...options.pipeline, db: testDb.db });
    pipeline = started;
    await options.ready?.(started);
    const { key } = await createApiKey(testDb.db, options.keyName);
    const served = await listenApi(
      { config: started.config, db: testDb.db, logger: createSilentLogger(), ...options.server?.(started) },
      key,
    );
    app = served.app;
    // `api` holds a fresh key; close() stops the server and the pipeline and drops the database.
    return { testDb, pipeline: started, api: served.api, key, close };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
