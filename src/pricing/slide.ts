/**
 * The minute's slide of a chain's market windows and tokens' 24-hour changes, in short
 * transactions.
 *
 * What the clock moved is planned first (market-stats.ts `planStatsSlide`, market-windows.ts
 * `planMarketSlide`); then the tokens' changes and the pools' and tokens' windows are recomputed a chunk at a time, each
 * chunk in its own transaction under the chain's statistics lock, so that a batch waits for one
 * chunk (about 50 ms) rather than for the whole slide (seconds on a chain of 300,000 pools).
 * A batch in between recomputes the pools and tokens it touched at its own, later, clock; a chunk
 * after it may write them again at the slide's instant: the next slide brings back whatever a
 * trade leaving the window changed in between. The market windows' minute is stored by the last
 * transaction: a slide cut short (a failed chunk, a process that died) leaves it where it was,
 * and the next slide recomputes everything since. The statistics' `since` is the caller's,
 * moved only once the slide has finished.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../internal/logger.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { setMarketMinute } from "../store/market-windows.js";
import { lockChainStats } from "../store/stats.js";
import { type PairLiquidityMirror, planStatsSlide, refreshTokenStats } from "./market-stats.js";
import { type MarketWork, planMarketSlide, refreshMarketWindows } from "./market-windows.js";

/** `tokens`: the tokens whose 24-hour change was recomputed; `windows`: the market windows' slide. */
export type SlideResult = { tokens: number; windows: MarketWork };

export type SlideOptions = {
  liquidityFloorUsd: number;
  /** The chain's wrapped native token (market-stats.ts refreshTokenStats). */
  wrappedNative?: string | undefined;
  /** The pricing's copy of the pools' liquidity: dropped when a chunk fails (under the lock). */
  mirror: PairLiquidityMirror;
  /** When this process last finished a slide of the chain (ms), if it did. */
  since?: number | undefined;
  /**
   * The first chunk's size (pools or tokens), and how long a chunk should hold the statistics lock
   * (ms): each next chunk's size follows the time the last one took, halved or doubled at most.
   * `rest`: after each chunk the slide waits this many times as long as the chunk took, leaving
   * the cores to the batches (the slide's queries run in Postgres, on the same cores).
   */
  chunks?: { first: number; ms: number; rest?: number };
  /** Aborted: no chunk after the current one (the slide rejects with the signal's reason). */
  signal?: AbortSignal | undefined;
  logger?: Logger;
};

/**
 * The chunks by default: 64 pools or tokens first, then about 50 ms each, at most 8,192, each
 * followed by a rest as long (a slide's work then takes about twice as long, within its minute).
 */
const CHUNKS = { first: 64, ms: 50, rest: 1 };
const MAX_CHUNK = 8192;

/** Slides a chain's market windows and tokens' changes to `now`, a chunk per transaction. */
export async function slideChainStats(
  db: Db,
  chainId: number,
  now: Date,
  options: SlideOptions,
): Promise<SlideResult> {
  const started = performance.now();
  const chunks = options.chunks ?? CHUNKS;
  const { mirror } = options;
  const time = now.getTime();
  /** Per part of the slide, the longest a chunk held the lock (ms). */
  const longest: Record<string, number> = {};
  let transactions = 0;

  /**
   * One transaction holding the statistics lock. While it holds the lock it counts as a slide in
   * flight (PairLiquidityMirror): a batch that takes the lock as this one fails reads the database, not
   * a copy that held the failed chunk's rows; and the copy is dropped on failure.
   */
  const locked = async <T>(run: (client: DbClient) => Promise<T>): Promise<T> => {
    let counted = false;
    try {
      return await withTransaction(db, async (client) => {
        await lockChainStats(client, chainId);
        mirror.slides += 1;
        counted = true;
        const result = await run(client);
        transactions += 1;
        return result;
      });
    } catch (error) {
      mirror.pairs = null;
      throw error;
    } finally {
      if (counted) mirror.slides -= 1;
    }
  };

  /** Runs `items` through `run` in chunks whose size follows the time each took (toward `chunks.ms`). */
  const inChunks = async (
    part: string,
    items: readonly string[],
    run: (client: DbClient, chunk: string[]) => Promise<void>,
  ) => {
    let size = Math.max(1, chunks.first);
    for (let i = 0; i < items.length; ) {
      options.signal?.throwIfAborted();
      const chunk = items.slice(i, i + size);
      // The time it held the lock (not the wait for it): the rest after it, the next chunk's size.
      let held = 0;
      await locked(async (client) => {
        const began = performance.now();
        await run(client, chunk);
        held = performance.now() - began;
      });
      longest[part] = Math.round(Math.max(longest[part] ?? 0, held));
      i += chunk.length;
      const rest = (chunks.rest ?? 0) * held;
      if (rest >= 1 && i < items.length) {
        // A stop during the rest ends the slide with the signal's reason, as between chunks.
        await sleep(rest, undefined, { signal: options.signal }).catch((error: unknown) => {
          options.signal?.throwIfAborted();
          throw error;
        });
      }
      const scaled = Math.round((size * chunks.ms) / Math.max(held, 1));
      size = Math.min(MAX_CHUNK, 2 * size, Math.max(1, Math.floor(size / 2), scaled));
    }
  };

  options.signal?.throwIfAborted();
  // The plan reads committed rows only (trades' time index, token_windows, market_sync): no lock.
  const { stats, windows } = await withTransaction(db, async (client) => ({
    stats: await planStatsSlide(client, chainId, now, options.since),
    windows: await planMarketSlide(client, chainId, time),
  }));

  await inChunks("tokens", stats.tokens, (client, tokens) =>
    refreshTokenStats(client, chainId, tokens, time, options.liquidityFloorUsd, options.wrappedNative),
  );
  const work: MarketWork = { trades: 0, rows: 0, pools: 0, tokens: 0 };
  if (windows) {
    const clock = () => time;
    await inChunks("window_pools", windows.pools, async (client, pools) => {
      work.rows += (await refreshMarketWindows(client, chainId, { pools, tokens: [] }, clock)).rows;
    });
    await inChunks("window_tokens", windows.tokens, async (client, tokens) => {
      work.rows += (await refreshMarketWindows(client, chainId, { pools: [], tokens }, clock)).rows;
    });
    work.pools = windows.pools.length;
    work.tokens = windows.tokens.length;
    await locked((client) => setMarketMinute(client, chainId, windows.minute));
  }
  options.logger?.debug(
    {
      chain_id: chainId,
      tokens: stats.tokens.length,
      window_pools: work.pools,
      window_tokens: work.tokens,
      transactions,
      longest_ms: longest,
      ms: Math.round(performance.now() - started),
    },
    "slid statistics",
  );
  return { tokens: stats.tokens.length, windows: work };
}
