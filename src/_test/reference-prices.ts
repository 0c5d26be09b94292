import type { Config } from "../config/schema.js";
import type { Queryable } from "../store/db.js";
import {
  type Exact,
  exact,
  exactMul,
  type ReferenceQuote,
  referenceCombine,
  toDouble,
  unitsExact,
  unitsOf,
} from "./exact.js";

/**
 * An independent reference for the USD prices and USD values of a chain's trades, for tests: the
 * rule docs/PRICING.md states ("Pool state and depth", "USD price of a token", "Per trade"),
 * written out again over the stored raw rows (swaps and pool events with the state after each,
 * tokens' decimals) in exact arithmetic (src/_test/exact.ts). It shares no code with
 * src/pricing; slow and plain on purpose.
 *
 * - A pool's state is the one its latest event carries; a side's depth is the smaller of its
 *   balance now and just before the first swap of the pool's latest block with swaps.
 * - Anchors (the stablecoins) are exactly 1. Reference tokens are priced first, round by round,
 *   through pools against anchors and reference tokens priced in earlier rounds; then every token
 *   not yet priced through pools against any token priced in earlier rounds. A round's candidates
 *   are the tokens next to the previous round's.
 * - A pool quotes a token when its spot price is known and 2 × the quote side's depth × the
 *   quote's USD price (doubles) reaches the floor; the quotes combine by the liquidity-weighted
 *   median, the drop beyond maxDeviation and the weighted mean (`referenceUsdPrice`).
 * - Confidence (it chooses the side that values a trade): kept / qualifying liquidity × kept /
 *   (kept + floor) × the kept quotes' liquidity-weighted confidence, in doubles over the pools in
 *   address order, to four decimals; an anchor's is 1.
 * - A trade is valued at the end of its block, on the side ranked first: anchor, reference token,
 *   other; then the higher confidence; then token0. Its exact USD value is the side's exact
 *   amount × the token's exact USD price; the documented stored one the rounded amount × the
 *   rounded price.
 */

export type ReferenceConfig = {
  stablecoins: readonly string[];
  /**
   * Wrapped native (first: the native coin of V4 pools, address zero, has its price), wrapped BTC
   * and the other reference tokens.
   */
  references: readonly string[];
  liquidityFloorUsd: number;
  maxDeviation: number;
};

/** The reference's configuration as the service's gives it for one chain: its reference tokens, the pricing's floor and deviation. */
export function referenceConfigOf(config: Config, chainId: number): ReferenceConfig {
  const chain = config.chains.find((c) => c.id === chainId);
  if (chain === undefined) throw new Error(`chain ${chainId} is not configured`);
  return {
    stablecoins: chain.referenceTokens.stablecoins,
    references: [
      chain.referenceTokens.wrappedNative,
      ...chain.referenceTokens.wrappedBtc,
      ...chain.referenceTokens.others,
    ],
    liquidityFloorUsd: config.pricing.liquidityFloorUsd,
    maxDeviation: config.pricing.maxDeviation,
  };
}

/** A token's reference price at the end of a block. */
export type ReferencePrice = { usd: Exact; usdDouble: number; confidence: number };

/** One swap of the chain with its reference valuation. */
export type ReferenceTrade = {
  pool: string;
  block: number;
  logIndex: number;
  time: number;
  /** |net amount| of each side, raw. */
  raw0: bigint;
  raw1: bigint;
  /** Both tokens' USD prices at the end of the block (null: not priced). */
  usd0: ReferencePrice | null;
  usd1: ReferencePrice | null;
  /** The trade's exact USD value: the side's exact amount × its exact USD price (null: no side can value it). */
  volumeUsd: Exact | null;
  /** The trade's USD value as stored: `volumeUsd` rounded once (docs/PRICING.md). */
  volumeUsdDouble: number | null;
};

const NATIVE = "0x0000000000000000000000000000000000000000";

/** The families whose spot price is their sqrtPriceX96 (concentrated liquidity), not their reserves. */
const CONCENTRATED = new Set(["v3", "v4", "algebra", "infinity-cl"]);

type Pool = {
  address: string;
  protocol: string;
  /** A V4 pool's hook address (null: none or another family). */
  hooks: string | null;
  token0: string;
  token1: string;
  reserve0: bigint | null;
  reserve1: bigint | null;
  sqrtPriceX96: bigint | null;
  hasState: boolean;
  swapBlock: number | null;
  before0: bigint | null;
  before1: bigint | null;
};

