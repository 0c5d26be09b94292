/**
 * What the tables of per-bucket aggregates share (candles, token_usd_candles, pool_ and
 * token_trade_buckets): a row per (chain, owner, resolution, bucket), its owner a pool or a token,
 * holding the keys of its first and last trade, by which a rollback finds the rows it undoes.
 */
import { chunks, iso, maxOf, minOf, type Queryable } from "./db.js";
import { bulkInsert, type Columns, columnsOf, unnest } from "./unnest.js";

/** A table of per-bucket rows and its owner column (`pool` or `token`). */
export type BucketTable = { table: string; owner: string };

/** Where a row lies: owner, resolution (s) and bucket start (ms). */
export type BucketPlace = { owner: string; resolution: number; bucket: number };

/**
 * Deletes the rows of `owners` that hold a trade with a key above `lastKey` (a rollback removed
 * it); returns where they lay with the key of their first trade, from which they are rebuilt.
 */
export async function deleteBucketRowsAbove(
  db: Queryable,
  chainId: number,
  t: BucketTable,
  owners: readonly string[],
  lastKey: number,
): Promise<(BucketPlace & { firstKey: number })[]> {
  if (owners.length === 0) return [];
  const { rows } = await db.query<{ owner: string; resolution: number; bucket: Date; first_key: number }>(
    `DELETE FROM ${t.table} WHERE chain_id = $1 AND ${t.owner} = ANY($2::text[]) AND last_key > $3
     RETURNING ${t.owner} AS owner, resolution, bucket, first_key`,
    [chainId, [...owners], lastKey],
  );
  return rows.map((r) => ({
    owner: r.owner,
    resolution: r.resolution,
    bucket: r.bucket.getTime(),
    firstKey: r.first_key,
  }));
}

/** A row's place with its owner under the name of the owner column (`pool: …` or `token: …`). */
export type Place<O extends string> = Record<O, string> & { resolution: number; bucket: number };

/** The columns of a row's place: its owner (as column `owner`), resolution and bucket. */
export const placeColumns = <O extends string>(owner: O) =>
  columnsOf<Place<O>>({
    [owner]: ["text", (k) => k[owner]],
    resolution: ["int", (k) => k.resolution],
    bucket: ["timestamptz", (k) => new Date(k.bucket)],
  });

/** A candle's price fields (OHLC) and those with its volume (OHLCV): the stems of its column names. */
export const OHLC = ["open", "high", "low", "close"] as const;
export const OHLCV = [...OHLC, "volume"] as const;

/** The float8 columns `${field}${suffix}` of `fields`, a row's value of each given by `value`. */
export function float8Columns<R, F extends string>(
  fields: readonly F[],
  suffix: string,
  value: (row: R, field: F) => number | null,
): Columns<R> {
  return Object.fromEntries(
    fields.map((field) => [`${field}${suffix}`, ["float8", (row: R) => value(row, field)] as const]),
  );
}

/**
 * The keyed reads, replacing writes and rollback deletes of one per-bucket table whose rows (R,
 * read as DbRow through `select`, of table alias `c`) carry their place under the owner column's
 * own name. `columns`: the rows' columns besides their place.
 */
export function bucketRows<
  O extends string,
  R extends Place<O>,
  DbRow extends Record<string, unknown>,
>(spec: { table: string; owner: O; columns: Columns<R>; select: string; rowOf: (row: DbRow) => R }) {
  const keyColumns = placeColumns(spec.owner);
  const columns = columnsOf<R>({ ...keyColumns, ...spec.columns });
  return {
    /**
     * The stored rows at the given places. The statement's bucket bounds (the chunk's earliest
     * and latest) let the planner keep only the partitions of those weeks.
     */
    async load(db: Queryable, chainId: number, keys: readonly Place<O>[]): Promise<R[]> {
      const out: R[] = [];
      for (const part of chunks(keys)) {
        const buckets = part.map((key) => key.bucket);
        const k = unnest("k", keyColumns, part, 4);
        const { rows } = await db.query<DbRow>(
          `SELECT ${spec.select}
           FROM ${k.sql}
           JOIN ${spec.table} c ON c.chain_id = $1 AND c.${spec.owner} = k.${spec.owner}
             AND c.resolution = k.resolution AND c.bucket = k.bucket AND c.bucket >= $2 AND c.bucket <= $3`,
          [chainId, iso(minOf(buckets)), iso(maxOf(buckets)), ...k.params],
        );
        out.push(...rows.map(spec.rowOf));
      }
      return out;
    },
    /** Inserts rows, or replaces the stored ones at their places. */
    async save(db: Queryable, chainId: number, rows: readonly R[]): Promise<void> {
      const replaceOn = [spec.owner, "resolution", "bucket"];
      await bulkInsert(db, { table: spec.table, chainId, columns, replaceOn }, rows);
    },
    /** deleteBucketRowsAbove, the owner of each deleted row under the owner column's name. */
    async deleteAbove(
      db: Queryable,
      chainId: number,
      owners: readonly string[],
      lastKey: number,
    ): Promise<(Place<O> & { firstKey: number })[]> {
      const deleted = await deleteBucketRowsAbove(db, chainId, spec, owners, lastKey);
      return deleted.map(
        ({ owner, ...rest }) => ({ [spec.owner]: owner, ...rest }) as Place<O> & { firstKey: number },
      );
    },
  };
}
