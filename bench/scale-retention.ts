/**
 * Database size with a retention: a chain's days written one after the
 * other, `perDay` swaps a day over 2,000 pools (src/_test/sql.ts fillSwapsHistory, as
 * `npm run bench:storage` writes its history), the storage upkeep run after each day as the
 * indexer runs it (src/sync/storage-upkeep.ts, retention of `retentionDays` days of swaps), and the
 * swaps' bytes and the whole database's measured after each day: they grow while the window
 * fills, then stay level (a day in, a day dropped). Beside it, the same days kept forever would
 * grow by the first days' bytes per day (the baseline, extrapolated from the filling days).
 */
import { fillSwapsHistory } from "../src/_test/sql.js";
import { prepareSyntheticChain } from "../src/_test/synthetic-chain.js";
import type { Db } from "../src/store/db.js";
import { partitionTreeBytes } from "../src/store/partitions.js";
import {
  defaultStorageOptions,
  ensureBatchPartitions,
  runStorageUpkeep,
} from "../src/sync/storage-upkeep.js";

const DAY = 86_400_000;
/** A Monday, long past. */
const START = Date.parse("2025-03-03T00:00:00Z");

export async function benchRetention(
  db: Db,
  options: { days: number; retentionDays: number; perDay: number; log?: (line: string) => void },
) {
  const log = options.log ?? (() => {});
  await prepareSyntheticChain(db, 1, 1);
  const storage = {
    ...defaultStorageOptions,
    retention: { swapsDays: options.retentionDays, candles1mDays: null, series5mDays: null },
  };
  const series: {
    day: number;
    swapsRows: number;
    swapsBytes: number;
    databaseBytes: number;
    dropped: number;
  }[] = [];
  for (let day = 0; day < options.days; day++) {
    const from = START + day * DAY;
    await ensureBatchPartitions(db, { from, to: from + DAY - 1 });
    await fillSwapsHistory(db, {
      chainId: 1,
      from: START,
      firstDay: day,
      days: 1,
      perDay: options.perDay,
      pools: 2000,
    });
    const upkeep = await runStorageUpkeep(db, storage, from + DAY);
    await db.query("VACUUM ANALYZE swaps");
    const { rows } = await db.query<{ rows: string; db: string }>(
      "SELECT (SELECT count(*) FROM swaps)::text AS rows, pg_database_size(current_database())::text AS db",
    );
    const point = {
      day: day + 1,
      swapsRows: Number(rows[0]?.rows ?? 0),
      swapsBytes: (await partitionTreeBytes(db, ["swaps"])).get("swaps") ?? 0,
      databaseBytes: Number(rows[0]?.db ?? 0),
      dropped: upkeep.dropped.length,
    };
    series.push(point);
    log(
      `retention: day ${point.day}: ${point.swapsRows} swaps, ${Math.round(point.swapsBytes / 1e6)} MB of swaps, database ${Math.round(point.databaseBytes / 1e6)} MB, ${point.dropped} partitions dropped`,
    );
  }
  const full = series.filter((p) => p.day > options.retentionDays + 1);
  const filling = series.slice(0, options.retentionDays);
  const growthPerDay =
    filling.length > 1
      ? ((filling.at(-1)?.swapsBytes ?? 0) - (filling[0]?.swapsBytes ?? 0)) / (filling.length - 1)
      : Number.NaN;
  const spread =
    full.length > 0
      ? Math.max(...full.map((p) => p.swapsBytes)) - Math.min(...full.map((p) => p.swapsBytes))
      : Number.NaN;
  return {
    days: options.days,
    retentionDays: options.retentionDays,
    swapsPerDay: options.perDay,
    /** Bytes a day of swaps adds while the window fills (the keep-forever baseline's daily growth). */
    swapsBytesPerDayWhileFilling: Math.round(growthPerDay),
    /** max − min of the swaps' bytes once the window is full, against a day's growth. */
    swapsBytesSpreadWhenFull: spread,
    spreadOverDailyGrowth: Math.round((spread / growthPerDay) * 100) / 100,
    keepForeverSwapsBytesAtEnd: Math.round((series[0]?.swapsBytes ?? 0) + growthPerDay * (options.days - 1)),
    bytesPerMillionSwaps: Math.round(
      ((filling.at(-1)?.swapsBytes ?? 0) / (filling.at(-1)?.swapsRows ?? 1)) * 1e6,
    ),
    series,
  };
}