type Event = {
  pool: string;
  block: number;
  logIndex: number;
  time: number;
  reserve0: bigint | null;
  reserve1: bigint | null;
  sqrtPriceX96: bigint | null;
  swap: { in0: bigint; in1: bigint; out0: bigint; out1: bigint } | null;
};

const big = (v: string | null) => (v === null ? null : BigInt(v));

/** Every swap of `chainId` valued by the reference, in (block, log index) order. */
export async function referenceTrades(
  db: Queryable,
  chainId: number,
  config: ReferenceConfig,
): Promise<ReferenceTrade[]> {
  return (await referenceMarket(db, chainId, config)).trades;
}

/** A chain's stored market as the reference reads it: tokens' decimals, pools, events in key order. */
type StoredMarket = {
  decimals: Map<string, number | null>;
  pools: Map<string, Pool>;
  /** The pools of each token. */
  poolsOf: Map<string, Pool[]>;
  events: Event[];
};

async function loadStoredMarket(db: Queryable, chainId: number): Promise<StoredMarket> {
  const decimals = new Map<string, number | null>();
  const tokens = await db.query<{ address: string; decimals: number | null }>(
    "SELECT address, decimals FROM tokens WHERE chain_id = $1",
    [chainId],
  );
  for (const r of tokens.rows) decimals.set(r.address, r.decimals);
  const pools = new Map<string, Pool>();
  const poolsOf = new Map<string, Pool[]>();
  const stored = await db.query<{
    address: string;
    protocol: string;
    token0: string;
    token1: string;
    hooks: string | null;
  }>("SELECT address, protocol, token0, token1, hooks FROM pools WHERE chain_id = $1 ORDER BY address", [
    chainId,
  ]);
  for (const r of stored.rows) {
    const pool: Pool = {
      ...r,
      reserve0: null,
      reserve1: null,
      sqrtPriceX96: null,
      hasState: false,
      swapBlock: null,
      before0: null,
      before1: null,
    };
    pools.set(r.address, pool);
    for (const token of [r.token0, r.token1]) {
      const list = poolsOf.get(token);
      if (list) list.push(pool);
      else poolsOf.set(token, [pool]);
    }
  }
  type Row = {
    pool: string;
    block_number: string;
    log_index: number;
    block_time: Date;
    reserve0: string | null;
    reserve1: string | null;
    sqrt_price_x96: string | null;
    in0: string | null;
    in1: string | null;
    out0: string | null;
    out1: string | null;
  };
  const { rows } = await db.query<Row>(
    `SELECT pool, block_number, log_index, block_time, reserve0::text, reserve1::text, sqrt_price_x96::text,
            amount0_in::text AS in0, amount1_in::text AS in1, amount0_out::text AS out0, amount1_out::text AS out1
     FROM swaps WHERE chain_id = $1
     UNION ALL
     SELECT pool, block_number, log_index, block_time, reserve0::text, reserve1::text, sqrt_price_x96::text,
            NULL, NULL, NULL, NULL
     FROM pool_events WHERE chain_id = $1
     ORDER BY block_number, log_index`,
    [chainId],
  );
  const events: Event[] = rows.map((r) => ({
    pool: r.pool,
    block: Number(r.block_number),
    logIndex: r.log_index,
    time: r.block_time.getTime(),
    reserve0: big(r.reserve0),
    reserve1: big(r.reserve1),
    sqrtPriceX96: big(r.sqrt_price_x96),
    swap:
      r.in0 === null
        ? null
        : {
            in0: BigInt(r.in0),
            in1: BigInt(r.in1 as string),
            out0: BigInt(r.out0 as string),
            out1: BigInt(r.out1 as string),
          },
  }));
  return { decimals, pools, poolsOf, events };
}

/** The exact spot price of token0 in token1; null when the pool has none. */
function spot0(pool: Pool, decimals: ReadonlyMap<string, number | null>): Exact | null {
  const d0 = decimals.get(pool.token0);
  const d1 = decimals.get(pool.token1);
  if (!pool.hasState || d0 == null || d1 == null) return null;
  if (CONCENTRATED.has(pool.protocol)) {
    if (pool.sqrtPriceX96 === null || pool.sqrtPriceX96 === 0n) return null;
    return exact(pool.sqrtPriceX96 * pool.sqrtPriceX96 * 10n ** BigInt(d0), 2n ** 192n * 10n ** BigInt(d1));
  }
  if (pool.reserve0 === null || pool.reserve1 === null || pool.reserve0 === 0n || pool.reserve1 === 0n) {
    return null;
  }
  return exact(pool.reserve1 * 10n ** BigInt(d0), pool.reserve0 * 10n ** BigInt(d1));
}

