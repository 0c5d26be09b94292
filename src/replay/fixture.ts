import { readFileSync } from "node:fs";
import * as path from "node:path";
import type { Hex, RawLog } from "../decode/types.js";

/** manifest.json of a recorded-log fixture. */
export type FixtureManifest = {
  description?: string;
  chainId: number;
  /** "uniswap-v2", "uniswap-v3" or "pancakeswap-v3". */
  protocol: string;
  factory: Hex;
  pool: Hex;
  fee?: number;
  /** The pool's creation block, when the recording knows it. */
  createdBlock?: number;
  token0: { address: Hex; symbol?: string; name?: string; decimals?: number };
  token1: { address: Hex; symbol?: string; name?: string; decimals?: number };
};

/** A recorded log with its block's timestamp (seconds); the CSV has no block hash. */
export type RecordedLog = RawLog & { blockTimestamp: number };

export type Fixture = { manifest: FixtureManifest; logs: RecordedLog[] };

/**
 * Reads a fixture folder: manifest.json and logs.raw.csv (block_number, block_timestamp in UTC,
 * transaction_hash, transaction_index, log_index, topics as a JSON list, data). The logs' address
 * is the manifest's pool. Logs come back ascending by (block, log index).
 */
export function readFixture(dir: string): Fixture {
  const manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8")) as FixtureManifest;
  const pool = manifest.pool.toLowerCase() as Hex;
  const rows = parseCsv(readFileSync(path.join(dir, "logs.raw.csv"), "utf8"));
  const header = rows.shift() ?? [];
  const col = (name: string) => {
    const i = header.indexOf(name);
    if (i < 0) throw new Error(`logs.raw.csv has no ${name} column`);
    return i;
  };
  const c = {
    block: col("block_number"),
    time: col("block_timestamp"),
    tx: col("transaction_hash"),
    txIndex: col("transaction_index"),
    logIndex: col("log_index"),
    topics: col("topics"),
    data: col("data"),
  };
  const logs = rows
    .filter((r) => r.length >= header.length)
    .map((r): RecordedLog => {
      const at = (i: number) => r[i] ?? "";
      return {
        address: pool,
        topics: (JSON.parse(at(c.topics)) as string[]).map((t) => t.toLowerCase() as Hex),
        data: at(c.data).toLowerCase() as Hex,
        blockNumber: Number(at(c.block)),
        blockHash: null,
        transactionHash: at(c.tx).toLowerCase() as Hex,
        transactionIndex: Number(at(c.txIndex)),
        logIndex: Number(at(c.logIndex)),
        blockTimestamp: Date.parse(`${at(c.time).replace(" ", "T")}Z`) / 1000,
      };
    });
  logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { manifest: { ...manifest, pool, factory: manifest.factory.toLowerCase() as Hex }, logs };
}

/** RFC 4180 CSV: quoted fields with doubled quotes inside. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
