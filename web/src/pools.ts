// The home page's pool lists, pure: what each list shows (top by volume, trending, new) and the
// cells and links of a pool's row.

import type { Network, PoolSort, TokenMarket, TopPool, WindowName } from "./api.js";
import { type ChangeDirection, formatAge, formatUsdCompact } from "./format.js";
import { tokenIdOf } from "./market.js";
import { formatCount } from "./market-stats.js";
import { basePrice, baseQuote, baseSide, poolVenue, poolVenueTitle } from "./pool-label.js";
import { defaultDays, defaultInterval, formatRoute } from "./route.js";

export type PoolList = {
  sort: PoolSort;
  /** `top`, `trending`, `new`: the list's test id is `home-<id>`. */
  id: string;
  title: string;
  subtitle: string;
  /** The window of the change and volume columns. */
  window: WindowName;
};

/** The three lists of each network, in the order shown. */
export const poolLists: readonly PoolList[] = [
  { sort: "volume", id: "top", title: "Top pools", subtitle: "by 24 h volume", window: "24h" },
  {
    sort: "trending",
    id: "trending",
    title: "Trending",
    subtitle: "1 h volume against the day's hourly average",
    window: "1h",
  },
  { sort: "new", id: "new", title: "New pools", subtitle: "most recently created, traded", window: "24h" },
];

/** Rows per list. */
export const poolListSize = 10;

/**
 * The token page of a pool's token, opened on that pool: a click on `WETH` in `WETH/USDC` shows
 * WETH's page charting that very pool.
 */
export function poolTokenHref(
  pool: Pick<TopPool, "pair_id" | "chain" | "token0_address" | "token1_address">,
  side: 0 | 1,
): string {
  const tokenId = tokenIdOf(side === 0 ? pool.token0_address : pool.token1_address, pool.chain);
  return formatRoute({
    name: "token",
    tokenId,
    pairId: pool.pair_id.toLowerCase(),
    interval: defaultInterval,
    days: defaultDays,
  });
}

export type PoolRow = {
  pairId: string;
  /** Base, then quote (`WETH/USDC`): the API's name of the pool. */
  symbols: [string, string];
  hrefs: [string, string];
  /** The DEX, its family and hook, a pool id; for new pools how long ago the pool was created. */
  venue: string;
  venueTitle: string;
  protocol: string;
  /** The base's USD price. */
  price: string;
  /** The base token's USD change over the list's window. */
  change: { text: string; direction: ChangeDirection };
  volume: string;
  liquidity: string;
  /** Buys and sells of token0 in the list's window. */
  trades: string;
};

/**
 * The pools a list shows: trending is about where a trader can trade, so a pool without a USD
 * liquidity (a token nobody prices, a pool too thin to count) is left out of it.
 */
export function listedPools(pools: readonly TopPool[], list: PoolList): TopPool[] {
  if (list.sort !== "trending") return [...pools];
  return pools.filter((pool) => pool.liquidity_usd !== null && pool.liquidity_usd > 0);
}

/** The token ids whose market records a list's rows show (each pool's base), at most 50 (one request). */
export function baseTokenIds(pools: readonly TopPool[]): string[] {
  return [...new Set(pools.map((pool) => tokenIdOf(pool.base_address, pool.chain)))].slice(0, 50);
}

/**
 * The cells of a pool's row in a list; `markets` holds the market records of the pools' bases
 * (their USD change over the list's window).
 */
export function poolRow(
  pool: TopPool,
  list: PoolList,
  now: number,
  markets: ReadonlyMap<string, TokenMarket> = new Map(),
): PoolRow {
  const stats = pool.windows?.[list.window];
  let venue = poolVenue(pool);
  if (list.sort === "new" && pool.created_at) {
    const created = Date.parse(pool.created_at);
    if (Number.isFinite(created)) venue = `${venue} · created ${formatAge(created, now)}`;
  }
  const side = baseSide(pool);
  const { price, change } = basePrice(pool, markets, list.window);
  return {
    pairId: pool.pair_id,
    symbols: baseQuote(pool).symbols,
    hrefs: [poolTokenHref(pool, side), poolTokenHref(pool, side === 0 ? 1 : 0)],
    venue,
    venueTitle: poolVenueTitle(pool),
    protocol: pool.protocol,
    price,
    change,
    volume: formatUsdCompact(stats?.volume_usd),
    liquidity: formatUsdCompact(pool.liquidity_usd),
    trades: stats ? `${formatCount(stats.buys)} / ${formatCount(stats.sells)}` : "—",
  };
}

/** The network's line under its name: how far it is indexed and how much it holds. */
export function networkSummary(network: Network): string {
  const parts: string[] = [];
  if (network.indexed_block !== null) parts.push(`block ${formatCount(network.indexed_block)}`);
  parts.push(
    `${formatCount(network.dexes)} ${network.dexes === 1 ? "DEX" : "DEXes"}`,
    `${formatCount(network.pools)} pools`,
    `${formatCount(network.tokens)} tokens`,
  );
  return parts.join(" · ");
}
