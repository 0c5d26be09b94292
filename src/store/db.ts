import pg from "pg";

export type Db = pg.Pool;
export type DbClient = pg.PoolClient;
export type Queryable = pg.Pool | pg.PoolClient;

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const TIMESTAMPTZ_OID = 1184;

/**
 * Type parsers of this project's pools: int8 (block numbers, ids) → number, which is exact below
 * 2^53; numeric (raw amounts) stays a string for BigInt(); timestamptz → Date.
 */
const types = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === INT8_OID) return (value: string) => Number(value);
    if (oid === NUMERIC_OID) return (value: string) => value;
    if (oid === TIMESTAMPTZ_OID) return (value: string) => new Date(value);
    return pg.types.getTypeParser(oid, format as "text");
  }) as typeof pg.types.getTypeParser,
};

/** Bounds of every wait on the database (ms); 0 turns one off. */
export type DbTimeouts = {
  /** Connecting, up to the server's first ReadyForQuery (a frozen server accepts TCP but never answers). */
  connectTimeoutMs: number;
  /** Server-side `statement_timeout`: the server cancels a statement running longer. */
  statementTimeoutMs: number;
  /** Server-side `idle_in_transaction_session_timeout`: a transaction left open this long is ended. */
  idleInTransactionTimeoutMs: number;
  /**
   * Client-side bound of one query, for when the server cannot cancel anything (frozen, network
   * gone): the query fails and its connection is dropped from the pool. Default: the statement
   * timeout plus 5 s, so the server's own cancellation comes first when the server is alive.
   */
  queryTimeoutMs?: number;
};

/** Defaults of the indexer's and the command line's pools (docs: the `database` configuration). */
export const defaultDbTimeouts: DbTimeouts = {
  connectTimeoutMs: 5000,
  statementTimeoutMs: 300_000,
  idleInTransactionTimeoutMs: 60_000,
};

/**
 * The instant (ms since the epoch) by which a piece of work must have its database answers: an
 * API request's `api.databaseTimeoutMs` from its arrival. Given to checkOut (and so to a read
 * snapshot), it bounds every wait of that work: for a connection, then each query on it gets at
 * most the time left, so a request's waits together stay within the one bound instead of each
 * having it in full (a frozen server made a request wait for a connection, then for its query:
 * twice the bound). It is passed explicitly rather than through an AsyncLocalStorage, whose
 * promise hooks (Node 20) cost every promise in the process while any request is in flight.
 */
export type Deadline = number;

/** Milliseconds left until `at` (Infinity without one; at least 1 with one). */
function timeLeft(at: Deadline | undefined): number {
  return at === undefined ? Number.POSITIVE_INFINITY : Math.max(1, at - Date.now());
}

/** Opens a connection pool to a Postgres database; every wait on it is bounded by `timeouts`. */
export function createDb(options: {
  url: string;
  max?: number;
  applicationName?: string;
  timeouts?: Partial<DbTimeouts>;
}): Db {
  const t = { ...defaultDbTimeouts, ...options.timeouts };
  const queryTimeout = t.queryTimeoutMs ?? (t.statementTimeoutMs > 0 ? t.statementTimeoutMs + 5000 : 0);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? "tokenmarket",
    types,
    connectionTimeoutMillis: t.connectTimeoutMs,
    statement_timeout: t.statementTimeoutMs,
    idle_in_transaction_session_timeout: t.idleInTransactionTimeoutMs,
    // A server that vanished without closing the connection is noticed by the kernel.
    keepAlive: true,
    Client: boundClient(queryTimeout),
  });
  // An idle client's error (the server went away) must not crash the process; the next query fails instead.
  pool.on("error", () => {});
  return pool;
}

/**
 * A connection of `pool`, the wait for it ended at `at` with pg-pool's "timeout exceeded when
 * trying to connect" if it is not over by then; a connection handed out after that goes back to
 * the pool.
 */
