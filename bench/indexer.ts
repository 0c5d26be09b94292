/**
 * Backfill throughput of the indexer in swaps/s and blocks/s, raw ingestion only (no pricing),
 * each beside baselines measured in the same run on the same data:
 * - devnet: a Hardhat node with the real Uniswap contracts and `historyDays` of simulated trading,
 *   indexed from block 0 over JSON-RPC until caught up. Baseline, the bare fetch: the very HTTP
 *   requests the indexer sent to the node (recorded in a warm-up run: its eth_getLogs ranges,
 *   headers, transactions, eth_calls, head polls), sent again with the same overlap (a request
 *   waits only for those that had answered before it was sent), each answer read and JSON-parsed,
 *   nothing decoded or stored.
 * - replay: the recorded mainnet day (6,046 swaps of USDC/WETH 0.05 %) through the same
 *   decode-and-store path. Baselines: parsing its CSV (read and split into fields, no decoding);
 *   storing the same rows (the swaps and pool events the replay stored, as text) into empty
 *   copies of their tables (same columns and indexes) with plain multi-row `INSERT … VALUES`, and
 *   with `COPY … FROM STDIN` (the fastest way into Postgres).
 * The ingestion and its baselines alternate over a few rounds after a warm-up, since the machine
 * may be shared. Times are medians over the rounds; a ratio is the median over the rounds of the
 * ingestion's swaps/s over the baseline's in the same round (1 = as fast as the baseline).
 * Every ingestion runs in a fresh scratch database, dropped afterwards.
 *
 *   npx tsx bench/indexer.ts                      embedded Postgres in a temporary folder
 *   DATABASE_URL=postgres://… npx tsx bench/indexer.ts   scratch databases on that server
 *   BENCH_INDEXER_ROUNDS=3 npx tsx bench/indexer.ts      fewer rounds (default 5)
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import { from as copyFrom } from "pg-copy-streams";
import { startIndexerDevnet } from "../src/_test/indexer-devnet.js";
import type { ChainConfig } from "../src/config/schema.js";
import { createSilentLogger, type Logger } from "../src/internal/logger.js";
import { parseCsv } from "../src/replay/fixture.js";
import { replayFixture } from "../src/replay/replay.js";
import { type Db, type DbClient, withTransaction } from "../src/store/db.js";
import { noDerivedData } from "../src/sync/derived.js";
import { createIndexer } from "../src/sync/indexer.js";
import { openBenchServer, withScratchDb } from "./database.js";

const fixtureDir = path.resolve(
  import.meta.dirname,
  "../fixtures/mainnet-uniswap-v3-usdc-weth-0.05-2024-01-05",
);
const scratch = { name: "indexer", max: 6 };

/** A baseline: the same data without the indexer's work, timed in the same rounds. */
export type Baseline = {
  /** Median over the rounds. */
  elapsedMs: number;
  roundsMs: number[];
  /** The ingested swaps over this baseline's time. */
  swapsPerSecond: number;
  /** The ingestion's swaps/s over this baseline's, median of the rounds' (1 = as fast as the baseline). */
  ratio: number;
};

export type ThroughputFigures = {
  swaps: number;
  poolEvents: number;
  blocks: number;
  /** Median over the rounds. */
  elapsedMs: number;
  roundsMs: number[];
  swapsPerSecond: number;
  blocksPerSecond: number;
};

export type IndexerBenchResult = {
  rounds: number;
  devnet: ThroughputFigures & {
    historyDays: number;
    rpcUrl: "hardhat (local)";
    baselines: {
      bareFetch: Baseline & {
        /** HTTP requests (JSON-RPC batches) the indexer sent, and its JSON-RPC calls by method. */
        httpRequests: number;
        calls: Record<string, number>;
        /** The replayed answers are as long as the recorded ones (the same blocks, logs, transactions). */
        answersMatch: boolean;
      };
    };
  };
  replay: ThroughputFigures & {
    fixture: string;
    baselines: {
      parseCsv: Baseline & { bytes: number; lines: number };
      multiRowInsert: Baseline & { rows: number; statements: number };
      copy: Baseline & { rows: number };
    };
  };
};

