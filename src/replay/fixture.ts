import { readFileSync } from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import type { Hex, RawLog } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import { variants } from "../protocols/index.js";

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "expected a 20-byte 0x address")
  .transform((s) => s.toLowerCase() as Hex);
const hash32 = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 32-byte 0x hash")
  .transform((s) => s.toLowerCase() as Hex);
const rawAmount = z
  .union([
    z.string().regex(/^\d{1,78}$/, "expected a non-negative integer of at most 78 digits"),
    z.number().int().nonnegative(),
  ])
  .transform((v) => BigInt(v));
const token = z.object({
  address,
  symbol: z.string().optional(),
  name: z.string().optional(),
  decimals: z.number().int().min(0).max(255).optional(),
});

/** manifest.json of a recorded-log fixture. Unknown keys (description, files, source…) are kept out. */
const manifestSchema = z.object({
  description: z.string().optional(),
  chainId: z.number().int().positive(),
  /** A family's variant, by the names the registry of families gives them. */
  protocol: z.enum([...variants.keys()] as [string, ...string[]]),
  factory: address,
  pool: address,
  fee: z.number().int().nonnegative().optional(),
  /** The pool's creation block, when the recording knows it. */
  createdBlock: z.number().int().nonnegative().optional(),
  /** The chain's genesis hash; needed for a chain id other than 1, 56 and 137. */
  genesisHash: hash32.optional(),
  /** Display name of the pool's DEX. */
  dex: z.string().min(1).optional(),
  /** The pool's token balances just before the first recorded log (raw integers). */
  balances: z.object({ reserve0: rawAmount, reserve1: rawAmount }).optional(),
  token0: token,
  token1: token,
});

export type FixtureManifest = z.infer<typeof manifestSchema>;

/** A recorded log with its block's timestamp (seconds); the CSV has no block hash. */
export type RecordedLog = RawLog & { blockTimestamp: number };

export type Fixture = { dir: string; manifest: FixtureManifest; logs: RecordedLog[] };

/** A fixture file cannot be read: the message names the file, and the line and column where known. */
export class FixtureError extends BaseError {
  override name = "FixtureError";
}

const columns = [
  "block_number",
  "block_timestamp",
  "transaction_hash",
  "transaction_index",
  "log_index",
  "topics",
  "data",
] as const;
type Column = (typeof columns)[number];

/**
 * Reads a fixture folder: manifest.json and logs.raw.csv (block_number, block_timestamp in UTC,
 * transaction_hash, transaction_index, log_index, topics as a JSON list, data). The logs' address
 * is the manifest's pool. Logs come back ascending by (block, log index). Anything malformed is a
 * FixtureError naming the file, line and column.
 */
export function readFixture(dir: string): Fixture {
  const manifest = readManifest(path.join(dir, "manifest.json"));
  const csvPath = path.join(dir, "logs.raw.csv");
  const logs = readLogs(csvPath, manifest.pool);
  return { dir, manifest, logs };
}

function readManifest(file: string): FixtureManifest {
  const text = readText(file);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const position = /position (\d+)/.exec(String((error as Error).message));
    const where = position ? ` ${lineAndColumn(text, Number(position[1]))}` : "";
    throw new FixtureError(`${file}${where}: not valid JSON (${(error as Error).message})`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.join(".") || "(top level)";
    throw new FixtureError(`${file}: ${key}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

function readLogs(file: string, pool: Hex): RecordedLog[] {
  const lineStarts: number[] = [];
  const rows = parseCsv(readText(file), lineStarts);
  const header = rows[0] ?? [];
  const index = {} as Record<Column, number>;
  for (const name of columns) {
    const i = header.indexOf(name);
    if (i < 0)
      throw new FixtureError(`${file} line 1: no ${name} column (the header needs ${columns.join(", ")})`);
    index[name] = i;
  }
  const logs: RecordedLog[] = [];
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r] as string[];
    const line = lineStarts[r] ?? r + 1;
    if (row.length === 1 && row[0] === "") continue; // a blank line
    const field = (name: Column) => {
      const value = row[index[name]];
      if (value === undefined)
        fail(file, line, index[name], name, `the row has ${row.length} of ${header.length} fields`);
      return value;
    };
    const integer = (name: Column) => {
      const value = field(name);
      if (!/^\d{1,15}$/.test(value))
        fail(file, line, index[name], name, `${quote(value)} is not a non-negative integer`);
      return Number(value);
    };
    const hex = (name: Column, bytes?: number) => {
      const value = field(name);
      const ok =
        bytes === undefined
          ? /^0x([0-9a-fA-F]{2})*$/.test(value)
          : new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(value);
      if (!ok)
        fail(
          file,
          line,
          index[name],
          name,
          `${quote(value)} is not ${bytes === undefined ? "0x hex data" : `a ${bytes}-byte 0x hex value`}`,
        );
      return value.toLowerCase() as Hex;
    };
    const time = field("block_timestamp");
    const timestamp = parseUtcTimestamp(time);
    if (timestamp === null)
      fail(
        file,
        line,
        index.block_timestamp,
        "block_timestamp",
        `${quote(time)} is not a UTC timestamp (YYYY-MM-DD HH:MM:SS, optionally with T, Z or +00:00)`,
      );
    const topicsText = field("topics");
    let topics: unknown;
    try {
      topics = JSON.parse(topicsText);
    } catch {
      topics = undefined;
    }
    if (
      !Array.isArray(topics) ||
      topics.length === 0 ||
      topics.length > 4 ||
      !topics.every((t) => typeof t === "string" && /^0x[0-9a-fA-F]{64}$/.test(t))
    )
      fail(
        file,
        line,
        index.topics,
        "topics",
        `${quote(topicsText)} is not a JSON list of 1 to 4 32-byte 0x topics`,
      );
    logs.push({
      address: pool,
      topics: (topics as string[]).map((t) => t.toLowerCase() as Hex),
      data: hex("data"),
      blockNumber: integer("block_number"),
      blockHash: null,
      transactionHash: hex("transaction_hash", 32),
      transactionIndex: integer("transaction_index"),
      logIndex: integer("log_index"),
      blockTimestamp: timestamp,
    });
  }
  logs.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return logs;
}

/** "2024-01-05 00:00:23", "2024-01-05T00:00:23Z" or "…+00:00" as unix seconds; null for anything else. */
export function parseUtcTimestamp(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:Z|\+00:00|\+00)?$/.exec(text);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const ms = Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
  const back = new Date(ms);
  // Date.UTC rolls 2024-02-30 over to March: such a date is malformed, not another day.
  if (back.getUTCDate() !== d || back.getUTCMonth() !== (mo as number) - 1 || (h as number) > 23) return null;
  return ms / 1000;
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new FixtureError(
      `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

function fail(file: string, line: number, columnIndex: number, name: string, message: string): never {
  throw new FixtureError(`${file} line ${line}, column ${columnIndex + 1} (${name}): ${message}`);
}

const quote = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return `line ${line}, column ${offset - before.lastIndexOf("\n")}`;
}

/**
 * RFC 4180 CSV: quoted fields with doubled quotes inside. Slices the text rather than building
 * fields by character. `lineOf`, when given, receives each row's 1-based starting line.
 */
export function parseCsv(text: string, lineOf?: number[]): string[][] {
  const rows: string[][] = [];
  const n = text.length;
  let i = 0;
  let line = 1;
  let counted = 0;
  while (i < n) {
    if (lineOf) {
      for (let k = text.indexOf("\n", counted); k >= 0 && k < i; k = text.indexOf("\n", k + 1)) line++;
      counted = i;
      lineOf.push(line);
    }
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