function connectBy(pool: pg.Pool, at: Deadline): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(new Error("timeout exceeded when trying to connect"));
    }, timeLeft(at));
    pool.connect((error, client, release) => {
      if (settled) {
        if (client) release(error);
        return;
      }
      settled = true;
      clearTimeout(timer);
      if (error || !client) reject(error ?? new Error("no connection"));
      else resolve(client);
    });
  });
}

/** The deadline of a checked-out client's work (checkOut sets it, its release clears it). */
const DEADLINE = Symbol("deadline");
type WithDeadline = { [DEADLINE]?: Deadline | undefined };

/**
 * node-pg's Client whose queries take their callback when they are created and are bounded by
 * `timeoutMs` (0: unbounded; a query config's own `query_timeout` comes first; while the client
 * is checked out with a deadline, no longer than the time it has left). The pool makes its connections of
 * this class (pg-pool's `Client` option).
 *
 * node-pg's promise form (`client.query(text)` without a callback) and its `query_timeout` both
 * give a query its callback after the query object is made. Every such query's rows then
 * outlived two young-generation collections in V8 and were moved to the old generation, where
 * only a full collection frees them. Measured with 600 reads of 100 rows through one client:
 * scavenges of 5-25 ms against 0.1-0.7 ms, 1.3 against 0.74 ms a read, and a heap that grew
 * until a full collection (BENCHMARKS.md, "Scale"). With the callback given up front, nothing of
 * a read survives it.
 *
 * On expiry the query fails with "Query read timeout" (a pooled query's client is then released
 * with the error, so dropped; a checked-out client is released with the error by its holder, see
 * checkOut). A query not sent yet is never sent: when its turn comes, its submit answers the
 * error instead, which node-pg takes as the query's failure before sending, and goes on with the
 * next one. Cursors and other submittable queries pass through unchanged.
 */
function boundClient(timeoutMs: number): typeof pg.Client {
  return class BoundClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const submit = pg.Client.prototype.query.bind(this) as (...args: unknown[]) => unknown;
      const query = (config: unknown, values?: unknown, callback?: unknown): unknown => {
        if (typeof values === "function") return query(config, undefined, values);
        if (typeof (config as { submit?: unknown } | null)?.submit === "function") {
          return submit(config, values, callback);
        }
        const own = (config as { query_timeout?: unknown } | null)?.query_timeout;
        const left = timeLeft((this as WithDeadline)[DEADLINE]);
        const bound = typeof own === "number" ? own : timeoutMs;
        // Checked out with a deadline: no longer than the time it has left.
        const ms = Number.isFinite(left) ? (bound > 0 ? Math.min(bound, left) : left) : bound;
        if (typeof callback === "function") {
          submit(boundedQuery(config, values, callback as QueryCallback, ms));
          return undefined;
        }
        return new Promise((resolve, reject) =>
          submit(
            boundedQuery(config, values, (error, result) => (error ? reject(error) : resolve(result)), ms),
          ),
        ).catch((error: unknown) => {
          // As node-pg does: the stack of the caller's await, not of the socket's read.
          if (error instanceof Error) Error.captureStackTrace(error);
          throw error;
        });
      };
      this.query = query as typeof this.query;
    }
  };
}

type QueryCallback = (error: Error | undefined, result?: pg.QueryResult) => void;

/** `config` as a query with `done` as its callback from the start, failed after `ms` (0: never). */
function boundedQuery(config: unknown, values: unknown, done: QueryCallback, ms: number): pg.Query {
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  let expired = false;
  const made = new pg.Query(
    config as pg.QueryConfig,
    values as unknown[] | undefined,
    (error: Error | undefined, result: pg.QueryResult) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      done(error, result);
    },
  );
  if (ms > 0) {
    timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      expired = true;
      done(new Error("Query read timeout"));
    }, ms);
    // Its turn came after its bound expired: not sent. node-pg fails a query whose submit returns
    // an error (as its own checks before sending do) and goes on with the next one.
    const send = made.submit.bind(made) as (connection: unknown) => Error | null;
    (made as unknown as { submit: typeof send }).submit = (connection) =>
      expired ? new Error("Query read timeout") : send(connection);
  }
  return made;
}