/** Measures the indexer's backfill throughput from a devnet with history and from the replay source. */
export async function benchIndexer(
  context: { db?: Db; logger?: Logger; historyDays?: number; rounds?: number } = {},
): Promise<IndexerBenchResult> {
  const logger = context.logger ?? createSilentLogger();
  const historyDays = context.historyDays ?? Number(process.env.BENCH_INDEXER_DAYS ?? 3);
  const rounds = context.rounds ?? Number(process.env.BENCH_INDEXER_ROUNDS ?? 5);
  const server = await openBenchServer(context.db, logger, "indexer");
  try {
    const devnet = await benchDevnet(server.url, logger, historyDays, rounds);
    const replay = await benchReplay(server.url, logger, rounds);
    return {
      rounds,
      devnet: { ...devnet, historyDays, rpcUrl: "hardhat (local)" },
      replay: { ...replay, fixture: path.basename(fixtureDir) },
    };
  } finally {
    await server.close();
  }
}

async function benchDevnet(url: string, logger: Logger, historyDays: number, rounds: number) {
  const devnet = await startIndexerDevnet({ historyDays, seed: 7, logger });
  try {
    const chain = devnet.chain();
    const blocks = (await devnet.head()) + 1;
    const indexCounting = (db: Db) =>
      indexOnce(db, chain, logger).then(async (ms) => ({ ms, counts: await countRows(db) }));
    // The warm-up run: its requests are the baseline's.
    const warmUp = await recordRequests(devnet.rpcUrl, () => withScratchDb(url, scratch, indexCounting));
    const { recording } = warmUp;
    const ingestMs: number[] = [];
    const fetchMs: number[] = [];
    let counts = sameCounts(undefined, warmUp.result.counts);
    let answersMatch = true;
    for (let round = 0; round < rounds; round++) {
      const ingest = async () => {
        const run = await withScratchDb(url, scratch, indexCounting);
        counts = sameCounts(counts, run.counts);
        ingestMs.push(run.ms);
      };
      const fetchAgain = async () => {
        const replayed = await replayRequests(devnet.rpcUrl, recording);
        answersMatch &&= replayed.answerChars === recording.answerChars;
        fetchMs.push(replayed.ms);
      };
      // Alternate which goes first, so that neither always follows the other's garbage.
      for (const step of round % 2 === 0 ? [ingest, fetchAgain] : [fetchAgain, ingest]) await step();
    }
    const ingest = figures({ ...counts, blocks, roundsMs: ingestMs });
    return {
      ...ingest,
      baselines: {
        bareFetch: {
          ...baseline(ingest.swaps, ingestMs, fetchMs),
          httpRequests: recording.requests.length,
          calls: recording.calls,
          answersMatch,
        },
      },
    };
  } finally {
    await devnet.stop();
  }
}

/** Indexes the chain from block 0 until caught up; the milliseconds from start to done. */
async function indexOnce(db: Db, chain: ChainConfig, logger: Logger): Promise<number> {
  const indexer = createIndexer({
    config: { chains: [chain] },
    db,
    logger,
    derived: noDerivedData,
    options: { follow: false, progressBar: false },
  });
  const startedAt = performance.now();
  await indexer.start();
  await indexer.done();
  return performance.now() - startedAt;
}

