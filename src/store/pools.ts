/**
 * Table `pools`: every pool of a configured factory with its base state (before its first
 * indexed event) and its latest state; the API's pool reads.
 */
import type { Hex, NewPool, PoolState, Protocol, StoredPool } from "../model/index.js";
import { chunks, fromNumeric, type Queryable } from "./db.js";
import { bulkInsert, columnsOf, unnest } from "./unnest.js";

const NEW_POOL_COLUMNS = columnsOf<NewPool>({
  address: ["text", (p) => p.address],
  dex: ["text", (p) => p.dex],
  protocol: ["text", (p) => p.protocol],
  factory: ["text", (p) => p.factory],
  token0: ["text", (p) => p.token0],
  token1: ["text", (p) => p.token1],
  fee: ["int", (p) => p.fee],
  tick_spacing: ["int", (p) => p.tickSpacing],
  created_block: ["bigint", (p) => p.createdBlock],
  created_log_index: ["int", (p) => p.createdLogIndex],
  state_block: ["bigint", (p) => p.base?.block ?? null],
  reserve0: ["numeric", (p) => p.base?.reserve0 ?? null],
  reserve1: ["numeric", (p) => p.base?.reserve1 ?? null],
  sqrt_price_x96: ["numeric", (p) => p.base?.sqrtPriceX96 ?? null],
  liquidity: ["numeric", (p) => p.base?.liquidity ?? null],
  tick: ["int", (p) => p.base?.tick ?? null],
  hooks: ["text", (p) => p.hooks ?? null],
  parameters: ["text", (p) => p.parameters ?? null],
});

/** Inserts pools not stored yet, with their base state (which is also their state until their first event). */
export async function insertPools(
  client: Queryable,
  chainId: number,
  pools: readonly NewPool[],
): Promise<Hex[]> {
  const rows = await bulkInsert<NewPool, { address: Hex }>(
    client,
    {
      table: "pools",
      chainId,
      columns: NEW_POOL_COLUMNS,
      computed: {
        base_block: "r.state_block",
        base_reserve0: "r.reserve0",
        base_reserve1: "r.reserve1",
        base_sqrt_price_x96: "r.sqrt_price_x96",
        base_liquidity: "r.liquidity",
        base_tick: "r.tick",
      },
      tail: "ON CONFLICT DO NOTHING RETURNING address",
    },
    pools,
  );
  return rows.map((r) => r.address);
}

type AddressedState = { address: Hex; state: PoolState };

const BASE_COLUMNS = columnsOf<AddressedState>({
  address: ["text", (p) => p.address],
  block: ["bigint", (p) => p.state.block],
  r0: ["numeric", (p) => p.state.reserve0],
  r1: ["numeric", (p) => p.state.reserve1],
  sqrt: ["numeric", (p) => p.state.sqrtPriceX96],
  liq: ["numeric", (p) => p.state.liquidity],
  tick: ["int", (p) => p.state.tick],
});

/** Records the base state read for pools that predate the start (their first indexed event is in this batch). */
export async function updatePoolBases(
  client: Queryable,
  chainId: number,
  pools: readonly NewPool[],
): Promise<void> {
  const bases = pools.flatMap((p) => (p.base === null ? [] : [{ address: p.address, state: p.base }]));
  for (const part of chunks(bases)) {
    const b = unnest("b", BASE_COLUMNS, part, 2);
    await client.query(
      `UPDATE pools p SET base_block = b.block, base_reserve0 = b.r0, base_reserve1 = b.r1,
         base_sqrt_price_x96 = b.sqrt, base_liquidity = b.liq, base_tick = b.tick
       FROM ${b.sql}
       WHERE p.chain_id = $1 AND p.address = b.address`,
      [chainId, ...b.params],
    );
  }
}

