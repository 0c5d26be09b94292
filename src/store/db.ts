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

/** Opens a connection pool to a Postgres database. */
export function createDb(options: {
  url: string;
  max?: number;
  applicationName?: string;
  /** Gives up connecting after this long (ms); default: wait as long as the OS does. */
  connectTimeoutMs?: number;
}): Db {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? "tokenmarket",
    types,
    ...(options.connectTimeoutMs !== undefined ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
  });
  // An idle client's error (the server went away) must not crash the process; the next query fails instead.
  pool.on("error", () => {});
  return pool;
}

/** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(db: Db, fn: (client: DbClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
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
