import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import { createApiClient } from "../_test/http-client.js";
import { dumpRows, rowsPerPartition } from "../_test/sql.js";
import {
  ingestSyntheticChain,
  prepareSyntheticChain,
  rollbackSyntheticChain,
} from "../_test/synthetic-chain.js";
import { createSyntheticMarket, type SyntheticMarket } from "../_test/synthetic-market.js";
import { getPairCandles, getPairCandlesBefore, getTokenUsdCandles } from "../api/charts.js";
import { createApiServer } from "../api/server.js";
import { parseConfig } from "../config/load.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import type { BatchSwap } from "../model/index.js";
import { CANDLE_INTERVALS } from "../model/index.js";
import { refreshPairLiquidity, refreshTokenStats } from "../pricing/market-stats.js";
import { refreshMarketWindows } from "../pricing/market-windows.js";
import type { Pricing } from "../pricing/pricing.js";
import { createApiKey } from "../store/api-keys.js";
import { saveCandles } from "../store/candles.js";
import type { Db } from "../store/db.js";
import {
  defaultPartitionName,
  partitionName,
  periodStart,
  periodsAhead,
  RANGE_TABLES,
  type RangeTable,
  retentionCutoff,
} from "../store/partition-plan.js";
import { loadPartitions, loadRetainedFrom, partitionTreeBytes } from "../store/partitions.js";
import { saveSeriesCandles } from "../store/series.js";
import { findSwaps, insertSwaps, type SwapRow, type TradePosition } from "../store/swaps.js";
import { defaultStorageOptions, runStorageUpkeep, type StorageOptions } from "./storage-upkeep.js";

const CHAIN = 912;
/** A Monday (the weekly partitions' weeks start on the history's first day), long past. */
const START = Date.parse("2021-03-01T00:00:00Z");
const DAY = 86_400_000;
const DAYS = 24;
const BLOCK_SECONDS = 600;
const BLOCKS_PER_DAY = DAY / 1000 / BLOCK_SECONDS;
const END = START + DAYS * DAY;

const retained: StorageOptions = {
  retention: { swapsDays: 3, candles1mDays: 7, series5mDays: 7 },
  partitionsAhead: 2,
  upkeepIntervalMs: 3_600_000,
};
const keepAll: StorageOptions = { ...defaultStorageOptions, partitionsAhead: 2 };

/** The retained tables' partition trees, whose size the retention bounds. */
const TREES = RANGE_TABLES.map((t) => t.parent);

type Day = { now: number; bytes: Map<string, number> };

/**
 * Pages through a pool's trades with findSwaps, `limit` at a time, following the cursor;
 * `tradesPerDay`: the rate that sizes each page's first window.
 */
async function pageAll(db: Db, pool: string, limit: number, tradesPerDay?: number): Promise<SwapRow[]> {
  const all: SwapRow[] = [];
  let before: TradePosition | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const rows = await findSwaps(db, {
      chainId: CHAIN,
      pool,
      before,
      limit: limit + 1,
      now: END,
      tradesPerDay,
    });
    all.push(...rows.slice(0, limit));
    if (rows.length <= limit) return all;
    const last = rows[limit - 1] as SwapRow;
    before = { block: Number(last.block_number), logIndex: last.log_index, time: last.block_time.getTime() };
  }
  throw new Error("paging did not end");
}

/** Rows of a table of the chain as JSON text, sorted, optionally only those `where` holds. */
async function rowsOf(db: Db, table: string, where = "true", params: unknown[] = []): Promise<string[]> {
  const { rows } = await db.query<{ row: string }>(
    `SELECT row_to_json(t)::text AS row FROM ${table} t WHERE chain_id = ${CHAIN} AND ${where} ORDER BY 1`,
    params,
  );
  return rows.map((r) => r.row);
}

