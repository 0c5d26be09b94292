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

/** RFC 4180 CSV: quoted fields with doubled quotes inside. Slices the text rather than building fields by character. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const row: string[] = [];
    for (;;) {
      if (text.charCodeAt(i) === 34 /* " */) {
        const parts: string[] = [];
        let j = i + 1;
        for (;;) {
          const quote = text.indexOf('"', j);
          if (quote < 0) {
            parts.push(text.slice(j));
            i = n;
            break;
          }
          if (text.charCodeAt(quote + 1) === 34) {
            parts.push(text.slice(j, quote + 1));
            j = quote + 2;
            continue;
          }
          parts.push(text.slice(j, quote));
          i = quote + 1;
          break;
        }
        row.push(parts.join(""));
      } else {
        let j = i;
        for (let c = text.charCodeAt(j); j < n && c !== 44 && c !== 10 && c !== 13; c = text.charCodeAt(++j));
        row.push(text.slice(i, j));
        i = j;
      }
      if (text.charCodeAt(i) === 44 /* , */) {
        i++;
        continue;
      }
      if (text.charCodeAt(i) === 13) i++;
      if (text.charCodeAt(i) === 10) i++;
      break;
    }
    rows.push(row);
  }
  return rows;
}
