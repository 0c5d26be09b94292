import * as assert from "node:assert/strict";
import type { FastifyInstance } from "fastify";
import { createApiServer } from "../api/server.js";
import type { Config } from "../config/schema.js";
import { createSilentLogger } from "../internal/logger.js";
import { createApiKey } from "../store/api-keys.js";
import type { Db } from "../store/db.js";
import { createApiClient } from "./http-client.js";

/** What a database answers over HTTP: the body of a 200 answer (any other status fails the test). */
export type AnswerOf = (
  path: string,
  query: Record<string, string | number>,
) => Promise<Record<string, unknown>[]>;

/**
 * API servers made on demand, to compare what databases answer: no answer cache, a key of each
 * server's own. close() closes every one (in the after hook).
 */
export function createAnswerServers(config: () => Config): {
  serve(db: Db): Promise<AnswerOf>;
  close(): Promise<void>;
} {
  const apps: FastifyInstance[] = [];
  return {
    async serve(db) {
      // Active key names are unique: one name per server made here.
      const { key } = await createApiKey(db, `answers-${apps.length}`);
      const app = createApiServer({
        config: config(),
        db,
        logger: createSilentLogger(),
        answerCacheTtlMs: 0,
      });
      apps.push(app);
      await app.listen({ host: "127.0.0.1", port: 0 });
      const api = await createApiClient(app, { key });
      return async (path, query) => {
        const answer = await api.get(path, query);
        assert.equal(answer.status, 200, `${path}: ${answer.text}`);
        return answer.body as Record<string, unknown>[];
      };
    },
    close: async () => {
      for (const app of apps) await app.close();
    },
  };
}