/** A side's depth in units (a double): min(balance now, balance before the latest block's first swap). */
function depth(pool: Pool, side: 0 | 1, decimals: ReadonlyMap<string, number | null>): number | null {
  const d = decimals.get(side === 0 ? pool.token0 : pool.token1);
  const now = side === 0 ? pool.reserve0 : pool.reserve1;
  const before = side === 0 ? pool.before0 : pool.before1;
  if (d == null || now === null) return null;
  return unitsOf(pool.swapBlock !== null && before !== null && before < now ? before : now, d);
}

/** Who prices: the stablecoins (anchors) at 1 USD, then the references, then everything else. */
type Tiers = { anchors: ReadonlySet<string>; references: ReadonlySet<string> };

/** The prices of every token, as of the pools' current states. */
function priceAll(market: StoredMarket, tiers: Tiers, config: ReferenceConfig): Map<string, ReferencePrice> {
  const { poolsOf, decimals } = market;
  const { anchors, references } = tiers;
  const priced = new Map<string, ReferencePrice>();
  for (const anchor of anchors) {
    if (poolsOf.has(anchor)) priced.set(anchor, { usd: exact(1n), usdDouble: 1, confidence: 1 });
  }
  const evaluate = (token: string, allowQuote: (quote: string) => boolean): ReferencePrice | null => {
    if (decimals.get(token) == null) return null;
    const quotes: (ReferenceQuote & { quoteConfidence: number })[] = [];
    for (const pool of poolsOf.get(token) ?? []) {
      const side = pool.token0 === token ? 0 : 1;
      const quote = side === 0 ? pool.token1 : pool.token0;
      if (quote === token || !allowQuote(quote)) continue;
      // A V4 hook with a return-delta permission (bits 0-3 of its address) never prices.
      if (
        pool.protocol === "v4" &&
        pool.hooks !== null &&
        (Number.parseInt(pool.hooks.slice(-4), 16) & 0x0f) !== 0
      ) {
        continue;
      }
      const q = priced.get(quote);
      if (!q) continue;
      const s = spot0(pool, decimals);
      if (s === null) continue;
      const rounded = toDouble(s);
      if (!(rounded > 0) || !Number.isFinite(rounded)) continue;
      const quoteDepth = depth(pool, side === 0 ? 1 : 0, decimals);
      if (quoteDepth === null) continue;
      const liquidityUsd = 2 * quoteDepth * q.usdDouble;
      if (!(liquidityUsd > 0) || liquidityUsd < config.liquidityFloorUsd) continue;
      const price = side === 0 ? s : exact(s.den, s.num);
      quotes.push({ price: exactMul(price, q.usd), liquidityUsd, quoteConfidence: q.confidence });
    }
    const combined = referenceCombine(quotes, config.maxDeviation);
    if (combined === null) return null;
    const { price: usd, kept } = combined;
    const keptLiquidity = kept.reduce((sum, q) => sum + q.liquidityUsd, 0);
    const total = quotes.reduce((sum, q) => sum + q.liquidityUsd, 0);
    const quoteConfidence =
      kept.reduce((sum, q) => sum + q.quoteConfidence * q.liquidityUsd, 0) / keptLiquidity;
    const depthFactor =
      config.liquidityFloorUsd > 0 ? keptLiquidity / (keptLiquidity + config.liquidityFloorUsd) : 1;
    const confidence = (keptLiquidity / total) * depthFactor * quoteConfidence;
    return { usd, usdDouble: toDouble(usd), confidence: Math.round(confidence * 1e4) / 1e4 };
  };
  const rounds = (eligible: (token: string) => boolean, allowQuote: (quote: string) => boolean) => {
    let frontier = [...priced.keys()];
    while (frontier.length > 0) {
      const candidates = new Set<string>();
      for (const token of frontier) {
        for (const pool of poolsOf.get(token) ?? []) {
          const other = pool.token0 === token ? pool.token1 : pool.token0;
          if (!priced.has(other) && eligible(other)) candidates.add(other);
        }
      }
      const found = new Map<string, ReferencePrice>();
      for (const token of candidates) {
        const price = evaluate(token, allowQuote);
        if (price) found.set(token, price);
      }
      for (const [token, price] of found) priced.set(token, price);
      frontier = [...found.keys()];
    }
  };
  rounds(
    (token) => references.has(token),
    (quote) => references.has(quote),
  );
  // The native coin (address zero) has the wrapped native token's price, never its own pools'.
  const wrapped = priced.get((config.references[0] ?? "").toLowerCase());
  if (wrapped && poolsOf.has(NATIVE)) priced.set(NATIVE, wrapped);
  rounds(
    () => true,
    () => true,
  );
  return priced;
}