describe("partition upkeep and retention over 24 days of a synthetic market", () => {
  /** Retention of 3 days of swaps, 7 of 1-minute candles and 5-minute series; and one keeping all. */
  let kept: TestDb;
  let full: TestDb;
  let market: SyntheticMarket;
  let pricing: Pricing;
  /** A pool that trades on the first day only, then gets liquidity in the last blocks (rolled back). */
  let quiet: Hex;
  let mintBlock: number;
  const days: { kept: Day[]; full: Day[] } = { kept: [], full: [] };
  const created: string[][] = [];
  const dropped: string[][] = [];

  before(async () => {
    kept = await createTestDb();
    full = await createTestDb();
    market = createSyntheticMarket({ chainId: CHAIN, startTime: START / 1000, tokens: 12, seed: 5 });
    const { chain } = market;
    quiet = market.pools.at(-1) as Hex;
    const reserves = chain.reserves(quiet);
    chain.swap(quiet, reserves.token0, reserves.reserve0 / 1000n);
    chain.swap(quiet, reserves.token1, reserves.reserve1 / 2000n);
    const skip = new Set([quiet]);
    const lastOfDay: number[] = [];
    for (let d = 0; d < DAYS; d++) {
      const blocks = d === 0 ? BLOCKS_PER_DAY - 1 : BLOCKS_PER_DAY;
      if (d < DAYS - 1) {
        market.trade({ blocks, swapsPerBlock: 3, blockSeconds: BLOCK_SECONDS, skip });
      } else {
        market.trade({ blocks: blocks - 4, swapsPerBlock: 3, blockSeconds: BLOCK_SECONDS, skip });
        mintBlock = chain.currentBlock;
        const r = chain.reserves(quiet);
        chain.mint(quiet, { [r.token0]: r.reserve0 / 10n, [r.token1]: r.reserve1 / 10n });
        market.trade({ blocks: 4, swapsPerBlock: 3, blockSeconds: BLOCK_SECONDS, skip });
      }
      lastOfDay.push((chain.blocks.at(-1) as { number: number }).number);
    }
    pricing = market.pricing(() => new Date(END));
    for (const t of [kept, full]) await prepareSyntheticChain(t.db, CHAIN, 1);
    for (let d = 0; d < DAYS; d++) {
      const now = START + (d + 1) * DAY;
      for (const [t, options, out] of [
        [kept, retained, days.kept],
        [full, keepAll, days.full],
      ] as const) {
        await ingestSyntheticChain(t.db, pricing, chain, { toBlock: lastOfDay[d], batchSize: () => 36 });
        const result = await runStorageUpkeep(t.db, options, now);
        assert.equal(result.skipped, 0, "no lock was refused");
        if (t === kept) {
          created.push(result.created);
          dropped.push(result.dropped);
        }
        out.push({ now, bytes: await partitionTreeBytes(t.db, TREES) });
      }
    }
  });
  after(async () => {
    await kept?.drop();
    await full?.drop();
  });

  it("keeps the partitions of now and the next ones, and every day's rows out of the DEFAULT partitions", async () => {
    const catalog = await loadPartitions(kept.db);
    const names = new Set(catalog.partitions.map((p) => p.name));
    for (const table of RANGE_TABLES) {
      for (const period of periodsAhead(table, END, retained.partitionsAhead)) {
        assert.ok(
          names.has(partitionName(table, period.from)),
          `${partitionName(table, period.from)} exists`,
        );
      }
      for (const db of [kept.db, full.db]) {
        const rows = await rowsPerPartition(db, table.parent);
        assert.equal(rows.get(defaultPartitionName(table)), undefined, `${table.parent}: DEFAULT empty`);
      }
    }
    // The keep-all database holds every day of the history in a partition of its own.
    const all = await rowsPerPartition(full.db, "swaps");
    assert.equal(all.size, DAYS, "one swaps partition per day");
  });

  it("drops the expired partitions only, and records where each table starts", async () => {
    const catalog = await loadPartitions(kept.db);
    const since = await loadRetainedFrom(kept.db);
    for (const table of RANGE_TABLES) {
      const cutoff = retentionCutoff(retained.retention[table.retention], END) as number;
      const partitions = catalog.partitions.filter((p) => p.table === table);
      assert.ok(
        partitions.every((p) => p.to > cutoff),
        `${table.parent}: nothing ending before ${new Date(cutoff).toISOString()}`,
      );
      const oldest = Math.min(...partitions.map((p) => p.from));
      assert.equal(since.get(table.parent), oldest, `${table.parent} starts at its oldest partition`);
      // Every row at or after the start is still there: the same rows as the keep-all database.
      const { rows } = await full.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table.parent} WHERE ${table.key} >= $1`,
        [new Date(oldest).toISOString()],
      );
      const left = await kept.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table.parent}`);
      assert.equal(left.rows[0]?.n, rows[0]?.n, `${table.parent}: the rows of the kept partitions`);
      assert.ok((rows[0]?.n ?? 0) > 0, `${table.parent} keeps rows`);
    }
    assert.ok(dropped.flat().length >= DAYS - 4 + 2, `${dropped.flat().length} partitions dropped`);
  });

  it("stops growing once the retention window is full, while keeping everything grows", () => {
    for (const table of RANGE_TABLES) {
      const size = (d: Day) => d.bytes.get(table.parent) ?? 0;
      const grown = days.full.map(size);
      const perDay = ((grown.at(-1) as number) - (grown[0] as number)) / (DAYS - 1);
      const windowDays = (retained.retention[table.retention] as number) + table.widthMs / DAY;
      // Once the first partition went, what is kept stays within the window plus one period.
      const first = dropped.findIndex((names) => names.some((n) => n.startsWith(`${table.parent}_p`)));
      assert.ok(first > 0, `${table.parent} dropped partitions`);
      const after = days.kept.slice(first).map(size);
      const bound = windowDays * perDay * 1.15 + (grown[0] as number);
      for (const [i, bytes] of after.entries()) {
        assert.ok(bytes <= bound, `${table.parent} on day ${first + i}: ${bytes} bytes, at most ${bound}`);
      }
      assert.ok(
        (grown.at(-1) as number) > Math.max(...after) + 5 * perDay,
        `${table.parent}: ${grown.at(-1)} bytes kept without retention, ${Math.max(...after)} with`,
      );
    }
  });

  it("answers from the kept rows what a database keeping everything answers, after a rollback too", async () => {
    await rollbackSyntheticChain(kept.db, pricing, market.chain, mintBlock - 1);
    await rollbackSyntheticChain(full.db, pricing, market.chain, mintBlock - 1);
    const since = await loadRetainedFrom(kept.db);
    const swapsSince = since.get("swaps") as number;
    const candlesSince = since.get("candles_1m") as number;
    const seriesSince = since.get("token_usd_candles_5m") as number;
    const allPools = [...market.pools];
    const tokens = [
      ...new Set(
        (
          await full.db.query<{ t: string }>(
            `SELECT token0 AS t FROM pools WHERE chain_id = $1 UNION SELECT token1 FROM pools WHERE chain_id = $1`,
            [CHAIN],
          )
        ).rows.map((r) => r.t),
      ),
    ];
    for (const t of [kept, full]) {
      await refreshPairLiquidity(t.db, CHAIN, allPools);
      await refreshMarketWindows(t.db, CHAIN, { pools: allPools, tokens }, () => END);
      await refreshTokenStats(t.db, CHAIN, tokens, END, 10_000);
    }

    // The state the pricing and the API read: equal, the quiet pool's (rebuilt from a kept swap) included.
    for (const table of ["pools", "pool_price_state", "token_prices"]) {
      assert.deepEqual(await rowsOf(kept.db, table), await rowsOf(full.db, table), `${table} equal`);
    }
    const quietState = await kept.db.query<{ swap_block: number | null; state_block: number }>(
      "SELECT swap_block, state_block FROM pool_price_state WHERE chain_id = $1 AND pool = $2",
      [CHAIN, quiet],
    );
    assert.equal(
      typeof quietState.rows[0]?.swap_block,
      "number",
      "the quiet pool's last swap block is known",
    );
    assert.ok(
      (quietState.rows[0]?.state_block ?? 0) < mintBlock &&
        (quietState.rows[0]?.swap_block ?? 0) < BLOCKS_PER_DAY,
      "its state is that of its first-day trades, whose partition was dropped",
    );
    for (const table of ["pair_windows", "token_windows"]) {
      const q = `SELECT to_jsonb(t)::text AS row FROM ${table} t WHERE chain_id = $1 ORDER BY 1`;
      const a = (await kept.db.query<{ row: string }>(q, [CHAIN])).rows.map((r) => r.row);
      const b = (await full.db.query<{ row: string }>(q, [CHAIN])).rows.map((r) => r.row);
      assert.ok(a.length > 10, `${a.length} ${table} rows`);
      assert.deepEqual(a, b, `${table}: equal (the last price before the window from the hourly candles)`);
    }

    // Aggregates: what is kept equals the keep-all rows from the retention's start; hourly and daily all.
    const iso = (ms: number) => new Date(ms).toISOString();
    assert.deepEqual(
      await rowsOf(kept.db, "candles", "(resolution <> 60 OR bucket >= $1)", [iso(candlesSince)]),
      await rowsOf(full.db, "candles", "(resolution <> 60 OR bucket >= $1)", [iso(candlesSince)]),
    );
    assert.deepEqual(
      await rowsOf(kept.db, "candles"),
      await rowsOf(kept.db, "candles", "(resolution <> 60 OR bucket >= $1)", [iso(candlesSince)]),
    );
    assert.deepEqual(
      await rowsOf(kept.db, "token_usd_candles"),
      await rowsOf(full.db, "token_usd_candles", "(resolution <> 300 OR bucket >= $1)", [iso(seriesSince)]),
    );
    assert.deepEqual(
      await rowsOf(kept.db, "swaps"),
      await rowsOf(full.db, "swaps", "block_time >= $1", [iso(swapsSince)]),
    );
    assert.deepEqual(await dumpRows(kept.db, "pool_events"), await dumpRows(full.db, "pool_events"));

    // Trades: paging stops at the retention's start; without retention it goes through the whole history.
    for (const pool of [market.pools[0], market.pools[5], quiet] as Hex[]) {
      const all = await pageAll(full.db, pool, 37);
      const direct = await rowsOf(full.db, "swaps", "pool = $1", [pool]);
      assert.equal(all.length, direct.length, `${pool}: every trade paged`);
      const keys = all.map((r) => `${r.block_number}:${r.log_index}`);
      assert.equal(new Set(keys).size, keys.length, "no trade twice");
      const sorted = [...all].sort((x, y) => y.block_number - x.block_number || y.log_index - x.log_index);
      assert.deepEqual(all, sorted, "newest first");
      const keptPages = await pageAll(kept.db, pool, 37);
      assert.deepEqual(
        keptPages,
        all.filter((r) => r.block_time.getTime() >= swapsSince),
        `${pool}: the kept trades`,
      );
      // Whatever rate sizes the first windows (none: the whole history at once; one a day: wider
      // than 64 days, so the same; 40: two days; 10,000: a day), the same pages.
      for (const rate of [0, 1, 40, 10_000]) {
        assert.deepEqual(await pageAll(full.db, pool, 37, rate), all, `${pool} at ${rate} trades a day`);
        assert.deepEqual(await pageAll(kept.db, pool, 37, rate), keptPages, `${pool} kept, ${rate} a day`);
      }
    }
    assert.equal((await pageAll(kept.db, quiet, 10)).length, 0, "the quiet pool's trades are all older");

    // Candles: from the retention's start on, the same intervals; 1h and longer, the whole history.
    for (const pool of [market.pools[0], market.pools[3], quiet] as Hex[]) {
      for (const interval of Object.values(CANDLE_INTERVALS)) {
        const name = `${interval} s`;
        for (const side of [0, 1] as const) {
          for (const currency of ["token", "usd"] as const) {
            const read = { chainId: CHAIN, pool, side, currency, intervalSeconds: interval };
            const from = new Date(START);
            const range = { from, to: new Date(END), now: new Date(END) };
            const a = await getPairCandles(kept.db, { ...read, ...range });
            const b = await getPairCandles(full.db, { ...read, ...range });
            const rolledUp = interval < 3600;
            const first = a[0]?.time ?? Number.POSITIVE_INFINITY;
            assert.deepEqual(
              a,
              rolledUp ? b.filter((c) => c.time >= first) : b,
              `${name} ${side} ${currency}`,
            );
            if (rolledUp) {
              assert.ok(
                a.every((c) => c.time >= candlesSince),
                `${name}: nothing before the retention's start`,
              );
              // What the keep-all answer has between the start and the first kept candle carries a close only.
              assert.ok(
                b.filter((c) => c.time >= candlesSince && c.time < first).every((c) => c.volume === 0),
              );
            }
            const page = { ...read, limit: 5000, end: END };
            const pa = await getPairCandlesBefore(kept.db, page);
            const pb = await getPairCandlesBefore(full.db, page);
            assert.deepEqual(
              pa,
              rolledUp ? pb.filter((c) => c.time >= candlesSince) : pb,
              `count-back ${name} ${side} ${currency}: the retained history, opening on the hourly close`,
            );
          }
        }
      }
    }
    for (const token of tokens.slice(0, 5)) {
      for (const intervalMinutes of [5, 15, 30, 60] as const) {
        const read = { chainId: CHAIN, token, days: 30, intervalMinutes, now: new Date(END) };
        const a = await getTokenUsdCandles(kept.db, read);
        const b = await getTokenUsdCandles(full.db, read);
        assert.deepEqual(
          a,
          intervalMinutes === 60 ? b : b.filter((c) => c.time >= seriesSince),
          `${token} ${intervalMinutes}m`,
        );
      }
    }
  });

  it("answers over HTTP: trades paging ends at the oldest kept trade, old minute ranges say where they start", async () => {
    const { key } = await createApiKey(kept.db, "retention");
    const app = createApiServer({
      config: parseConfig({
        devnet: { enabled: false },
        chains: [
          {
            id: CHAIN,
            name: "Synthetic",
            rpc: ["http://127.0.0.1:9"],
            dexes: [
              { name: "Uniswap V2", protocol: "v2", factory: "0x00000000000000000000000000000000000000fa" },
            ],
            referenceTokens: { stablecoins: [market.usdc], wrappedNative: market.weth, wrappedBtc: [] },
          },
        ],
      }),
      db: kept.db,
      logger: createSilentLogger(),
      now: () => new Date(END),
    });
    try {
      await app.listen({ host: "127.0.0.1", port: 0 });
      const api = await createApiClient(app, { key });
      const pool = market.pools[0] as Hex;
      const token0 = (market.chain.reserves(pool).token0 as string).toLowerCase();
      const pair = { asset_id: `${token0}:${CHAIN}`, pair_id: `${pool}:${CHAIN}` };
      const since = await loadRetainedFrom(kept.db);

      let cursor: string | null = null;
      let trades = 0;
      let pages = 0;
      do {
        const answer = await api.get("/api/v1/trades", {
          ...pair,
          limit: 40,
          ...(cursor ? { cursor } : {}),
        });
        assert.equal(answer.status, 200);
        const page = answer.body as { date: string }[];
        trades += page.length;
        assert.ok(
          page.every((t) => Date.parse(t.date) >= (since.get("swaps") as number)),
          "only kept trades",
        );
        cursor = answer.headers.get("x-next-cursor");
        if (cursor)
          assert.equal(Buffer.from(cursor, "base64url").toString().split(".").length, 3, "with the time");
        pages += 1;
      } while (cursor && pages < 1000);
      const { rows } = await kept.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM swaps WHERE chain_id = $1 AND pool = $2",
        [CHAIN, pool],
      );
      assert.equal(trades, rows[0]?.n, "every kept trade, then no cursor");
      assert.ok(pages > 2, `${pages} pages`);
      const older = Buffer.from(`${BLOCKS_PER_DAY}.0.${START / 1000 + 86_400}`).toString("base64url");
      const past = await api.get("/api/v1/trades", { ...pair, cursor: older });
      assert.deepEqual(
        [past.status, past.body],
        [200, []],
        "a cursor older than what is kept: an empty page",
      );

      const oldRange = {
        ...pair,
        from: new Date(START + DAY).toISOString(),
        to: new Date(START + 2 * DAY).toISOString(),
      };
      const minutes = await api.get("/api/v1/candles", { ...oldRange, interval: "5m" });
      assert.equal(minutes.status, 404);
      const start = new Date(since.get("candles_1m") as number).toISOString().replace(".000Z", "Z");
      assert.match(
        (minutes.body as { message: string }).message,
        new RegExp(`5m candles are kept from ${start} on`),
      );
      const hours = await api.get("/api/v1/candles", { ...oldRange, interval: "1h" });
      assert.equal(hours.status, 200, "hourly candles reach further back");
      assert.ok((hours.body as unknown[]).length >= 24);
      const across = await api.get("/api/v1/candles", {
        ...pair,
        interval: "15m",
        from: new Date(START).toISOString(),
        to: new Date(END).toISOString(),
      });
      assert.equal(across.status, 200);
      const dates = (across.body as { time: number }[]).map((c) => c.time);
      assert.ok(
        dates.length > 0 && dates.every((t) => t >= (since.get("candles_1m") as number)),
        "from the start on",
      );
    } finally {
      await app.close();
    }
  });

  it("takes rows beyond the partitions made into the DEFAULT partition, and moves them out at the next upkeep", async () => {
    const far = Date.parse("2040-06-15T10:00:00Z");
    const swap: BatchSwap = {
      pool: quiet,
      dex: "Uniswap V2",
      protocol: "v2",
      token0: "0x0000000000000000000000000000000000000001",
      token1: "0x0000000000000000000000000000000000000002",
      decimals0: 18,
      decimals1: 18,
      blockNumber: 9_000_000,
      logIndex: 0,
      blockHash: `0x${"1".repeat(64)}`,
      blockTime: new Date(far),
      txHash: `0x${"2".repeat(64)}`,
      txIndex: 0,
      maker: null,
      exchange: null,
      sender: "0x00000000000000000000000000000000000000bb",
      recipient: "0x00000000000000000000000000000000000000aa",
      amount0In: 10n,
      amount1In: 0n,
      amount0Out: 0n,
      amount1Out: 9n,
      reserve0: 1000n,
      reserve1: 900n,
      sqrtPriceX96: null,
      liquidity: null,
      tick: null,
      price: null,
    };
    const inserted = await insertSwaps(kept.db, CHAIN, [swap]);
    assert.equal(inserted.length, 1, "the insert succeeds");
    const candle = {
      pool: quiet,
      bucket: far,
      open: 1,
      high: 1,
      low: 1,
      close: 1,
      open1: 1,
      high1: 1,
      low1: 1,
      close1: 1,
      volume0: 1,
      volume1: 1,
      volumeUsd: 0,
      usd0: null,
      usd1: null,
      trades: 1,
      buys0: 0,
      firstKey: 900_000_000_000,
      lastKey: 900_000_000_000,
      sums: {
        volume0: { digits: 1n, scale: 0 },
        volume1: { digits: 1n, scale: 0 },
        volumeUsd: { digits: 0n, scale: 0 },
        usd0: null,
        usd1: null,
      },
    };
    await saveCandles(kept.db, CHAIN, [{ ...candle, resolution: 60 }]);
    await saveSeriesCandles(kept.db, CHAIN, [
      {
        token: swap.token0,
        resolution: 300,
        bucket: far,
        open: 1,
        high: 1,
        low: 1,
        close: 1,
        volume: 1,
        volumeExact: { digits: 1n, scale: 0 },
        sumPvExact: { digits: 1n, scale: 0 },
        sumVExact: { digits: 1n, scale: 0 },
        average: 1,
        firstKey: 900_000_000_000,
        lastKey: 900_000_000_000,
      },
    ]);
    const tables = RANGE_TABLES as readonly RangeTable[];
    for (const table of tables) {
      const rows = await rowsPerPartition(kept.db, table.parent);
      assert.equal(
        rows.get(defaultPartitionName(table)),
        1,
        `${table.parent}: the row is in the DEFAULT partition`,
      );
    }
    const found = await findSwaps(kept.db, { chainId: CHAIN, pool: quiet, before: null, limit: 5, now: END });
    assert.equal(found[0]?.block_number, 9_000_000, "and is read");

    const result = await runStorageUpkeep(kept.db, retained, END);
    for (const table of tables) {
      const name = partitionName(table, periodStart(table, far));
      assert.ok(result.created.includes(name), `${name} made for it`);
      const rows = await rowsPerPartition(kept.db, table.parent);
      assert.equal(rows.get(defaultPartitionName(table)), undefined, `${table.parent}: DEFAULT empty again`);
      assert.equal(rows.get(name), 1, `${table.parent}: the row moved to ${name}`);
    }
    const again = await findSwaps(kept.db, { chainId: CHAIN, pool: quiet, before: null, limit: 5, now: END });
    assert.deepEqual(again, found, "the same row, read from its partition");
  });
});