const STATE_COLUMNS = columnsOf<AddressedState>({
  address: ["text", (p) => p.address],
  r0: ["numeric", (p) => p.state.reserve0],
  r1: ["numeric", (p) => p.state.reserve1],
  sqrt: ["numeric", (p) => p.state.sqrtPriceX96],
  liq: ["numeric", (p) => p.state.liquidity],
  tick: ["int", (p) => p.state.tick],
  block: ["bigint", (p) => p.state.block],
  log_index: ["int", (p) => p.state.logIndex],
});

/** Sets the latest state of pools that had events in the batch. */
export async function updatePoolStates(
  client: Queryable,
  chainId: number,
  states: ReadonlyMap<Hex, PoolState>,
): Promise<void> {
  for (const part of chunks([...states].map(([address, state]) => ({ address, state })))) {
    const s = unnest("s", STATE_COLUMNS, part, 2);
    await client.query(
      `UPDATE pools p SET reserve0 = s.r0, reserve1 = s.r1, sqrt_price_x96 = s.sqrt, liquidity = s.liq,
         tick = s.tick, state_block = s.block, state_log_index = s.log_index
       FROM ${s.sql}
       WHERE p.chain_id = $1 AND p.address = s.address`,
      [chainId, ...s.params],
    );
  }
}

/**
 * Every stored pool of a chain with its base and latest state.
 *
 * Kept in memory by the indexer for every pool of the chain (300,000 and more at mainnet scale),
 * so the rows are made small: the strings that repeat across pools (DEX, protocol, factory, the
 * reference tokens paired with thousands of pools) are one string each rather than one per row,
 * a state equal to the base is the base object itself, and a zero is one shared bigint.
 */
export async function loadPools(db: Queryable, chainId: number): Promise<StoredPool[]> {
  const { rows } = await db.query<Record<string, unknown>>("SELECT * FROM pools WHERE chain_id = $1", [
    chainId,
  ]);
  const strings = new Map<string, string>();
  const intern = <T extends string>(value: unknown): T => {
    const v = value as T;
    const known = strings.get(v);
    if (known !== undefined) return known as T;
    strings.set(v, v);
    return v;
  };
  const out: StoredPool[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Record<string, unknown>;
    const base: PoolState | null =
      r.base_block === null
        ? null
        : {
            reserve0: compactNumeric(r.base_reserve0 as string | null),
            reserve1: compactNumeric(r.base_reserve1 as string | null),
            sqrtPriceX96: compactNumeric(r.base_sqrt_price_x96 as string | null),
            liquidity: compactNumeric(r.base_liquidity as string | null),
            tick: r.base_tick as number | null,
            block: r.base_block as number,
            logIndex: null,
          };
    const state: PoolState = {
      reserve0: compactNumeric(r.reserve0 as string | null),
      reserve1: compactNumeric(r.reserve1 as string | null),
      sqrtPriceX96: compactNumeric(r.sqrt_price_x96 as string | null),
      liquidity: compactNumeric(r.liquidity as string | null),
      tick: r.tick as number | null,
      block: r.state_block as number | null,
      logIndex: r.state_log_index as number | null,
    };
    out[i] = {
      address: r.address as Hex,
      dex: intern(r.dex),
      protocol: intern<Protocol>(r.protocol),
      factory: intern<Hex>(r.factory),
      token0: intern<Hex>(r.token0),
      token1: intern<Hex>(r.token1),
      fee: r.fee as number | null,
      tickSpacing: r.tick_spacing as number | null,
      createdBlock: r.created_block as number,
      createdLogIndex: r.created_log_index as number,
      base,
      state: base !== null && sameState(base, state) ? base : state,
    };
    // Only pools inside a manager have one; the others keep no field for it.
    if (r.hooks !== null) (out[i] as StoredPool).hooks = r.hooks as Hex;
    if (r.parameters !== null) (out[i] as StoredPool).parameters = r.parameters as Hex;
  }
  return out;
}

const ZERO = 0n;

/** A stored numeric as a bigint, zero being one shared value (most pools' untouched balances). */
function compactNumeric(v: string | null): bigint | null {
  if (v === "0") return ZERO;
  return fromNumeric(v);
}

