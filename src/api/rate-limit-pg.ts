import type { Logger } from "../internal/logger.js";
import type { Db, Queryable } from "../store/db.js";
import { leaseRateBudget, readRateWindow } from "../store/rate-limits.js";
import {
  type RateLimitCallback as Callback,
  createSharedRateLimitStore,
  storeConstructor,
} from "./rate-limit-store.js";

/** How long a lease may take before the waiting requests are counted locally instead. */
const DEFAULT_TIMEOUT_MS = 500;
/** After the database failed to answer, count locally this long before asking it again. */
const DEFAULT_RETRY_MS = 1000;
/** A key's first lease in a window: this share of its budget (at least one request). */
const FIRST_SLICE = 0.02;
/** A lease never asks for more than this share of the budget, however hot the key. */
const MAX_SLICE = 0.25;
/** The largest budget counted as such (`count` ≤ 2 × budget must fit a Postgres integer). */
const MAX_LIMIT = 1_000_000_000;
/** Keys with lease state kept per process before ended windows are swept. */
const MAX_KEYS = 100_000;

/**
 * The counter's row: the key with its limit, so that processes sharing a database but configured
 * with different limits (a deployment changing its limit, tests) count separate budgets.
 */
const rowKey = (key: string, timeWindow: number, max: number | undefined) =>
  `${key}@${max ?? "?"}/${timeWindow}`;

/** A key's lease in this process, for the current window. */
type Lease = {
  /** The row in `api_rate_limits`. */
  row: string;
  /** Requests of the lease not yet served. */
  remaining: number;
  /** Budget handed out across all processes when this lease was granted (for `current`). */
  taken: number;
  /** End of the window on this process's monotonic clock, never later than the database's. */
  endsAt: number;
  /** The window's budget is spent: refuse until `endsAt` without asking again. */
  spent: boolean;
  /** Next ask; grows while the key is hot here. */
  slice: number;
  /** A lease query is under way: requests wait for it rather than start another. */
  asking: boolean;
  waiting: { callback: Callback; timeWindow: number }[];
};

/**
 * A fixed-window counter store for @fastify/rate-limit kept in Postgres (`api_rate_limits`, on the
 * primary), so one key has one budget across every API process, at the cost of one statement per
 * lease rather than per request: a process takes a slice of a key's window budget (`leaseRateBudget` in src/store/rate-limits.ts),
 * serves requests from it locally, and asks again when it is used up. The first slice of a window
 * is small (2 % of the budget), each further one in the same window twice the last (at most 25 %),
 * and the database never grants more than is left, so the requests allowed by all processes in a
 * window never exceed the limit. A slice still unused when the window ends is lost: that can only
 * make the limit stricter, and a key that left slices unused starts its next window with half the
 * slice. The window is measured by the database's clock; a process ends it locally at the time it
 * sent the lease query plus the remaining time the database answered, which is never later.
 *
 * When the database does not answer (error, or slower than `timeoutMs`) the requests are counted in
 * a per-process in-memory store instead, for `retryMs` before the database is asked again: the
 * limiter never turns a request into a 500, and during the outage each process enforces the limit
 * on its own (at most processes × max per window in all). A warning is logged when that starts and
 * a note when the database counts again.
 */
