/**
 * Tables `pool_makers` and `token_makers`: each maker's (transaction sender's) latest trade per
 * pool and per token. The makers of a window are the rows whose latest trade lies in it.
 */
import type { MakerLast } from "../model/index.js";
import { chunks, iso, type Queryable } from "./db.js";
import { columnsOf, writeChunks } from "./unnest.js";

export type MakerKind = "pool" | "token";

export const MAKER_TABLES = {
  pool: { table: "pool_makers", owner: "pool" },
  token: { table: "token_makers", owner: "token" },
} as const;

const MAKER_COLUMNS = columnsOf<MakerLast>({
  owner: ["text", (m) => m.owner],
  maker: ["text", (m) => m.maker],
  last_time: ["timestamptz", (m) => new Date(m.time)],
  last_block: ["bigint", (m) => m.block],
});

/**
 * Writes makers' latest trades; `forwardOnly`: a stored row only moves to a later block. Returns
 * the rows written.
 */
const upsertMakerLasts = (
  db: Queryable,
  chainId: number,
  kind: MakerKind,
  lasts: readonly MakerLast[],
  forwardOnly: boolean,
): Promise<number> => {
  const t = MAKER_TABLES[kind];
  return writeChunks(
    db,
    chainId,
    MAKER_COLUMNS,
    lasts,
    (r) => `INSERT INTO ${t.table} AS m (chain_id, ${t.owner}, maker, last_time, last_block)
       SELECT $1, r.owner, r.maker, r.last_time, r.last_block FROM ${r}
       ON CONFLICT (chain_id, ${t.owner}, maker) DO UPDATE SET
         last_time = EXCLUDED.last_time, last_block = EXCLUDED.last_block
       ${forwardOnly ? "WHERE EXCLUDED.last_block >= m.last_block" : ""}`,
  );
};

/** Records makers' latest trades; a row only moves forward (a later block). Returns the rows written. */
export const saveMakerLasts = (
  db: Queryable,
  chainId: number,
  kind: MakerKind,
  lasts: readonly MakerLast[],
) => upsertMakerLasts(db, chainId, kind, lasts, true);

/**
 * The rows of `owners` whose latest trade is above `ancestorBlock` (a rollback removed it), found
 * through the time index from the ancestor's time on.
 */
export async function makersAbove(
  db: Queryable,
  chainId: number,
  kind: MakerKind,
  owners: readonly string[],
  ancestorBlock: number,
  ancestorTime: number,
): Promise<{ owner: string; maker: string }[]> {
  if (owners.length === 0) return [];
  const t = MAKER_TABLES[kind];
  const { rows } = await db.query<{ owner: string; maker: string }>(
    `SELECT ${t.owner} AS owner, maker FROM ${t.table}
     WHERE chain_id = $1 AND ${t.owner} = ANY($2::text[]) AND last_time >= $3 AND last_block > $4`,
    [chainId, [...owners], iso(ancestorTime), ancestorBlock],
  );
  return rows;
}

/** Deletes maker rows. */
export async function deleteMakers(
  db: Queryable,
  chainId: number,
  kind: MakerKind,
  rows: readonly { owner: string; maker: string }[],
): Promise<void> {
  const t = MAKER_TABLES[kind];
  for (const part of chunks(rows)) {
    await db.query(
      `DELETE FROM ${t.table} m USING unnest($2::text[], $3::text[]) AS d(owner, maker)
       WHERE m.chain_id = $1 AND m.${t.owner} = d.owner AND m.maker = d.maker`,
      [chainId, part.map((r) => r.owner), part.map((r) => r.maker)],
    );
  }
}

/** Replaces maker rows with the given latest trades (after a rollback: the remaining ones). */
export async function replaceMakerLasts(
  db: Queryable,
  chainId: number,
  kind: MakerKind,
  lasts: readonly MakerLast[],
): Promise<void> {
  await upsertMakerLasts(db, chainId, kind, lasts, false);
}

/**
 * For (token, maker) pairs: the maker's latest trade over the pools holding the token, from the
 * pool rows (pairs without any are left out).
 */
export async function tokenMakerLastsFromPools(
  db: Queryable,
  chainId: number,
  pairs: readonly { owner: string; maker: string }[],
): Promise<MakerLast[]> {
  if (pairs.length === 0) return [];
  const { rows } = await db.query<{ token: string; maker: string; last_time: Date; last_block: number }>(
    `SELECT w.token, w.maker, max(pm.last_time) AS last_time, max(pm.last_block) AS last_block
     FROM unnest($2::text[], $3::text[]) AS w(token, maker)
     JOIN pool_makers pm ON pm.chain_id = $1 AND pm.maker = w.maker
     JOIN pools p ON p.chain_id = $1 AND p.address = pm.pool AND (p.token0 = w.token OR p.token1 = w.token)
     GROUP BY w.token, w.maker`,
    [chainId, pairs.map((p) => p.owner), pairs.map((p) => p.maker)],
  );
  return rows.map((r) => ({
    owner: r.token,
    maker: r.maker,
    time: r.last_time.getTime(),
    block: r.last_block,
  }));
}