/** A swap valued at `prices`: its USD volume from the side of the better-ranked (then more confident) priced token. */
function valueTrade(
  event: Event,
  pool: Pool,
  prices: ReadonlyMap<string, ReferencePrice>,
  market: StoredMarket,
  tiers: Tiers,
): ReferenceTrade {
  const rank = (token: string) => (tiers.anchors.has(token) ? 0 : tiers.references.has(token) ? 1 : 2);
  const swap = event.swap as NonNullable<Event["swap"]>;
  const abs = (v: bigint) => (v < 0n ? -v : v);
  const raw0 = abs(swap.in0 - swap.out0);
  const raw1 = abs(swap.in1 - swap.out1);
  const usd0 = prices.get(pool.token0) ?? null;
  const usd1 = prices.get(pool.token1) ?? null;
  const d0 = market.decimals.get(pool.token0);
  const d1 = market.decimals.get(pool.token1);
  const can0 = usd0 !== null && d0 != null;
  const can1 = usd1 !== null && d1 != null;
  let side: 0 | 1 | null = can0 ? 0 : can1 ? 1 : null;
  if (can0 && can1) {
    const [r0, r1] = [rank(pool.token0), rank(pool.token1)];
    side = r0 !== r1 ? (r0 < r1 ? 0 : 1) : usd0.confidence >= usd1.confidence ? 0 : 1;
  }
  const volumeUsd =
    side === 0
      ? exactMul(unitsExact(raw0, d0 as number), (usd0 as ReferencePrice).usd)
      : side === 1
        ? exactMul(unitsExact(raw1, d1 as number), (usd1 as ReferencePrice).usd)
        : null;
  const volumeUsdDouble = volumeUsd === null ? null : toDouble(volumeUsd);
  return {
    pool: pool.address,
    block: event.block,
    logIndex: event.logIndex,
    time: event.time,
    raw0,
    raw1,
    usd0,
    usd1,
    volumeUsd,
    volumeUsdDouble,
  };
}

/** Moves `pool` to the state after `event`, keeping its balances before its block's first swap. */
function applyEvent(pool: Pool, event: Event): void {
  if (event.swap && pool.swapBlock !== event.block) {
    pool.swapBlock = event.block;
    const before = (after: bigint | null, amountIn: bigint, amountOut: bigint) => {
      if (after === null) return null;
      const b = after - amountIn + amountOut;
      return b < 0n ? 0n : b;
    };
    pool.before0 = before(event.reserve0, event.swap.in0, event.swap.out0);
    pool.before1 = before(event.reserve1, event.swap.in1, event.swap.out1);
  }
  pool.reserve0 = event.reserve0;
  pool.reserve1 = event.reserve1;
  pool.sqrtPriceX96 = event.sqrtPriceX96;
  pool.hasState = true;
}

/**
 * The reference over a chain's stored history: every swap valued (in key order) and every
 * token's price as of the last stored event (what `token_prices` holds at the head). A block's
 * swaps are valued at the prices after the whole block.
 */
export async function referenceMarket(
  db: Queryable,
  chainId: number,
  config: ReferenceConfig,
): Promise<{ trades: ReferenceTrade[]; prices: Map<string, ReferencePrice> }> {
  const lower = (a: string) => a.toLowerCase();
  const anchors = new Set(config.stablecoins.map(lower));
  const tiers: Tiers = { anchors, references: new Set([...anchors, ...config.references.map(lower)]) };
  const market = await loadStoredMarket(db, chainId);
  const out: ReferenceTrade[] = [];
  let pending: { event: Event; pool: Pool }[] = [];
  const closeBlock = () => {
    if (pending.length === 0) return;
    const prices = priceAll(market, tiers, config);
    for (const { event, pool } of pending) out.push(valueTrade(event, pool, prices, market, tiers));
    pending = [];
  };
  let block: number | null = null;
  for (const event of market.events) {
    if (event.block !== block) {
      closeBlock();
      block = event.block;
    }
    const pool = market.pools.get(event.pool);
    if (!pool) continue;
    applyEvent(pool, event);
    if (event.swap) pending.push({ event, pool });
  }
  closeBlock();
  return { trades: out, prices: priceAll(market, tiers, config) };
}
