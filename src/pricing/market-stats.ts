/**
 * The USD liquidity of pairs and tokens and the 24-hour change of tokens' USD prices (stored in
 * pair_windows and token_windows beside the windows' figures made of trades), recomputed for the
 * pools and tokens a batch touched and, as the window slides, for the tokens whose change the
 * clock moved. Never per request.
 */

import type { Ratio } from "../exact/ratio.js";
import { finite, type MarketPool, NATIVE_COIN } from "../model/index.js";
import type { DbClient, Queryable } from "../store/db.js";
import { poolsTradedIn } from "../store/market-trades.js";
import { poolsOfTokens, tokensOfPools } from "../store/pools.js";
import {
  loadPairLiquidityFigures,
  loadPairLiquidityInputs,
  loadTokenSeriesEnds,
  loadTokenStatsInputs,
  lockChainStats,
  type PairLiquidityFigures,
  type PairLiquidityRow,
  savePairLiquidity,
  saveTokenStats,
  type TokenSeriesEnds,
  type TokenStatsRow,
  tokensWithTradesInWindow,
} from "../store/stats.js";
import { addExact, EXACT_ZERO, type ExactDecimal, exactOf, exactValue } from "./exact-sum.js";
import { usdSeriesToken } from "./native-coin.js";
import { exactBalancesOf, spotRatio0 } from "./pool-state.js";
import { pairLiquidityUsd, percentChange, statsWindow, usdRatioOf } from "./stats.js";
import type { GraphPool } from "./usd-prices.js";

/** A pool's USD liquidity with its exact value (the double as the decimal it denotes). */
const withExact = (liquidityUsd: number | null) => ({
  liquidityUsd,
  liquidityExact: liquidityUsd !== null && Number.isFinite(liquidityUsd) ? exactOf(liquidityUsd) : null,
});

/**
 * Recomputes the USD liquidity of pools (a pool without any event has none to update, and gets
 * its figure with its first event).
 */