async function benchReplay(url: string, logger: Logger, rounds: number) {
  const replayOnce = (db: Db) =>
    replayFixture({ db, dir: fixtureDir, derived: noDerivedData, logger, blocksPerBatch: 2000 });
  // The warm-up replay: what it stores is what the baselines store.
  const stored = await withScratchDb(url, scratch, async (db) => {
    await replayOnce(db);
    return { swaps: await storedRows(db, "swaps"), pool_events: await storedRows(db, "pool_events") };
  });
  const storedCount = stored.swaps.length + stored.pool_events.length;
  const csvPath = path.join(fixtureDir, "logs.raw.csv");
  const replayMs: number[] = [];
  const parseMs: number[] = [];
  const insertMs: number[] = [];
  const copyMs: number[] = [];
  let statements = 0;
  let lines = 0;
  let replayed: (Counts & { blocks: number }) | undefined;
  for (let round = 0; round < rounds; round++) {
    await withScratchDb(url, scratch, async (db) => {
      await db.query(
        `CREATE TABLE insert_swaps (LIKE swaps INCLUDING ALL); CREATE TABLE insert_pool_events (LIKE pool_events INCLUDING ALL);
         CREATE TABLE copy_swaps (LIKE swaps INCLUDING ALL); CREATE TABLE copy_pool_events (LIKE pool_events INCLUDING ALL)`,
      );
      const replay = async () => {
        const result = await replayOnce(db);
        const { rows } = await db.query<{ first: number; last: number }>(
          "SELECT min(block_number)::int AS first, max(block_number)::int AS last FROM swaps",
        );
        const blocks = (rows[0]?.last ?? 0) - (rows[0]?.first ?? 0) + 1;
        replayed = sameCounts(replayed, { swaps: result.swaps, poolEvents: result.poolEvents, blocks });
        replayMs.push(result.elapsedMs);
      };
      const bare = async () => {
        let started = performance.now();
        lines = parseCsv(readFileSync(csvPath, "utf8")).length;
        parseMs.push(performance.now() - started);
        started = performance.now();
        statements = await withTransaction(
          db,
          async (client) =>
            (await insertRows(client, "insert_swaps", stored.swaps)) +
            (await insertRows(client, "insert_pool_events", stored.pool_events)),
        );
        insertMs.push(performance.now() - started);
        started = performance.now();
        await withTransaction(db, async (client) => {
          await copyRows(client, "copy_swaps", stored.swaps);
          await copyRows(client, "copy_pool_events", stored.pool_events);
        });
        copyMs.push(performance.now() - started);
      };
      for (const step of round % 2 === 0 ? [replay, bare] : [bare, replay]) await step();
    });
  }
  const counts = replayed as Counts & { blocks: number };
  if (counts.swaps + counts.poolEvents !== storedCount) {
    throw new Error(
      `bench/indexer: the replay stored ${storedCount} rows, then ingested ${JSON.stringify(counts)}`,
    );
  }
  return {
    ...figures({ ...counts, roundsMs: replayMs }),
    baselines: {
      parseCsv: { ...baseline(counts.swaps, replayMs, parseMs), bytes: readFileSync(csvPath).length, lines },
      multiRowInsert: { ...baseline(counts.swaps, replayMs, insertMs), rows: storedCount, statements },
      copy: { ...baseline(counts.swaps, replayMs, copyMs), rows: storedCount },
    },
  };
}

/** Rows per multi-row INSERT statement (a swap has 27 columns: 27,000 parameters, below Postgres' 65,535). */
const INSERT_ROWS = 1000;

/** A table's rows as Postgres prints them (text, nulls kept), in its column order. */
async function storedRows(db: Db, table: "swaps" | "pool_events"): Promise<(string | null)[][]> {
  const result = await db.query<(string | null)[]>({
    text: `SELECT * FROM ${table} ORDER BY chain_id, block_number, log_index`,
    rowMode: "array",
    types: { getTypeParser: () => (value: string) => value },
  });
  return result.rows;
}

/** Plain multi-row `INSERT … VALUES` of `rows`, INSERT_ROWS at a time; the statements sent. */
async function insertRows(client: DbClient, table: string, rows: (string | null)[][]): Promise<number> {
  let statements = 0;
  for (let start = 0; start < rows.length; start += INSERT_ROWS) {
    const chunk = rows.slice(start, start + INSERT_ROWS);
    const width = chunk[0]?.length ?? 0;
    const values = chunk.map(
      (_, r) => `(${Array.from({ length: width }, (_, c) => `$${r * width + c + 1}`).join(", ")})`,
    );
    await client.query(`INSERT INTO ${table} VALUES ${values.join(", ")}`, chunk.flat());
    statements++;
  }
  return statements;
}

