import type { Logger } from "../internal/logger.js";
import type { Db } from "../store/db.js";
import { createSharedRateLimitStore } from "./rate-limit-store.js";

type Result = { current: number; ttl: number };
type Callback = (error: Error | null, result: Result) => void;

/** How long a counter update may take before this request is counted locally instead. */
const DEFAULT_TIMEOUT_MS = 500;

/**
 * The counter's row: the key with its limit, so that processes sharing a database but configured
 * with different limits (a deployment changing its limit, tests) count separate budgets.
 */
const rowKey = (key: string, timeWindow: number, max: number | undefined) =>
  `${key}@${max ?? "?"}/${timeWindow}`;

const NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * A fixed-window counter store for @fastify/rate-limit kept in Postgres (`api_rate_limits`, on the
 * primary), so one key has one budget across every API process: each request is one
 * `INSERT … ON CONFLICT DO UPDATE … RETURNING count`, serialised per key by the row lock, with the
 * window measured by the database's clock (the processes' clocks never disagree about it).
 *
 * When the database does not answer (error, or slower than `timeoutMs`) the request is counted in
 * a per-process in-memory store instead: the limiter never turns a request into a 500, and during
 * the outage each process enforces the limit on its own (at most processes × max per window in
 * all). A warning is logged when that starts and a note when the database counts again.
 */
export function createPostgresRateLimitStore(options: { db: Db; logger: Logger; timeoutMs?: number }) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const local = new (createSharedRateLimitStore())({});
  let degraded = false;

  const query = async (sql: string, params: unknown[]): Promise<Result | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const { rows } = await Promise.race([
        options.db.query<{ count: number; ttl: number }>(sql, params),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (degraded) options.logger.info("rate limits are counted in the database again");
      degraded = false;
      const row = rows[0];
      return row ? { current: row.count, ttl: Math.max(0, Number(row.ttl)) } : { current: 0, ttl: 0 };
    } catch (error) {
      if (!degraded)
        options.logger.warn(
          { err: error },
          "cannot count rate limits in the database; counting per process until it answers",
        );
      degraded = true;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  };

  const store = {
    incr(key: string, callback: Callback, timeWindow: number, max?: number) {
      void query(
        `INSERT INTO api_rate_limits AS r (key, window_start, count) VALUES ($1, ${NOW_MS}, 1)
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN r.window_start + $2 <= EXCLUDED.window_start THEN 1 ELSE r.count + 1 END,
           window_start = CASE WHEN r.window_start + $2 <= EXCLUDED.window_start
             THEN EXCLUDED.window_start ELSE r.window_start END
         RETURNING count, window_start + $2 - ${NOW_MS} AS ttl`,
        [rowKey(key, timeWindow, max), timeWindow],
      ).then((result) => {
        if (result) callback(null, result);
        else local.incr(key, callback, timeWindow);
      });
    },
    read(key: string, callback: Callback, timeWindow: number, max?: number) {
      void query(
        `SELECT count, window_start + $2 - ${NOW_MS} AS ttl FROM api_rate_limits
         WHERE key = $1 AND window_start + $2 > ${NOW_MS}`,
        [rowKey(key, timeWindow, max), timeWindow],
      ).then((result) => {
        if (result) callback(null, result);
        else local.read(key, callback, timeWindow);
      });
    },
    child() {
      return store;
    },
  };
  // @fastify/rate-limit constructs its store with `new`: a constructor that returns this one store.
  return function PostgresStore() {
    return store;
  } as unknown as new (
    params: unknown,
  ) => typeof store;
}