function sameState(a: PoolState, b: PoolState): boolean {
  return (
    a.reserve0 === b.reserve0 &&
    a.reserve1 === b.reserve1 &&
    a.sqrtPriceX96 === b.sqrtPriceX96 &&
    a.liquidity === b.liquidity &&
    a.tick === b.tick &&
    a.block === b.block &&
    a.logIndex === b.logIndex
  );
}

/** Deletes the pools created above `block` (a reorg removed their creation). */
export async function deletePoolsCreatedAbove(
  client: Queryable,
  chainId: number,
  block: number,
): Promise<void> {
  await client.query("DELETE FROM pools WHERE chain_id = $1 AND created_block > $2", [chainId, block]);
}

/**
 * Sets the latest state of `pools` from their latest remaining swap or pool event (or kept swap of
 * pool_last_swaps, when the retention dropped its later ones), or their base state when none is
 * left (after a rollback deleted their events above the ancestor).
 */
export async function restorePoolStates(
  client: Queryable,
  chainId: number,
  pools: readonly Hex[],
): Promise<void> {
  if (pools.length === 0) return;
  await client.query(
    `UPDATE pools p SET
       reserve0 = CASE WHEN l.block_number IS NULL THEN p.base_reserve0 ELSE l.reserve0 END,
       reserve1 = CASE WHEN l.block_number IS NULL THEN p.base_reserve1 ELSE l.reserve1 END,
       sqrt_price_x96 = CASE WHEN l.block_number IS NULL THEN p.base_sqrt_price_x96 ELSE l.sqrt_price_x96 END,
       liquidity = CASE WHEN l.block_number IS NULL THEN p.base_liquidity ELSE l.liquidity END,
       tick = CASE WHEN l.block_number IS NULL THEN p.base_tick ELSE l.tick END,
       state_block = CASE WHEN l.block_number IS NULL THEN p.base_block ELSE l.block_number END,
       state_log_index = l.log_index
     FROM unnest($2::text[]) AS a(address)
     LEFT JOIN LATERAL (
       SELECT * FROM (
         (SELECT block_number, log_index, reserve0, reserve1, sqrt_price_x96, liquidity, tick FROM swaps
           WHERE chain_id = $1 AND pool = a.address ORDER BY block_number DESC, log_index DESC LIMIT 1)
         UNION ALL
         (SELECT block_number, log_index, reserve0, reserve1, sqrt_price_x96, liquidity, tick FROM pool_events
           WHERE chain_id = $1 AND pool = a.address ORDER BY block_number DESC, log_index DESC LIMIT 1)
         UNION ALL
         (SELECT block_number, log_index, reserve0, reserve1, sqrt_price_x96, liquidity, tick FROM pool_last_swaps
           WHERE chain_id = $1 AND pool = a.address ORDER BY block_number DESC, log_index DESC LIMIT 1)
       ) latest ORDER BY block_number DESC, log_index DESC LIMIT 1
     ) l ON true
     WHERE p.chain_id = $1 AND p.address = a.address`,
    [chainId, [...pools]],
  );
}

/** Pools holding any of `tokens`. */
export async function poolsOfTokens(
  db: Queryable,
  chainId: number,
  tokens: readonly string[],
): Promise<{ pool: string; token0: string; token1: string }[]> {
  if (tokens.length === 0) return [];
  const { rows } = await db.query<{ pool: string; token0: string; token1: string }>(
    `SELECT address AS pool, token0, token1 FROM pools WHERE chain_id = $1 AND token0 = ANY($2::text[])
     UNION
     SELECT address AS pool, token0, token1 FROM pools WHERE chain_id = $1 AND token1 = ANY($2::text[])`,
    [chainId, [...tokens]],
  );
  return rows;
}

