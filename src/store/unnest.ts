/**
 * Batched writes and keyed reads send rows as one array parameter per column and unpack them
 * with `unnest($2::text[], $3::bigint[], …)`: one statement for thousands of rows. These helpers
 * number the placeholders and write the casts from a typed column list, so no statement counts
 * `$n` by hand.
 */
import { chunks, type Queryable } from "./db.js";

/** The Postgres element types of the unnested columns, with the JS value each takes. */
type PgValue = {
  text: string | null;
  smallint: number | null;
  int: number | null;
  bigint: number | null;
  /** Raw on-chain amounts: sent as decimal text. */
  numeric: bigint | null;
  /** Exact decimals (numeric, `decimal` is its alias), given as their decimal text. */
  decimal: string | null;
  float8: number | null;
  /** Sent as ISO 8601. */
  timestamptz: Date | null;
};
export type PgType = keyof PgValue;

/** One column of the rows: its Postgres type and how to read it from a row. */
export type Column<R> = { [T in PgType]: readonly [type: T, value: (row: R) => PgValue[T]] }[PgType];

/** Columns by name (in order); the names are those of the unnest alias and, for bulkInsert, of the table. */
export type Columns<R> = Readonly<Record<string, Column<R>>>;

/** Declares the columns of rows of type R (the type parameter checks each value against its Postgres type). */
export const columnsOf = <R>(columns: Columns<R>): Columns<R> => columns;

/** A text element of an array literal: always quoted, its backslashes and double quotes escaped. */
const quoted = (text: string): string =>
  `"${text.includes("\\") || text.includes('"') ? text.replace(/[\\"]/g, "\\$&") : text}"`;

/** One element of a column's array literal (`NULL` for null). */
function element(type: PgType, value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  switch (type) {
    case "text":
      return quoted(value as string);
    case "timestamptz":
      return (value as Date).toISOString();
    default:
      // Numbers (shortest round-trip digits, which float8 reads back exactly; NaN and
      // ±Infinity as Postgres spells them) and bigints (numeric): unquoted decimal text.
      return String(value);
  }
}

/**
 * A column's values as one Postgres array literal (`{1,NULL,"a\"b"}`): what node-pg would make of
 * the JS array, each element written once and joined, without node-pg's array of prepared values
 * and its escaping of every element.
 */
function arrayLiteral<R>(type: PgType, value: (row: R) => unknown, rows: readonly R[]): string {
  const elements = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) elements[i] = element(type, value(rows[i] as R));
  return `{${elements.join(",")}}`;
}

/**
 * `unnest($first::type[], …) AS alias(name, …)` over `rows`, with its parameters (one array
 * literal per column, in order). Placeholders start at `first`: the statement's own parameters
 * come before.
 */
export function unnest<R>(
  alias: string,
  columns: Columns<R>,
  rows: readonly R[],
  first: number,
): { sql: string; params: string[] } {
  const entries = Object.entries(columns);
  const arrays = entries.map(([, [type]], i) => `$${first + i}::${type}[]`).join(", ");
  const names = entries.map(([name]) => name).join(", ");
  return {
    sql: `unnest(${arrays}) AS ${alias}(${names})`,
    params: entries.map(([, [type, value]]) => arrayLiteral(type, value as (row: R) => unknown, rows)),
  };
}

/** `a = EXCLUDED.a, b = EXCLUDED.b, …`: the SET list of an upsert that replaces these columns. */
export const setExcluded = (...names: string[]): string =>
  names.map((name) => `${name} = EXCLUDED.${name}`).join(", ");

/**
 * Runs a statement of a chain's rows for every 5000 of them: `statement` is given the unnest of
 * the chunk's columns as `r` (placeholders from $2 on; $1 is the chain id). Returns the number of
 * rows the statements wrote.
 */
export async function writeChunks<R>(
  db: Queryable,
  chainId: number,
  columns: Columns<R>,
  rows: readonly R[],
  statement: (unnested: string) => string,
): Promise<number> {
  let written = 0;
  for (const part of chunks(rows)) {
    const r = unnest("r", columns, part, 2);
    const result = await db.query(statement(r.sql), [chainId, ...r.params]);
    written += result.rowCount ?? 0;
  }
  return written;
}

/**
 * Inserts rows of a chain into `table`, at most 5000 per statement:
 * `INSERT INTO table (chain_id, columns…, computed…) SELECT $1, r.columns…, computed… FROM unnest(…) AS r(…) tail`.
 * `computed`: columns set from SQL expressions (of the unnested row `r`, or now()). `replaceOn`:
 * the conflict key after chain_id; a row whose key is stored replaces every other column of it.
 * `tail`: the ON CONFLICT (without `replaceOn`) and RETURNING clauses. Returns the RETURNING rows
 * of every statement.
 */
export async function bulkInsert<R, Returned = Record<string, unknown>>(
  db: Queryable,
  statement: {
    table: string;
    chainId: number;
    columns: Columns<R>;
    computed?: Readonly<Record<string, string>>;
    replaceOn?: readonly string[];
    tail?: string;
  },
  rows: readonly R[],
): Promise<Returned[]> {
  const computed = Object.entries(statement.computed ?? {});
  const names = [...Object.keys(statement.columns), ...computed.map(([name]) => name)];
  const values = [
    ...Object.keys(statement.columns).map((name) => `r.${name}`),
    ...computed.map(([, sql]) => sql),
  ];
  const key = statement.replaceOn;
  const replace = key
    ? `ON CONFLICT (chain_id, ${key.join(", ")}) DO UPDATE SET ${setExcluded(...names.filter((name) => !key.includes(name)))}`
    : "";
  const out: Returned[] = [];
  for (const part of chunks(rows)) {
    const u = unnest("r", statement.columns, part, 2);
    const result = await db.query(
      `INSERT INTO ${statement.table} (chain_id, ${names.join(", ")})
       SELECT $1, ${values.join(", ")} FROM ${u.sql} ${replace} ${statement.tail ?? ""}`,
      [statement.chainId, ...u.params],
    );
    out.push(...(result.rows as Returned[]));
  }
  return out;
}