export function createPostgresRateLimitStore(options: {
  db: Db;
  logger: Logger;
  timeoutMs?: number;
  retryMs?: number;
  now?: () => number;
}) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const now = options.now ?? (() => performance.now());
  const local = new (createSharedRateLimitStore())({});
  const leases = new Map<string, Lease>();
  let degradedUntil = -Infinity;
  let degraded = false;

  const query = async <R extends object>(
    statement: (db: Queryable) => Promise<R | null>,
  ): Promise<R | undefined | null> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const row = await Promise.race([
        statement(options.db),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (degraded) options.logger.info("rate limits are counted in the database again");
      degraded = false;
      return row;
    } catch (error) {
      if (!degraded)
        options.logger.warn(
          { err: error },
          "cannot count rate limits in the database; counting per process until it answers",
        );
      degraded = true;
      degradedUntil = now() + retryMs;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  };

  const sweep = () => {
    const t = now();
    for (const [key, lease] of leases)
      if (lease.endsAt <= t && !lease.asking && lease.waiting.length === 0) leases.delete(key);
    // Still full of live windows: forget the oldest (their unused slices are lost, never added).
    for (const [key, lease] of leases) {
      if (leases.size < MAX_KEYS) break;
      if (!lease.asking && lease.waiting.length === 0) leases.delete(key);
    }
  };

  const firstSlice = (max: number) => Math.max(1, Math.ceil(max * FIRST_SLICE));
  const maxSlice = (max: number) => Math.max(1, Math.ceil(max * MAX_SLICE));

  /** Serves what waits from the lease, or asks for the next one, or refuses when the budget is spent. */
  const drain = (key: string, lease: Lease, max: number) => {
    const t = now();
    if (lease.endsAt <= t && !lease.asking) {
      // A new window: a slice left unused in the last one was too big for this process.
      if (lease.remaining > 0) lease.slice = Math.max(firstSlice(max), Math.ceil(lease.slice / 2));
      lease.remaining = 0;
      lease.spent = false;
    }
    while (lease.waiting.length > 0 && lease.endsAt > t && (lease.remaining > 0 || lease.spent)) {
      const { callback } = lease.waiting.shift() as Lease["waiting"][number];
      const ttl = Math.max(0, Math.round(lease.endsAt - t));
      if (lease.remaining > 0) {
        lease.remaining -= 1;
        callback(null, { current: Math.max(1, lease.taken - lease.remaining), ttl });
      } else callback(null, { current: max + 1, ttl });
    }
    if (lease.waiting.length === 0 || lease.asking) return;
    if (t < degradedUntil) {
      for (const { callback, timeWindow } of lease.waiting.splice(0)) local.incr(key, callback, timeWindow);
      return;
    }
    void ask(key, lease, max);
  };

  const ask = async (key: string, lease: Lease, max: number) => {
    lease.asking = true;
    const timeWindow = (lease.waiting[0] as Lease["waiting"][number]).timeWindow;
    // Enough for every request waiting, within the cap; the database grants at most what is left.
    const want = Math.min(max, Math.max(lease.slice, Math.min(lease.waiting.length, maxSlice(max))));
    const sentAt = now();
    const again = lease.endsAt > sentAt;
    const row = await query((db) => leaseRateBudget(db, { row: lease.row, windowMs: timeWindow, want, max }));
    lease.asking = false;
    if (!row) {
      for (const { callback, timeWindow: w } of lease.waiting.splice(0)) local.incr(key, callback, w);
      return;
    }
    // Nothing of an earlier lease is left here (requests ask only once it is used up or over).
    lease.endsAt = sentAt + Math.max(0, Number(row.ttl));
    lease.remaining = row.granted;
    lease.taken = row.taken;
    lease.spent = row.taken >= max;
    // The last lease was used up within this window: the key is hot here, ask for more next time.
    if (again && row.granted === want) lease.slice = Math.min(maxSlice(max), want * 2);
    drain(key, lease, max);
  };

  return storeConstructor({
    incr(key: string, callback: Callback, timeWindow: number, max?: number) {
      // Beyond a billion a window the limit is no limit; the bound keeps `count` an integer.
      const limit = Math.min(max ?? MAX_LIMIT, MAX_LIMIT);
      const id = rowKey(key, timeWindow, max);
      let lease = leases.get(id);
      if (!lease) {
        if (leases.size >= MAX_KEYS) sweep();
        lease = {
          row: id,
          remaining: 0,
          taken: 0,
          endsAt: -Infinity,
          spent: false,
          slice: firstSlice(limit),
          asking: false,
          waiting: [],
        };
        leases.set(id, lease);
      }
      lease.waiting.push({ callback, timeWindow });
      drain(key, lease, limit);
    },
    read(key: string, callback: Callback, timeWindow: number, max?: number) {
      void query((db) =>
        readRateWindow(db, {
          row: rowKey(key, timeWindow, max),
          windowMs: timeWindow,
          max: Math.min(max ?? MAX_LIMIT, MAX_LIMIT),
        }),
      ).then((row) => {
        if (row === undefined) local.read(key, callback, timeWindow);
        else
          callback(
            null,
            row ? { current: row.count, ttl: Math.max(0, Number(row.ttl)) } : { current: 0, ttl: 0 },
          );
      });
    },
  });
}
