/**
 * Tables `pool_trade_buckets` and `token_trade_buckets`: each pool's and token's trades per minute
 * and per hour (exact USD volume, counts, first and last trade, opening and closing price), what
 * the market windows are summed from.
 */
import type { BucketPartial } from "../model/index.js";
import { type BucketPlace, deleteBucketRowsAbove, placeColumns } from "./bucket-rows.js";
import type { Queryable } from "./db.js";
import { columnsOf, writeChunks } from "./unnest.js";

export type BucketKind = "pool" | "token";

/** Table and column names per kind (the owner is a pool or a token; prices are the pool's or USD). */
export const BUCKET_TABLES = {
  pool: { table: "pool_trade_buckets", owner: "pool", open: "open_price", close: "close_price" },
  token: { table: "token_trade_buckets", owner: "token", open: "open_usd", close: "close_usd" },
} as const;

const PARTIAL_COLUMNS = columnsOf<BucketPartial>({
  ...placeColumns("owner"),
  volume: ["text", (p) => p.volumeUsd],
  trades: ["int", (p) => p.trades],
  buys: ["int", (p) => p.buys],
  first_key: ["bigint", (p) => p.firstKey],
  last_key: ["bigint", (p) => p.lastKey],
  first_time: ["timestamptz", (p) => new Date(p.firstTime)],
  open: ["float8", (p) => p.open],
  close: ["float8", (p) => p.close],
});

/**
 * Adds trades to their buckets: a new bucket is inserted, an existing one grows (exact volume sum
 * in numeric, counts added, the close replaced). A partial whose first trade is not after the
 * bucket's last one is already in it (the same blocks seen twice) and changes nothing. Returns the
 * number of rows written.
 */
export async function addToBuckets(
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  partials: readonly BucketPartial[],
): Promise<number> {
  const t = BUCKET_TABLES[kind];
  return writeChunks(
    db,
    chainId,
    PARTIAL_COLUMNS,
    partials,
    (r) => `INSERT INTO ${t.table} AS b (chain_id, ${t.owner}, resolution, bucket, volume_usd, trades, buys,
         first_key, last_key, first_time, ${t.open}, ${t.close})
       SELECT $1, r.owner, r.resolution, r.bucket, r.volume::numeric, r.trades, r.buys,
         r.first_key, r.last_key, r.first_time, r.open, r.close
       FROM ${r}
       ON CONFLICT (chain_id, ${t.owner}, resolution, bucket) DO UPDATE SET
         volume_usd = trim_scale(b.volume_usd + EXCLUDED.volume_usd),
         trades = b.trades + EXCLUDED.trades,
         buys = b.buys + EXCLUDED.buys,
         last_key = EXCLUDED.last_key,
         ${t.open} = COALESCE(b.${t.open}, EXCLUDED.${t.open}),
         ${t.close} = COALESCE(EXCLUDED.${t.close}, b.${t.close})
       WHERE EXCLUDED.first_key > b.last_key`,
  );
}

/**
 * Deletes the buckets of `owners` that hold a trade with a key above `lastKey` (a rollback removed
 * it); returns them with the key of their first trade, from which they are rebuilt.
 */
export const deleteBucketsAbove = (
  db: Queryable,
  chainId: number,
  kind: BucketKind,
  owners: readonly string[],
  lastKey: number,
): Promise<(BucketPlace & { firstKey: number })[]> =>
  deleteBucketRowsAbove(db, chainId, BUCKET_TABLES[kind], owners, lastKey);