/** The tokens of `pools` (one row per pool). */
export async function tokensOfPools(
  db: Queryable,
  chainId: number,
  pools: readonly string[],
): Promise<{ token0: string; token1: string }[]> {
  if (pools.length === 0) return [];
  const { rows } = await db.query<{ token0: string; token1: string }>(
    "SELECT token0, token1 FROM pools WHERE chain_id = $1 AND address = ANY($2::text[])",
    [chainId, [...pools]],
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// API reads

/**
 * A pool with its tokens' facts, current state and 24 h statistics: the API's read, as the SQL
 * row comes (snake_case columns, numerics as text), joined from five tables.
 */
export type PoolRow = {
  chain_id: number;
  address: string;
  dex: string;
  factory: string;
  token0: string;
  token1: string;
  reserve0: string | null;
  reserve1: string | null;
  symbol0: string | null;
  symbol1: string | null;
  decimals0: number | null;
  decimals1: number | null;
  usd_price0: number | null;
  usd_price1: number | null;
  volume_usd_24h: number | null;
  liquidity_usd: number | null;
  price_change_24h: number | null;
  /** findPool's: the pool's trades in the last 24 hours (null: no market window yet). */
  trades_24h?: number | null;
  /** The pool's family and, for a pool inside a manager, its hooks and parameters. */
  protocol?: string;
  hooks?: string | null;
  parameters?: string | null;
};

/**
 * The columns of a pool `p` with its tokens' facts, each looked up on its own (subqueries and the
 * lateral reads of TOKEN_LOOKUPS, on unique keys): the same values as joining pools to tokens and
 * token_prices twice each, which Postgres plans in a fraction of the time that six-table join takes
 * it. The statistics' columns follow.
 */
const POOL_FACTS = `p.chain_id, p.address, p.dex, p.factory, p.protocol, p.hooks, p.parameters,
  p.token0, p.token1, p.reserve0, p.reserve1,
  t0.symbol AS symbol0, t1.symbol AS symbol1, t0.decimals AS decimals0, t1.decimals AS decimals1,
  (SELECT usd_price FROM token_prices WHERE chain_id = p.chain_id AND token = p.token0) AS usd_price0,
  (SELECT usd_price FROM token_prices WHERE chain_id = p.chain_id AND token = p.token1) AS usd_price1`;
const TOKEN_LOOKUPS = `
  LEFT JOIN LATERAL (
    SELECT symbol, decimals FROM tokens WHERE chain_id = p.chain_id AND address = p.token0 OFFSET 0
  ) t0 ON true
  LEFT JOIN LATERAL (
    SELECT symbol, decimals FROM tokens WHERE chain_id = p.chain_id AND address = p.token1 OFFSET 0
  ) t1 ON true`;

/** One pool, or undefined when it is not known. */
export async function findPool(
  db: Queryable,
  chainId: number,
  address: string,
): Promise<PoolRow | undefined> {
  // The pool's facts by lateral lookups, not one join of six tables: Postgres plans such a join
  // anew at every run of a named statement (its generic plan costs above the custom one), which
  // takes several times the lookup's execution.
  const { rows } = await db.query<PoolRow>({
    name: "find-pool",
    text: `SELECT ${POOL_FACTS}, ps.volume_usd_24h, ps.liquidity_usd, ps.price_change_24h, ps.trades_24h
       FROM pools p ${TOKEN_LOOKUPS}
       LEFT JOIN LATERAL (
         SELECT volume_usd_24h, liquidity_usd, price_change_24h, buys_24h + sells_24h AS trades_24h FROM pair_windows
         WHERE chain_id = p.chain_id AND pool = p.address OFFSET 0
       ) ps ON true
       WHERE p.chain_id = $1 AND p.address = $2`,
    values: [chainId, address],
  });
  return rows[0];
}

/**
 * The pools holding `token`, by 24 h USD volume, then USD liquidity, then address (a pool without
 * statistics ranks as volume 0, liquidity unknown). Read in two steps so that a token in hundreds
 * of thousands of pools (WETH) does not sort them all: first the pools whose statistics rank them
 * above (0, unknown), from the token's own rank indexes (migration 052: one for the pools where it
 * is token0, one where it is token1), each walked in the answer's order and stopped at `limit`,
 * the two merged; only when those are fewer than `limit`, the rest, all ranked (0, unknown), by
 * address. One named statement (the rest's part skipped by a one-time filter when the page is
 * full): Postgres reuses its generic plan instead of planning at every call, which costs more than
 * the execution on a small market, and the call is one round trip.
 */
export async function findPoolsOfToken(
  db: Queryable,
  options: { chainId: number; token: string; limit: number },
): Promise<PoolRow[]> {
  const order = "volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool";
  const side = (column: "token0" | "token1") =>
    `(SELECT pool, volume_usd_24h, liquidity_usd, price_change_24h FROM pair_windows
      WHERE chain_id = $1 AND ${column} = $2 AND (volume_usd_24h <> 0 OR liquidity_usd IS NOT NULL)
      ORDER BY ${order}
      LIMIT $3)`;
  // The page's pools first (the index walks), then their facts for those rows only (POOL_FACTS):
  // a join of the facts' six tables takes longer to plan than the walk to run.
  const { rows } = await db.query<PoolRow>({
    name: "find-pools-of-token",
    text: `WITH ranked AS MATERIALIZED (
       SELECT m.*, row_number() OVER (ORDER BY ${order}) AS n
       FROM (${side("token0")} UNION ALL ${side("token1")} ORDER BY ${order} LIMIT $3) m
       WHERE EXISTS (SELECT 1 FROM pools WHERE chain_id = $1 AND address = m.pool)
     )
     SELECT ${POOL_FACTS}, ps.volume_usd_24h, ps.liquidity_usd, ps.price_change_24h
     FROM (
       SELECT 0 AS part, * FROM ranked
       UNION ALL
       (SELECT 1, p.address, w.volume_usd_24h, w.liquidity_usd, w.price_change_24h,
          row_number() OVER (ORDER BY p.address)
        FROM pools p LEFT JOIN pair_windows w ON w.chain_id = p.chain_id AND w.pool = p.address
        WHERE (SELECT count(*) FROM ranked) < $3
          AND p.chain_id = $1 AND (p.token0 = $2 OR p.token1 = $2)
          AND (w.pool IS NULL OR (w.volume_usd_24h = 0 AND w.liquidity_usd IS NULL))
        ORDER BY p.address
        LIMIT $3)
     ) ps
     JOIN pools p ON p.chain_id = $1 AND p.address = ps.pool ${TOKEN_LOOKUPS}
     ORDER BY ps.part, ps.n
     LIMIT $3`,
    values: [options.chainId, options.token, options.limit],
  });
  return rows;
}

/** The block of a pool's earliest stored swap (kept ones included) or pool event; null when it has none. */
export async function firstStoredEventBlock(
  db: Queryable,
  chainId: number,
  pool: Hex,
): Promise<number | null> {
  const { rows } = await db.query<{ block: string | null }>(
    `SELECT least((SELECT min(block_number) FROM swaps WHERE chain_id = $1 AND pool = $2),
                  (SELECT min(block_number) FROM pool_last_swaps WHERE chain_id = $1 AND pool = $2),
                  (SELECT min(block_number) FROM pool_events WHERE chain_id = $1 AND pool = $2)) AS block`,
    [chainId, pool],
  );
  const block = rows[0]?.block;
  return block === null || block === undefined ? null : Number(block);
}

/**
 * Refreshes the planner's statistics of the tables that grow by a row per pool or token (the
 * indexer's pools and tokens, the market's pair_windows and the pricing's token_prices). On a fresh index they
 * grow by thousands of rows a second, faster than autovacuum's first analyze (a minute's naptime):
 * planned on an empty table's statistics (92 pools estimated for 14,500), the token statistics'
 * statement joined pools by a nested loop that discarded 253 million rows, 36–114 s instead of
 * 0.4 s (BENCHMARKS.md, "Scale"). ANALYZE samples at most 30,000 rows a table: tenths of a second.
 */
export async function analyzeGrowingTables(db: Queryable): Promise<void> {
  await db.query("ANALYZE pools, tokens, pair_windows, token_prices");
}