/** `COPY … FROM STDIN` of `rows` in the text format (tab-separated, \N for null). */
async function copyRows(client: DbClient, table: string, rows: (string | null)[][]): Promise<void> {
  const field = (value: string | null) =>
    value === null
      ? "\\N"
      : value.replace(/[\\\t\n\r]/g, (c) => ({ "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c] ?? "\\\\");
  const lines = rows.map((row) => `${row.map(field).join("\t")}\n`);
  await pipeline(Readable.from(lines), client.query(copyFrom(`COPY ${table} FROM STDIN`)));
}

type Counts = { swaps: number; poolEvents: number };

/** The rounds must ingest the same swaps, some: anything else is a broken benchmark, not a figure. */
function sameCounts<T extends Counts>(previous: T | undefined, next: T): T {
  if (next.swaps === 0) throw new Error("bench/indexer: nothing was ingested");
  if (previous && JSON.stringify(previous) !== JSON.stringify(next)) {
    throw new Error(
      `bench/indexer: rounds ingested different data (${JSON.stringify(previous)} then ${JSON.stringify(next)})`,
    );
  }
  return next;
}

async function countRows(db: Db): Promise<Counts> {
  const { rows } = await db.query<{ swaps: number; events: number }>(
    "SELECT (SELECT count(*) FROM swaps)::int AS swaps, (SELECT count(*) FROM pool_events)::int AS events",
  );
  return { swaps: rows[0]?.swaps ?? 0, poolEvents: rows[0]?.events ?? 0 };
}

function figures(x: Counts & { blocks: number; roundsMs: number[] }): ThroughputFigures {
  const elapsedMs = median(x.roundsMs);
  return {
    swaps: x.swaps,
    poolEvents: x.poolEvents,
    blocks: x.blocks,
    elapsedMs: Math.round(elapsedMs),
    roundsMs: x.roundsMs.map(Math.round),
    swapsPerSecond: Math.round(x.swaps / (elapsedMs / 1000)),
    blocksPerSecond: Math.round(x.blocks / (elapsedMs / 1000)),
  };
}

/**
 * A baseline against the ingestion of `swaps`: its median time and swaps/s, and the median over
 * the rounds of the ingestion's time ratio to it (round i of each was measured side by side).
 */
function baseline(swaps: number, ingestMs: readonly number[], roundsMs: readonly number[]): Baseline {
  const elapsedMs = median(roundsMs);
  const round2 = (x: number) => Math.round(x * 100) / 100;
  return {
    elapsedMs: round2(elapsedMs),
    roundsMs: roundsMs.map(round2),
    swapsPerSecond: Math.round(swaps / (elapsedMs / 1000)),
    ratio: Math.round(median(roundsMs.map((ms, i) => ms / (ingestMs[i] as number))) * 1000) / 1000,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The HTTP requests sent to one JSON-RPC URL, in the order sent, with what each waited for. */
type Recording = {
  requests: { body: string; answeredBefore: number }[];
  /** Indexes into `requests`, in the order their answers were read. */
  answerOrder: number[];
  /** JSON-RPC calls by method. */
  calls: Record<string, number>;
  answerChars: number;
};

/**
 * Runs `fn` with `fetch` (viem's transport) wrapped: the bodies of the requests to `url` and
 * how many answers had been read when each was sent. Costs a copy of every answer: only for a
 * run that is not timed.
 */
async function recordRequests<T>(
  url: string,
  fn: () => Promise<T>,
): Promise<{ result: T; recording: Recording }> {
  const target = new URL(url).href;
  const recording: Recording = { requests: [], answerOrder: [], calls: {}, answerChars: 0 };
  const original = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const href = new URL(input instanceof Request ? input.url : input).href;
    if (href !== target || typeof init?.body !== "string") return original(input, init);
    const index =
      recording.requests.push({ body: init.body, answeredBefore: recording.answerOrder.length }) - 1;
    for (const call of [JSON.parse(init.body)].flat() as { method: string }[]) {
      recording.calls[call.method] = (recording.calls[call.method] ?? 0) + 1;
    }
    const response = await original(input, init);
    const text = await response.text();
    recording.answerOrder.push(index);
    recording.answerChars += text.length;
    return new Response(text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  try {
    return { result: await fn(), recording };
  } finally {
    globalThis.fetch = original;
  }
}

/**
 * Sends the recorded requests again: each once every request answered before it in the
 * recording has been answered here, so that the overlap is the indexer's, no more; answers are
 * read and JSON-parsed. The milliseconds from the first request to the last answer.
 */
async function replayRequests(
  url: string,
  recording: Recording,
): Promise<{ ms: number; answerChars: number }> {
  const answered: Promise<void>[] = [];
  let answerChars = 0;
  let waited = 0;
  const startedAt = performance.now();
  for (const { body, answeredBefore } of recording.requests) {
    while (waited < answeredBefore) await answered[recording.answerOrder[waited++] as number];
    answered.push(
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then((response) => response.text())
        .then((text) => {
          JSON.parse(text);
          answerChars += text.length;
        }),
    );
  }
  await Promise.all(answered);
  return { ms: performance.now() - startedAt, answerChars };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await benchIndexer();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