/**
 * A client checked out of the pool, with a listener for its errors until it is released. The
 * pool listens to an idle client's errors only: a connection lost between two statements of a
 * checked-out client (the server restarted, a backend terminated, EPIPE) would otherwise be an
 * unhandled 'error' event that ends the process. Kept as `failure()`, the next statement fails
 * anyway, and the client is dropped rather than pooled when released. With a `deadline`, the
 * wait for the connection and every query on it until its release end by then.
 */
export async function checkOut(
  db: Db,
  deadline?: Deadline,
): Promise<{
  client: DbClient;
  failure(): Error | undefined;
  release(error?: Error): void;
}> {
  const client = deadline === undefined ? await db.connect() : await connectBy(db, deadline);
  (client as WithDeadline)[DEADLINE] = deadline;
  let failed: Error | undefined;
  const onError = (error: Error) => {
    failed ??= error;
  };
  client.on("error", onError);
  return {
    client,
    failure: () => failed,
    release: (error) => {
      (client as WithDeadline)[DEADLINE] = undefined;
      client.off("error", onError);
      client.release(error ?? failed);
    },
  };
}

/**
 * Runs `fn` on a connection of `db` checked out with `deadline` (checkOut). A connection whose
 * work failed is dropped rather than pooled: a statement that timed out may still be running on it.
 */
export async function withConnection<T>(
  db: Db,
  deadline: Deadline | undefined,
  fn: (client: DbClient) => Promise<T>,
): Promise<T> {
  const checkedOut = await checkOut(db, deadline);
  try {
    const value = await fn(checkedOut.client);
    checkedOut.release();
    return value;
  } catch (error) {
    checkedOut.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(db: Db, fn: (client: DbClient) => Promise<T>): Promise<T> {
  const checkedOut = await checkOut(db);
  const { client } = checkedOut;
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    // A connection that cannot even roll back (timed out, server gone) is dropped, not pooled.
    broken = await client.query("ROLLBACK").then(
      () => undefined,
      (rollbackError: unknown) =>
        rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)),
    );
    throw error;
  } finally {
    checkedOut.release(broken);
  }
}

const unavailableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "57014", // query_canceled (statement_timeout)
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

/**
 * True when `error` says the database could not answer (timed out, unreachable, restarting),
 * as opposed to a fault of the query: the API answers such errors with a 503 and Retry-After.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && unavailableCodes.has(code)) return true;
    if (
      /Query read timeout|timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error/i.test(
        e.message,
      )
    ) {
      return true;
    }
  }
  return false;
}

/** Rows per statement of the batched unnest(…) writes. */
const CHUNK = 5000;

/** Splits rows into statements of at most `size` rows each. */
export function chunks<T>(rows: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** A bigint as a numeric query parameter (text); null stays null. */
export const toNumeric = (v: bigint | null): string | null => (v === null ? null : v.toString());

/** A numeric column (parsed to a string by this project's type parsers) as a bigint; null stays null. */
export const fromNumeric = (v: string | null | undefined): bigint | null =>
  v === null || v === undefined ? null : BigInt(v);

/** The least of `values` (non-empty; no spread, which overflows the stack on large arrays). */
export function minOf(values: readonly number[]): number {
  let min = Number.POSITIVE_INFINITY;
  for (const v of values) if (v < min) min = v;
  return min;
}

/** The greatest of `values` (non-empty). */
export function maxOf(values: readonly number[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) if (v > max) max = v;
  return max;
}

/** A time in ms as a timestamptz parameter. */
export const iso = (ms: number): string => new Date(ms).toISOString();
