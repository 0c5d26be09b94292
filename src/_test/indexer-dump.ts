import * as assert from "node:assert/strict";
import type { Queryable } from "../store/db.js";
import { dumpTable } from "./sql.js";

/**
 * What the indexer writes, table by table, minus what legitimately differs between two runs of
 * the same chain (wall-clock times, the progress figures, totalSupply read at the batch's block).
 */
const tables: Record<string, { columns: string; orderBy: string }> = {
  chains: { columns: "chain_id, name, genesis_hash, devnet", orderBy: "chain_id" },
  sync_state: {
    columns: "chain_id, indexed_block, indexed_block_hash, indexed_block_time",
    orderBy: "chain_id",
  },
  factory_scans: { columns: "*", orderBy: "chain_id, factory" },
  blocks: { columns: "*", orderBy: "chain_id, number" },
  tokens: { columns: "chain_id, address, name, symbol, decimals", orderBy: "chain_id, address" },
  pools: { columns: "*", orderBy: "chain_id, address" },
  swaps: { columns: "*", orderBy: "chain_id, block_number, log_index" },
  pool_events: { columns: "*", orderBy: "chain_id, block_number, log_index" },
};

export type IndexedDump = Record<string, string[]>;

/** Every row the indexer wrote for these chains, as JSON text, in key order. */
export async function dumpIndexedData(db: Queryable, chainIds: readonly number[]): Promise<IndexedDump> {
  const dump: IndexedDump = {};
  for (const [table, { columns, orderBy }] of Object.entries(tables)) {
    dump[table] = await dumpTable(db, table, { columns, orderBy }, chainIds);
  }
  return dump;
}

/** Asserts two dumps are equal, naming the first differing row of the first differing table. */
export function assertSameDump(actual: IndexedDump, expected: IndexedDump, label: string): void {
  for (const table of Object.keys(tables)) {
    const a = actual[table] ?? [];
    const e = expected[table] ?? [];
    const n = Math.max(a.length, e.length);
    for (let i = 0; i < n; i++) {
      if (a[i] !== e[i]) {
        assert.fail(
          `${label}: ${table} differs at row ${i} (${a.length} rows vs ${e.length} expected)\n  got:      ${a[i]}\n  expected: ${e[i]}`,
        );
      }
    }
  }
}

/** Row counts per table, for messages. */
export function dumpCounts(dump: IndexedDump): Record<string, number> {
  return Object.fromEntries(Object.entries(dump).map(([table, rows]) => [table, rows.length]));
}
