import * as assert from "node:assert/strict";
import type { Pricing } from "../pricing/pricing.js";
import type { Db } from "../store/db.js";
import { snapshotAggregates } from "./sql.js";

/** Refreshes both databases' statistics at `at`, then asserts every aggregate table of the chain equal. */
export async function assertSameAggregates(
  pricing: Pick<Pricing, "refreshStats">,
  [actual, expected]: [Db, Db],
  chainId: number,
  at: Date,
  label: string,
): Promise<void> {
  await pricing.refreshStats(actual, chainId, at);
  await pricing.refreshStats(expected, chainId, at);
  assert.deepEqual(
    await snapshotAggregates(actual, chainId),
    await snapshotAggregates(expected, chainId),
    label,
  );
}

/** The makers and the 24-hour windows of a chain, by table (the windows without the minute they were computed at). */
const makerAndWindowQueries = {
  pool_makers: "SELECT pool, maker, last_time, last_block FROM pool_makers WHERE chain_id = $1 ORDER BY 1, 2",
  token_makers:
    "SELECT token, maker, last_time, last_block FROM token_makers WHERE chain_id = $1 ORDER BY 1, 2",
  pair_windows:
    "SELECT to_jsonb(w) - 'minute' - 'chain_id' AS w FROM pair_windows w WHERE chain_id = $1 ORDER BY pool",
  token_windows:
    "SELECT to_jsonb(w) - 'minute' - 'chain_id' AS w FROM token_windows w WHERE chain_id = $1 ORDER BY token",
};

/** The makers and the 24-hour windows of a chain as plain sorted rows, by table. */
export async function makerAndWindowRows(db: Db, chainId: number): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  for (const [table, sql] of Object.entries(makerAndWindowQueries))
    rows[table] = (await db.query(sql, [chainId])).rows;
  return rows;
}

/** A pool's row of the 24-hour figures (pair_windows), as the pricing tests read it. */
export async function pairWindowOf(db: Db, chainId: number, pool: string) {
  const { rows } = await db.query<{
    volume_usd_24h: number;
    liquidity_usd: number;
    price_change_24h: number;
    buys_24h: number;
    sells_24h: number;
  }>("SELECT * FROM pair_windows WHERE chain_id = $1 AND pool = $2", [chainId, pool]);
  return rows[0];
}
