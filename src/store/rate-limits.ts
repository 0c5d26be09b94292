/**
 * Table `api_rate_limits` (UNLOGGED, on the primary): per key and window, the share of the window's
 * budget handed out to API processes (src/api/rate-limit-pg.ts takes it in leases).
 */
import type { Queryable } from "./db.js";

const NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * One lease: take up to $3 requests of the key's window budget $4 in one statement. `count` is
 * what has been asked for in the window, capped at budget + this ask: a ask made when the budget
 * is spent leaves `count - $3 >= $4`, so the grant `least($3, $4 - (count - $3))` is 0, and a ask
 * made with `left` still free leaves `count - $3 = old count < $4`, so the grant is
 * `least($3, left)`. Postgres before 18 cannot return the old row, hence this encoding; the cap
 * keeps `count` within an integer (≤ 2 × max). A row written by the per-request statement of
 * earlier versions (count = requests allowed or refused) reads the same way.
 */
const LEASE_SQL = `INSERT INTO api_rate_limits AS r (key, window_start, count) VALUES ($1, ${NOW_MS}, $3)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN r.window_start + $2 <= EXCLUDED.window_start THEN EXCLUDED.count
      ELSE least(r.count + EXCLUDED.count, $4 + EXCLUDED.count) END,
    window_start = CASE WHEN r.window_start + $2 <= EXCLUDED.window_start
      THEN EXCLUDED.window_start ELSE r.window_start END
  RETURNING greatest(0, least($3, $4 - (count - $3)))::integer AS granted,
    least(count, $4)::integer AS taken, window_start + $2 - ${NOW_MS} AS ttl`;

/** Takes up to `want` requests of a key's window budget `max`; what was granted, handed out in all, and the window's time left (ms). */
export async function leaseRateBudget(
  db: Queryable,
  lease: { row: string; windowMs: number; want: number; max: number },
): Promise<{ granted: number; taken: number; ttl: string | number } | null> {
  const { rows } = await db.query<{ granted: number; taken: number; ttl: string | number }>(LEASE_SQL, [
    lease.row,
    lease.windowMs,
    lease.want,
    lease.max,
  ]);
  return rows[0] ?? null;
}

/** How much of a key's current window budget is handed out, and the window's time left (ms); null outside a window. */
export async function readRateWindow(
  db: Queryable,
  window: { row: string; windowMs: number; max: number },
): Promise<{ count: number; ttl: string | number } | null> {
  const { rows } = await db.query<{ count: number; ttl: string | number }>(
    `SELECT least(count, $3) AS count, window_start + $2 - ${NOW_MS} AS ttl FROM api_rate_limits
     WHERE key = $1 AND window_start + $2 > ${NOW_MS}`,
    [window.row, window.windowMs, window.max],
  );
  return rows[0] ?? null;
}