export async function refreshPairLiquidity(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<PairLiquidityRow[]> {
  if (pools.length === 0) return [];
  const inputs = await loadPairLiquidityInputs(db, chainId, [...pools].sort());
  const rows: PairLiquidityRow[] = inputs
    .filter((r) => r.state !== null)
    .map((r) => {
      const [reserve0, reserve1] = r.state
        ? exactBalancesOf(r.state, r.decimals0, r.decimals1)
        : [null, null];
      const ratio0 = r.state ? spotRatio0(r.protocol, r.state, r.decimals0, r.decimals1) : null;
      return {
        pool: r.pool,
        token0: r.token0,
        token1: r.token1,
        ...withExact(
          pairLiquidityUsd({
            reserve0,
            reserve1,
            ratio0,
            usd0: usdRatioOf(r.usd0),
            usd1: usdRatioOf(r.usd1),
          }),
        ),
      };
    });
  await savePairLiquidity(db, chainId, rows);
  return rows;
}

/**
 * The tokens whose statistics to recompute with `tokens`: the native coin beside the wrapped
 * native token, since the native coin's change is read from the wrapped token's series (both
 * change when it moves).
 */
function withNativeCoin(tokens: Iterable<string>, wrappedNative: string | undefined): string[] {
  const out = new Set(tokens);
  if (wrappedNative !== undefined && out.has(wrappedNative.toLowerCase())) out.add(NATIVE_COIN);
  return [...out].sort();
}

/**
 * Recomputes tokens' liquidity and 24-hour change at `now` (ms) from their pools' liquidity, their
 * prices and series.
 * `wrappedNative`: the chain's wrapped native token, whose USD series the native coin's change is
 * measured against (its price is the wrapped token's: so is its change).
 */
export async function refreshTokenStats(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
  now: number,
  liquidityFloorUsd: number,
  wrappedNative?: string,
): Promise<void> {
  if (tokens.length === 0) return;
  const window = statsWindow(now);
  const asked = withNativeCoin(tokens, wrappedNative);
  const inputs = await loadTokenStatsInputs(db, chainId, asked, window.start, liquidityFloorUsd);
  const native = inputs.find((r) => r.token === NATIVE_COIN);
  const seriesToken = native ? usdSeriesToken(NATIVE_COIN, wrappedNative) : NATIVE_COIN;
  if (native && seriesToken !== NATIVE_COIN) {
    const ends = (await loadTokenSeriesEnds(db, chainId, [seriesToken], window.start)).get(seriesToken);
    native.closeBefore = ends?.closeBefore ?? null;
    native.openIn = ends?.openIn ?? null;
  }
  await saveTokenStats(
    db,
    chainId,
    inputs
      // The native coin added for the wrapped token only where it has a price (it exists there).
      .filter((r) => r.token !== NATIVE_COIN || r.usdPrice !== null || tokens.includes(NATIVE_COIN))
      .map((r) => ({
        token: r.token,
        // The USD price now against the token's USD series when the window starts.
        priceChange: percentChange(r.closeBefore ?? r.openIn, r.usdPrice),
        liquidityUsd: r.liquidityUsd,
      })),
  );
}

/** What a batch or a rollback changed, for the statistics. */
export type StatsChanges = {
  /** Pools with trades added or removed: their liquidity (their trades moved their state). */
  tradedPools: Set<string>;
  /** Pools whose state moved without trades (liquidity events): their liquidity. */
  movedPools: Set<string>;
  /** Tokens whose USD price row changed: the liquidity of their pools, their own figures. */
  repricedTokens: Set<string>;
};

export function emptyStatsChanges(): StatsChanges {
  return { tradedPools: new Set(), movedPools: new Set(), repricedTokens: new Set() };
}

/**
 * The market in memory as the statistics read it (pricing.ts keeps it equal to the database):
 * the pools with their states, the tokens' decimals, the routing graph (each token's pools, each
 * pool's spot price) and `token_prices.usd_price` as stored (absent: no row). With it, the pools
 * of repriced tokens and their USD liquidity are found and computed without reading the
 * database — the liquidity-only refresh otherwise reads every such pool with six joins.
 */
export type StatsMarket = {
  pools: ReadonlyMap<string, MarketPool>;
  decimals: ReadonlyMap<string, number | null>;
  graphPools: ReadonlyMap<string, GraphPool>;
  poolsOf: ReadonlyMap<string, readonly GraphPool[]>;
  usd: ReadonlyMap<string, number | null>;
  /** The chain's pools' liquidity as stored (shared with the minute slide). */
  pairLiquidity: PairLiquidityMirror;
  /** Per token, its USD series at the window's start as last read (see SeriesEndsMemo). */
  series: Map<string, SeriesEndsMemo>;
};

/**
 * The pricing's copy of each `pair_windows` row's liquidity, so that a batch computes its tokens'
 * liquidity (sums over each token's pools: thousands for WETH) in memory instead of
 * re-reading every pool of every repriced token. `pairs` null: not loaded, or dropped because it
 * may differ from the database (a batch or slide whose transaction failed, a rollback); loaded
 * again under the statistics lock by the next batch. `slides`: minute slides in flight. A slide
 * applies its rows under the statistics lock, inside its transaction; while one is in flight a
 * batch does not read the copy (the slide may have failed after applying rows that were then
 * rolled back) and computes its tokens from the database, as without the copy.
 */
export type PairLiquidityMirror = { pairs: Map<string, PairLiquidityFigures> | null; slides: number };

export const createPairLiquidityMirror = (): PairLiquidityMirror => ({ pairs: null, slides: 0 });

/**
 * A token's USD series at the 24-hour window's start (the price after its latest trade before it,
 * after its first one in it), as read for a window starting at minute `slot`. Valid until the
 * token's series gets a point (pricing.ts drops the entry) or the window's start moves.
 */
export type SeriesEndsMemo = TokenSeriesEnds & { slot: number };

const MINUTE_MS = 60_000;

/** A float8 as a row sent by the driver stores it: not finite → null; -0 → 0 (sent as text "0"). */
const asStored = (value: number | null): number | null => {
  const f = finite(value);
  return f === null ? null : f + 0;
};

/** Applies saved liquidity rows to the copy (as `savePairLiquidity` writes them). */
export function applyPairLiquidity(
  pairs: Map<string, PairLiquidityFigures>,
  rows: readonly PairLiquidityRow[],
): void {
  for (const row of rows) pairs.set(row.pool, { liquidityUsd: asStored(row.liquidityUsd) });
}

/**
 * Token liquidity and change from the market in memory and the copy of the pools' liquidity, as
 * `refreshTokenStats` computes them from the database (loadTokenStatsInputs): per token, over its
 * pools in address order (each once), the exact sum of the liquidity of those at or above the
 * floor whose both tokens have a USD price (each pool's liquidity double as the decimal it
 * denotes), rounded once; its stored USD price against its series at the window's start.
 */
export function memoryTokenStats(
  market: Pick<StatsMarket, "poolsOf" | "usd">,
  pairs: ReadonlyMap<string, PairLiquidityFigures>,
  tokens: readonly string[],
  ends: ReadonlyMap<string, TokenSeriesEnds>,
  liquidityFloorUsd: number,
): TokenStatsRow[] {
  const priced = (token: string) => (market.usd.get(token) ?? null) !== null;
  return tokens.map((token) => {
    let liquidity: ExactDecimal | null = null;
    let last: string | null = null;
    for (const pool of market.poolsOf.get(token) ?? []) {
      // A pool of the token on both sides is listed twice, next to itself.
      if (pool.address === last) continue;
      last = pool.address;
      const l = pairs.get(pool.address)?.liquidityUsd ?? null;
      if (l !== null && l >= liquidityFloorUsd && priced(pool.token0) && priced(pool.token1)) {
        liquidity = addExact(liquidity ?? EXACT_ZERO, exactOf(l));
      }
    }
    const end = ends.get(token);
    return {
      token,
      priceChange: percentChange(end?.closeBefore ?? end?.openIn ?? null, market.usd.get(token) ?? null),
      liquidityUsd: liquidity === null ? 0 : exactValue(liquidity),
    };
  });
}

/**
 * The tokens' series at the window's start (the native coin's: the wrapped native token's): from
 * the memo where still valid, the rest read in one go.
 */
async function seriesEnds(
  client: Queryable,
  chainId: number,
  memo: Map<string, SeriesEndsMemo>,
  tokens: readonly string[],
  windowStart: number,
  wrappedNative: string | undefined,
): Promise<Map<string, TokenSeriesEnds>> {
  const slot = Math.floor(windowStart / MINUTE_MS);
  const found = new Map<string, TokenSeriesEnds>();
  const missing: string[] = [];
  for (const token of new Set(tokens.map((t) => usdSeriesToken(t, wrappedNative)))) {
    const kept = memo.get(token);
    if (kept && kept.slot === slot) found.set(token, kept);
    else missing.push(token);
  }
  if (missing.length > 0) {
    const read = await loadTokenSeriesEnds(client, chainId, missing.sort(), windowStart);
    for (const token of missing) {
      const ends = read.get(token) ?? { closeBefore: null, openIn: null };
      // Every field in the literal (a spread's object keeps them out of line: 40 bytes more).
      memo.set(token, { closeBefore: ends.closeBefore, openIn: ends.openIn, slot });
      found.set(token, ends);
    }
  }
  const out = new Map<string, TokenSeriesEnds>();
  for (const token of tokens) {
    const ends = found.get(usdSeriesToken(token, wrappedNative));
    if (ends) out.set(token, ends);
  }
  return out;
}

/**
 * A pool's USD liquidity from the market in memory: the very inputs `loadPairLiquidityInputs` reads
 * (state, decimals, exact spot price, stored USD prices), through the same function. Undefined:
 * the pool has no stored state (no row to update), as the liquidity-only refresh skips it.
 */
export function memoryPairLiquidity(
  market: StatsMarket,
  address: string,
  /** The stored USD prices as exact ratios, made once per token for a batch's pools. */
  usdRatios: Map<string, Ratio | null> = new Map(),
): number | null | undefined {
  const pool = market.pools.get(address);
  if (!pool || pool.state.stateBlock === null) return undefined;
  const decimals0 = market.decimals.get(pool.token0) ?? null;
  const decimals1 = market.decimals.get(pool.token1) ?? null;
  const [reserve0, reserve1] = exactBalancesOf(pool.state, decimals0, decimals1);
  const graphPool = market.graphPools.get(address);
  const ratio0 =
    graphPool?.ratio0 !== undefined
      ? graphPool.ratio0
      : spotRatio0(pool.protocol, pool.state, decimals0, decimals1);
  const usdRatio = (token: string) => {
    let r = usdRatios.get(token);
    if (r === undefined) {
      r = usdRatioOf(market.usd.get(token) ?? null);
      usdRatios.set(token, r);
    }
    return r;
  };
  return pairLiquidityUsd({
    reserve0,
    reserve1,
    ratio0,
    usd0: usdRatio(pool.token0),
    usd1: usdRatio(pool.token1),
  });
}

/** Brings the statistics touched by `changes` up to date at `now` (ms). */
export async function refreshChangedStats(
  client: DbClient,
  chainId: number,
  changes: StatsChanges,
  now: number,
  liquidityFloorUsd: number,
  step: <T>(name: string, run: () => Promise<T>) => Promise<T> = (_name, run) => run(),
  market?: StatsMarket,
  /**
   * A large chain's share per batch (pricing.ts `figuresPerBatch`): the pools whose liquidity is
   * refreshed beside the moved ones, instead of every pool of a repriced token; and the tokens of
   * more pools than `hubs.minPools`, whose statistics are refreshed only when `hubs.due`.
   */
  share?: {
    pools: ReadonlySet<string>;
    hubs: { minPools: number; due: ReadonlySet<string> };
  },
  /** The chain's wrapped native token (refreshTokenStats). */
  wrappedNative?: string,
): Promise<void> {
  const liquidityPools = new Set(changes.movedPools);
  if (share) {
    for (const pool of share.pools) liquidityPools.add(pool);
  } else if (market) {
    for (const token of changes.repricedTokens) {
      for (const pool of market.poolsOf.get(token) ?? []) liquidityPools.add(pool.address);
    }
  } else {
    const repricedPools = await step("stats_pools_of", () =>
      poolsOfTokens(client, chainId, [...changes.repricedTokens]),
    );
    for (const p of repricedPools) liquidityPools.add(p.pool);
  }
  for (const pool of changes.tradedPools) liquidityPools.add(pool);
  const touchedPools = [...liquidityPools];
  if (touchedPools.length === 0 && changes.repricedTokens.size === 0) return;
  await lockChainStats(client, chainId);
  if (market && market.pairLiquidity.slides === 0 && !market.pairLiquidity.pairs) {
    market.pairLiquidity.pairs = await step("stats_copy", () => pairLiquidityCopy(client, chainId, market));
  }
  // Kept up to date by every batch; read only while no slide is in flight (PairLiquidityMirror).
  const pairs = market?.pairLiquidity.pairs ?? null;
  const tokens = new Set(changes.repricedTokens);
  if (market) {
    await step("stats_liquidity", async () => {
      const rows: PairLiquidityRow[] = [];
      const usdRatios = new Map<string, Ratio | null>();
      for (const pool of [...liquidityPools].sort()) {
        const liquidityUsd = memoryPairLiquidity(market, pool, usdRatios);
        const tokens = market.pools.get(pool);
        if (liquidityUsd !== undefined && tokens) {
          rows.push({
            pool,
            token0: tokens.token0,
            token1: tokens.token1,
            ...withExact(liquidityUsd),
          });
        }
      }
      // The copy says which rows hold this figure already: not sent (the upsert would skip them).
      const current = pairs && market.pairLiquidity.slides === 0 ? pairs : null;
      const changed = current
        ? rows.filter((row) => {
            const stored = current.get(row.pool);
            return !stored || stored.liquidityUsd !== asStored(row.liquidityUsd);
          })
        : rows;
      await savePairLiquidity(client, chainId, changed);
      if (pairs) applyPairLiquidity(pairs, changed);
    });
    for (const address of touchedPools) {
      const pool = market.pools.get(address);
      if (!pool) continue;
      tokens.add(pool.token0);
      tokens.add(pool.token1);
    }
  } else {
    await step("stats_liquidity", () => refreshPairLiquidity(client, chainId, touchedPools));
    for (const p of await step("stats_tokens_of", () => tokensOfPools(client, chainId, touchedPools))) {
      tokens.add(p.token0);
      tokens.add(p.token1);
    }
  }
  if (share && market) {
    const hub = (token: string) => (market.poolsOf.get(token)?.length ?? 0) > share.hubs.minPools;
    for (const token of tokens) if (hub(token) && !share.hubs.due.has(token)) tokens.delete(token);
    for (const token of share.hubs.due) if (hub(token)) tokens.add(token);
  }
  if (market && pairs && market.pairLiquidity.slides === 0) {
    // The native coin added for the wrapped token only on a chain where it trades.
    const sorted = withNativeCoin(tokens, wrappedNative).filter(
      (token) => token !== NATIVE_COIN || market.poolsOf.has(NATIVE_COIN),
    );
    const ends = await step("stats_series", () =>
      seriesEnds(client, chainId, market.series, sorted, statsWindow(now).start, wrappedNative),
    );
    const rows = await step("stats_tokens_sums", async () =>
      memoryTokenStats(market, pairs, sorted, ends, liquidityFloorUsd),
    );
    await step("stats_tokens", () => saveTokenStats(client, chainId, rows));
    return;
  }
  await step("stats_tokens", () =>
    refreshTokenStats(client, chainId, [...tokens], now, liquidityFloorUsd, wrappedNative),
  );
}

/**
 * The chain's pools' liquidity as stored, to keep in memory; null when a row's pool is not in the
 * market (its tokens' sums would miss it: they are then read from the database).
 */
async function pairLiquidityCopy(
  client: Queryable,
  chainId: number,
  market: StatsMarket,
): Promise<Map<string, PairLiquidityFigures> | null> {
  const loaded = await loadPairLiquidityFigures(client, chainId);
  // Keyed by the market's own address strings (a loaded row's is a copy: 64 bytes a pool).
  const pairs = new Map<string, PairLiquidityFigures>();
  for (const [address, figures] of loaded) {
    const pool = market.pools.get(address);
    if (!pool) return null;
    pairs.set(pool.address, figures);
  }
  return pairs;
}

/**
 * What sliding the 24-hour window to `now` recomputes: the tokens whose 24-hour change the clock
 * moved since the last slide at `since` (ms, by this process: `slidSince`), or, when that is
 * unknown, an hour or more ago or later than `now`, every token with trades in the window as its
 * windows were last computed. The liquidity of pools and tokens does not move with the clock; the
 * figures made of trades slide with the market windows (market-windows.ts `planMarketSlide`). The
 * runtime's slide recomputes them in short transactions (pricing/slide.ts).
 */
export async function planStatsSlide(
  db: Queryable,
  chainId: number,
  now: Date,
  since?: number,
): Promise<{ tokens: string[] }> {
  if (!Number.isFinite(now.getTime())) throw new Error(`statistics slid to an invalid time: ${now}`);
  if (since !== undefined && since <= now.getTime() && now.getTime() - since < HOUR_MS) {
    return { tokens: await slidSince(db, chainId, since, now.getTime()) };
  }
  return { tokens: await tokensWithTradesInWindow(db, chainId) };
}

const HOUR_MS = 3_600_000;

/**
 * The tokens whose 24-hour change the clock moved between two slides of the window
 * (`statsWindow`), from `from` to `to` (ms): the tokens of the pools that traded in the minutes
 * that left it (their change is measured from the price after the latest trade before the
 * window's start, else after the first one in it), found from the trades of that span
 * (market-trades.ts `poolsTradedIn`, as the market windows' slide). A superset of what changed;
 * every other token's change is what it was.
 */
async function slidSince(db: Queryable, chainId: number, from: number, to: number): Promise<string[]> {
  const [start, end] = [statsWindow(from).start, statsWindow(to).start];
  const tokens = new Set<string>();
  for (const p of await poolsTradedIn(db, chainId, end > start ? [{ from: start, to: end }] : [])) {
    tokens.add(p.token0);
    tokens.add(p.token1);
  }
  return [...tokens].sort();
}
