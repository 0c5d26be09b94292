/**
 * The upkeep of the time-partitioned tables (migration 011), run by the indexer: at start and then
 * every `upkeepIntervalMs`, it moves rows that fell into a DEFAULT partition into partitions of
 * their own, makes the current period's partition and `partitionsAhead` after it, and drops the
 * partitions a retention has expired. Before each batch, `ensureBatchPartitions` makes the
 * partitions of the batch's own days (a backfill writes days long past), so that the DEFAULT
 * partitions stay empty and every read prunes to the partitions it needs.
 */
import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import { sleep } from "../rpc/retry.js";
import type { Db } from "../store/db.js";
import {
  defaultPartitionName,
  expiredPartitions,
  missingPeriods,
  type Period,
  partitionName,
  periodsAhead,
  periodsOf,
  RANGE_TABLES,
  type RangeTable,
  retentionCutoff,
} from "../store/partition-plan.js";
import {
  createPartition,
  dropPartition,
  existingTables,
  isLockTimeout,
  loadPartitions,
  partitionTreeBytes,
  periodsInDefault,
  vacuumTable,
} from "../store/partitions.js";

export type StorageOptions = Config["storage"];

/** Keep-forever defaults (the demo's): partitions ahead, no retention. */
export const defaultStorageOptions: StorageOptions = {
  retention: { swapsDays: null, candles1mDays: null, series5mDays: null },
  partitionsAhead: 3,
  upkeepIntervalMs: 3_600_000,
};

/** The tables whose size the upkeep logs when it changed something. */
const TREES = ["swaps", "candles", "token_usd_candles"];

/** Each DDL statement waits at most this long for its locks (readers would queue behind it). */
const LOCK_TIMEOUT_MS = 2000;
/** A step refused its locks is tried again this many times, this far apart. */
const LOCK_ATTEMPTS = 5;
const LOCK_RETRY_MS = 1000;

/** What one upkeep run did. */
export type UpkeepResult = {
  /** Partitions created (ahead, or for rows found in a DEFAULT partition). */
  created: string[];
  /** Partitions dropped by the retention. */
  dropped: string[];
  /** Steps skipped because their locks were not granted in time (tried again at the next run). */
  skipped: number;
};

/** Runs `step` until its locks are granted, at most LOCK_ATTEMPTS times; false when they never were. */
async function withLockRetries(step: () => Promise<void>): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await step();
      return true;
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      if (attempt >= LOCK_ATTEMPTS) return false;
      await sleep(LOCK_RETRY_MS);
    }
  }
}

/**
 * One upkeep run at `now` (ms): rows of the DEFAULT partitions into partitions of their periods,
 * the partitions ahead, then the retention (oldest partition first). Nothing to do on a database
 * whose tables are not partitioned.
 */
export async function runStorageUpkeep(db: Db, options: StorageOptions, now: number): Promise<UpkeepResult> {
  const result: UpkeepResult = { created: [], dropped: [], skipped: 0 };
  const catalog = await loadPartitions(db);
  for (const table of RANGE_TABLES) {
    if (!catalog.partitioned.has(table.parent)) continue;
    const existing = catalog.partitions.filter((p) => p.table === table);
    const stray = (await periodsInDefault(db, table)).map((from) => ({ from, to: from + table.widthMs }));
    const wanted: Period[] = [...stray, ...periodsAhead(table, now, options.partitionsAhead)];
    for (const period of missingPeriods(existing, wanted)) {
      await createOne(db, table, period, result);
      existing.push({ table, name: partitionName(table, period.from), ...period });
    }
    if (stray.length > 0) await vacuumTable(db, defaultPartitionName(table));
    const cutoff = retentionCutoff(options.retention[table.retention], now);
    if (cutoff === null) continue;
    for (const partition of expiredPartitions(existing, cutoff)) {
      const done = await withLockRetries(() => dropPartition(db, partition, LOCK_TIMEOUT_MS));
      if (done) result.dropped.push(partition.name);
      else {
        result.skipped += 1;
        break; // oldest first: a younger one must not go before it
      }
    }
  }
  return result;
}

async function createOne(db: Db, table: RangeTable, period: Period, result: UpkeepResult): Promise<void> {
  let created = false;
  const done = await withLockRetries(async () => {
    created = await createPartition(db, table, period, LOCK_TIMEOUT_MS);
  });
  if (!done) result.skipped += 1;
  else if (created) result.created.push(partitionName(table, period.from));
}

/**
 * Makes the partitions of the periods that hold a time in [from, to] (ms) where they are missing,
 * before a batch of that span is written: one catalog probe when they exist (the usual case). A
 * lock not granted in time is not an error: the batch's rows then go to the DEFAULT partition and
 * the next upkeep moves them. Returns the partitions created.
 */
export async function ensureBatchPartitions(db: Db, span: { from: number; to: number }): Promise<string[]> {
  const wanted = RANGE_TABLES.flatMap((table) =>
    periodsOf(table, span.from, span.to).map((period) => ({ table, period })),
  );
  const present = await existingTables(
    db,
    wanted.map((w) => partitionName(w.table, w.period.from)),
  );
  const absent = wanted.filter((w) => !present.has(partitionName(w.table, w.period.from)));
  if (absent.length === 0) return [];
  const catalog = await loadPartitions(db);
  const created: string[] = [];
  for (const { table, period } of absent) {
    if (!catalog.partitioned.has(table.parent)) continue;
    const existing = catalog.partitions.filter((p) => p.table === table);
    if (missingPeriods(existing, [period]).length === 0) continue;
    try {
      if (await createPartition(db, table, period, LOCK_TIMEOUT_MS)) {
        created.push(partitionName(table, period.from));
      }
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
    }
  }
  return created;
}

export type StorageUpkeep = {
  /** Runs the upkeep once now, then every `upkeepIntervalMs`; resolves after the first run. */
  start(): Promise<void>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
};

/** The indexer's periodic upkeep of the partitions; failures are logged and tried again at the next run. */
export function createStorageUpkeep(args: {
  db: Db;
  options: StorageOptions;
  logger: Logger;
  now?: () => number;
}): StorageUpkeep {
  const logger = args.logger.child({ component: "storage" });
  const now = args.now ?? Date.now;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const run = () => {
    running ??= (async () => {
      const started = performance.now();
      try {
        const result = await runStorageUpkeep(args.db, args.options, now());
        const changed = result.created.length + result.dropped.length + result.skipped > 0;
        const bytes = changed ? await partitionTreeBytes(args.db, TREES) : undefined;
        logger[changed ? "info" : "debug"](
          {
            created: result.created,
            dropped: result.dropped,
            skipped: result.skipped,
            ...(bytes ? { bytes: Object.fromEntries(bytes) } : {}),
            ms: Math.round(performance.now() - started),
          },
          "partitions upkeep",
        );
      } catch (error) {
        logger.warn({ err: error }, "partitions upkeep failed; trying again at the next run");
      }
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    start: async () => {
      if (timer || stopped) return;
      await run();
      if (stopped) return;
      timer = setInterval(run, args.options.upkeepIntervalMs);
      timer.unref();
    },
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
