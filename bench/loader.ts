/**
 * Bulk loader of the scale benchmark (`npm run bench:scale`): a
 * consistent database at mainnet size written by SQL set operations, because the indexer would
 * take days to store ten million swaps. What it writes is what the API reads:
 *
 * - `tokens`: four reference tokens (WETH, USDC, USDT, WBTC, DAI at their mainnet addresses) and
 *   generated ones with pronounceable names and symbols ("Kazumo Finance", "KAZUM"), so search has
 *   realistic text to match; each with a USD price of its own.
 * - `pools`: Uniswap V2 pairs, 60 % of them WETH pairs, 20 % USDC pairs, the rest between generated
 *   tokens; reserves worth a USD liquidity that falls with the pool's rank.
 * - `swaps`: `swaps` trades over `days` days ending at `end`, blocks 12 s apart, `perBlock` a block,
 *   pools drawn by a Zipf-like law (pool i gets about 1 / (i + 1) of the trades), prices around the
 *   pool's own, every USD column set, written a day at a time into the daily partitions.
 * - Derived from those swaps by SQL aggregation, as the pricing would: pair candles (1m over the
 *   last `minuteDays` days, 1h and 1d over everything) with their USD columns, token USD series (5m
 *   over the last `minuteDays` days, 1h over everything), token prices (the latest hourly close),
 *   pair and token 24 h statistics; `sync_state` and `pricing_sync` at the last block; the
 *   retention's start (`retained_from`) where the minute tables begin.
 *
 * The figures are synthetic; what matters for the API's speed is their count and shape (how many
 * rows a query has to pass over, how skewed the pools are).
 */

import type { QueryConfig } from "pg";
import { prepareSyntheticChain } from "../src/_test/synthetic-chain.js";
import { parseConfig } from "../src/config/load.js";
import type { Config } from "../src/config/schema.js";
import type { Db } from "../src/store/db.js";
import { ensureBatchPartitions } from "../src/sync/storage-upkeep.js";

export const CHAIN = 1;
export const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
export const USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
const USDT = "0xdac17f958d2ee523a2206206994597c13d831ec7";
const WBTC = "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599";
const DAI = "0x6b175474e89094c44da98b954eedeac495271d0f";
export const FACTORY = "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f";
const ROUTER = "0x7a250d5630b4cf539739df2c5dacb4c659f2488d";

const DAY = 86_400_000;
const BLOCK_SECONDS = 12;

export type LoadOptions = {
  tokens: number;
  pools: number;
  swaps: number;
  days: number;
  /** Days (ending at `end`) of 1-minute candles and 5-minute series; the retention of those tables. */
  minuteDays: number;
  /** End of the history (ms); default now, to the minute. */
  end?: number;
  log?: (line: string) => void;
};

export type LoadedDatabase = {
  config: Config;
  /** The history's first and last block times (ms) and its last block. */
  from: number;
  end: number;
  lastBlock: number;
  /** Seconds each stage took. */
  seconds: Record<string, number>;
};

/** The API's configuration for the loaded chain (no node behind it: the API reads the database only). */
export function loaderConfig(): Config {
  return parseConfig({
    devnet: { enabled: false },
    tokenLists: [],
    coins: { ETH: { chain: CHAIN, token: WETH }, BTC: { chain: CHAIN, token: WBTC } },
    api: { rateLimit: { max: 100_000_000, windowMs: 60_000 } },
    chains: [
      {
        id: CHAIN,
        name: "Ethereum",
        rpc: ["http://127.0.0.1:9"],
        dexes: [{ name: "Uniswap V2", protocol: "v2", factory: FACTORY, fee: 3000 }],
        referenceTokens: { stablecoins: [USDC, USDT, DAI], wrappedNative: WETH, wrappedBtc: [WBTC] },
      },
    ],
  });
}

/** Address i of a kind ("t" tokens, "p" pools, "m" makers) as SQL: 40 hex digits of md5. */
const addressSql = (kind: string, expr: string) =>
  `'0x' || left(md5('${kind}' || (${expr})) || md5('${kind}x' || (${expr})), 40)`;

/** Fills a fresh, migrated database (see the module's comment). */
export async function loadScaleDatabase(db: Db, options: LoadOptions): Promise<LoadedDatabase> {
  const log = options.log ?? (() => {});
  const end = options.end ?? Math.floor(Date.now() / 60_000) * 60_000;
  const blocks = options.days * (DAY / 1000 / BLOCK_SECONDS);
  const perBlock = Math.max(1, Math.ceil(options.swaps / blocks));
  const usedBlocks = Math.ceil(options.swaps / perBlock);
  // Blocks 12 s apart, or further apart when fewer swaps than blocks fill the days.
  const blockSeconds = Math.max(BLOCK_SECONDS, (options.days * DAY) / 1000 / usedBlocks);
  const from = end - Math.round(usedBlocks * blockSeconds * 1000);
  const minuteFrom = Math.max(from, Math.floor((end - options.minuteDays * DAY) / DAY) * DAY);
  const seconds: Record<string, number> = {};
  const stage = async (name: string, fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    seconds[name] = Math.round((performance.now() - t) / 100) / 10;
    log(`loader: ${name} in ${seconds[name]} s`);
  };
  // One connection: the temporary tables live in its session; no statement timeout for the bulk
  // statements, neither the server's nor the pool's read timeout (statement timeout + 5 s, which a
  // series statement overran on a loaded machine; pg takes 0 as "the pool's", hence a day).
  const client = await db.connect();
  const q = (sql: string, params: unknown[] = []) =>
    client.query({ text: sql, values: params, query_timeout: 86_400_000 } as QueryConfig);
  try {
    await q("SET statement_timeout = 0");
    await q("SET work_mem = '256MB'");
    await fill();
  } finally {
    client.release();
  }
  return { config: loaderConfig(), from, end, lastBlock: usedBlocks, seconds };

  async function fill() {
    await stage("schema", async () => {
      await prepareSyntheticChain(db, CHAIN, 0);
      await ensureBatchPartitions(db, { from, to: end });
    });

    await stage("tokens", async () => {
      // Pronounceable names from three syllables and a suffix: 324,000 distinct names.
      await q(
        `CREATE TEMP TABLE lt AS
       WITH s AS (SELECT ARRAY['ka','zu','mo','ri','ta','ne','lo','vi','sa','qu','po','xe','da','fi','gu',
                  'ho','ja','ly','me','no','pe','ro','su','te','ul','va','wo','ye','zo','bi'] AS syl,
                  ARRAY['Token','Finance','Protocol','Inu','AI','Network','Coin','Swap','DAO','Labs','Chain','Cash'] AS suf)
       SELECT i, ${addressSql("t", "i")} AS address,
         initcap(syl[1 + i % 30] || syl[1 + (i / 30) % 30] || syl[1 + (i / 900) % 30]) || ' ' || suf[1 + (i / 27000) % 12] AS name,
         upper(syl[1 + i % 30] || syl[1 + (i / 30) % 30] || left(syl[1 + (i / 900) % 30], 1)) AS symbol,
         (CASE WHEN i % 10 = 7 THEN 9 ELSE 18 END)::smallint AS decimals,
         power(10, -((i::bigint * 7919) % 9))::float8 * (1 + ((i::bigint * 104729) % 1000) / 1000.0) AS usd
       FROM s, generate_series(5, $1::int - 1) AS i
       UNION ALL
       SELECT * FROM (VALUES (0, '${WETH}', 'Wrapped Ether', 'WETH', 18::smallint, 3000::float8),
         (1, '${USDC}', 'USD Coin', 'USDC', 6::smallint, 1::float8), (2, '${USDT}', 'Tether USD', 'USDT', 6::smallint, 1::float8),
         (3, '${WBTC}', 'Wrapped BTC', 'WBTC', 8::smallint, 60000::float8), (4, '${DAI}', 'Dai Stablecoin', 'DAI', 18::smallint, 1::float8)) v`,
        [options.tokens],
      );
      await q("CREATE UNIQUE INDEX ON lt (i)");
      await q(
        `INSERT INTO tokens (chain_id, address, name, symbol, decimals, total_supply, metadata_at, supply_at)
       SELECT $1, address, name, symbol, decimals, (power(10, decimals) * 1e9)::numeric, now(), now() FROM lt`,
        [CHAIN],
      );
    });

    await stage("pools", async () => {
      // Pool j: WETH with a reference token for j < 4; else 60 % WETH pairs, 20 % USDC pairs, 20 %
      // pairs of two generated tokens. Liquidity falls with the rank, like the trades.
      await q(
        `CREATE TEMP TABLE lp AS
       WITH raw AS (
         SELECT j, ${addressSql("p", "j")} AS address,
           CASE WHEN j < 4 OR j % 5 < 3 THEN 0 WHEN j % 5 = 3 THEN 1 ELSE 5 + (j * 13 + 1) % ($2::int - 5) END AS a,
           CASE WHEN j < 4 THEN j + 1 ELSE 5 + j % ($2::int - 5) END AS b,
           1e7 / (j + 1) + 2000 AS liquidity
         FROM generate_series(0, $1::int - 1) AS j
       ), pair AS (
         SELECT r.j, r.address, r.liquidity, ta, tb FROM raw r
         JOIN lt ta ON ta.i = r.a JOIN lt tb ON tb.i = CASE WHEN r.b = r.a THEN 5 + (r.b - 4) % ($2::int - 5) ELSE r.b END
       )
       SELECT j, address, liquidity,
         CASE WHEN (ta).address < (tb).address THEN (ta).address ELSE (tb).address END AS token0,
         CASE WHEN (ta).address < (tb).address THEN (tb).address ELSE (ta).address END AS token1,
         CASE WHEN (ta).address < (tb).address THEN (ta).usd ELSE (tb).usd END AS usd0,
         CASE WHEN (ta).address < (tb).address THEN (tb).usd ELSE (ta).usd END AS usd1,
         CASE WHEN (ta).address < (tb).address THEN (ta).decimals ELSE (tb).decimals END AS dec0,
         CASE WHEN (ta).address < (tb).address THEN (tb).decimals ELSE (ta).decimals END AS dec1
       FROM pair`,
        [options.pools, options.tokens],
      );
      await q("CREATE UNIQUE INDEX ON lp (j)");
      await q("CREATE UNIQUE INDEX ON lp (address)");
      await q("ANALYZE lp");
      await q(
        `INSERT INTO pools (chain_id, address, dex, protocol, factory, token0, token1, fee, created_block,
         created_log_index, reserve0, reserve1, state_block, state_log_index)
       SELECT $1, address, 'Uniswap V2', 'v2', $2, token0, token1, 3000, 0, j,
         floor(liquidity / 2 / usd0 * power(10, dec0))::numeric, floor(liquidity / 2 / usd1 * power(10, dec1))::numeric,
         $3, 0
       FROM lp`,
        [CHAIN, FACTORY, usedBlocks],
      );
    });

    await stage("swaps", async () => {
      const perDay = Math.ceil((DAY / 1000 / blockSeconds) * perBlock);
      for (let n0 = 0; n0 < options.swaps; n0 += perDay) {
        const n1 = Math.min(options.swaps, n0 + perDay) - 1;
        // Swap n: block n / perBlock + 1, log index n % perBlock; r1 the side, r2 the USD value, r3 the price's noise.
        await q(
          `INSERT INTO swaps (chain_id, block_number, log_index, block_hash, block_time, tx_hash, tx_index, pool, maker,
           exchange, sender, recipient, amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1, price,
           token0_usd, token1_usd, volume_usd, token0_series_usd, token1_series_usd)
         SELECT $1, g.b + 1, g.n % $4, '0x' || md5(g.b::text) || md5('h' || g.b), to_timestamp($5::float8 / 1000 + g.b * $7::float8),
           '0x' || md5(g.n::text) || md5('x' || g.n), g.n % $4, lp.address, ${addressSql("m", "floor(g.r1 * 50000)::int")},
           '${ROUTER}', '${ROUTER}', ${addressSql("m", "floor(g.r1 * 50000)::int")},
           CASE WHEN g.r1 < 0.5 THEN floor(g.usd / (lp.usd0 * g.noise) * power(10, lp.dec0))::numeric ELSE 0 END,
           CASE WHEN g.r1 < 0.5 THEN 0 ELSE floor(g.usd / lp.usd1 * power(10, lp.dec1))::numeric END,
           CASE WHEN g.r1 < 0.5 THEN 0 ELSE floor(g.usd / (lp.usd0 * g.noise) * power(10, lp.dec0))::numeric END,
           CASE WHEN g.r1 < 0.5 THEN floor(g.usd / lp.usd1 * power(10, lp.dec1))::numeric ELSE 0 END,
           floor(lp.liquidity / 2 / lp.usd0 * power(10, lp.dec0))::numeric, floor(lp.liquidity / 2 / lp.usd1 * power(10, lp.dec1))::numeric,
           lp.usd0 * g.noise / lp.usd1, lp.usd0 * g.noise, lp.usd1, round(g.usd * 64) / 64, lp.usd0 * g.noise, lp.usd1
         FROM (
           SELECT n, n / $4 AS b, random() AS r1, exp(random() * ln(1e5)) AS usd, exp((random() - 0.5) * 0.02) AS noise,
             floor(exp(random() * ln($6::float8 + 1)))::int - 1 AS j
           FROM generate_series($2::bigint, $3::bigint) AS n
         ) g JOIN lp ON lp.j = least(g.j, $6::int - 1)`,
          [CHAIN, n0, n1, perBlock, from, options.pools, blockSeconds],
        );
        if ((n0 / perDay) % 10 === 9) log(`loader: swaps ${n1 + 1} / ${options.swaps}`);
      }
    });

    // One trade's order key (block * 100000 + log index) as a double: exact below 2^53.
    const key = "(s.block_number * 100000 + s.log_index)::float8";
    // Sums are exact (numeric) and rounded once, as the pricing keeps them: token amounts from the
    // raw integers, USD values as loaded (multiples of 1/64, so each double's numeric is exact).
    const amount0 = "abs(s.amount0_in - s.amount0_out) * power(10::numeric, -lp.dec0)";
    const amount1 = "abs(s.amount1_in - s.amount1_out) * power(10::numeric, -lp.dec1)";
    const candleSelect = (resolution: number) => `
    SELECT $1, s.pool, ${resolution}, date_bin(interval '${resolution} seconds', s.block_time, timestamptz '1970-01-01 00:00:00+00'),
      (min(ARRAY[${key}, s.price]))[2], max(s.price), min(s.price), (max(ARRAY[${key}, s.price]))[2],
      1 / (min(ARRAY[${key}, s.price]))[2], 1 / min(s.price), 1 / max(s.price), 1 / (max(ARRAY[${key}, s.price]))[2],
      sum(${amount0})::float8, sum(${amount1})::float8, sum(s.volume_usd::numeric)::float8, count(*)::int,
      (count(*) FILTER (WHERE s.amount0_out > 0))::int, min(s.block_number * 100000 + s.log_index), max(s.block_number * 100000 + s.log_index),
      (min(ARRAY[${key}, s.token0_usd]))[2], max(s.token0_usd), min(s.token0_usd), (max(ARRAY[${key}, s.token0_usd]))[2], sum(s.volume_usd::numeric)::float8,
      (min(ARRAY[${key}, s.token1_usd]))[2], max(s.token1_usd), min(s.token1_usd), (max(ARRAY[${key}, s.token1_usd]))[2], sum(s.volume_usd::numeric)::float8,
      sum(${amount0}), sum(${amount1}), sum(s.volume_usd::numeric), sum(s.volume_usd::numeric), sum(s.volume_usd::numeric)
    FROM swaps s JOIN lp ON lp.address = s.pool WHERE s.chain_id = $1 AND s.block_time >= $2 AND s.block_time < $3
    GROUP BY s.pool, 4`;
    const candleColumns = `chain_id, pool, resolution, bucket, open, high, low, close, open1, high1, low1, close1,
    volume0, volume1, volume_usd, trades, buys0, first_key, last_key,
    open_usd0, high_usd0, low_usd0, close_usd0, volume_usd0, open_usd1, high_usd1, low_usd1, close_usd1, volume_usd1,
    volume0_exact, volume1_exact, volume_usd_exact, volume_usd0_exact, volume_usd1_exact`;
    const days = (start: number) => {
      const out: [number, number][] = [];
      for (let t = Math.floor(start / DAY) * DAY; t < end + 1; t += DAY) out.push([t, t + DAY]);
      return out;
    };
    const iso = (ms: number) => new Date(ms).toISOString();

    await stage("candles", async () => {
      for (const [a, b] of days(from)) {
        await q(`INSERT INTO candles (${candleColumns}) ${candleSelect(3600)}`, [CHAIN, iso(a), iso(b)]);
        if (b > minuteFrom) {
          await q(`INSERT INTO candles (${candleColumns}) ${candleSelect(60)}`, [
            CHAIN,
            iso(Math.max(a, minuteFrom)),
            iso(b),
          ]);
        }
      }
      // Daily candles rolled up from the hourly ones (first and last by their order keys).
      await q(
        `INSERT INTO candles (${candleColumns})
       SELECT chain_id, pool, 86400, date_bin(interval '1 day', bucket, timestamptz '1970-01-01 00:00:00+00'),
         (min(ARRAY[first_key::float8, open]))[2], max(high), min(low), (max(ARRAY[last_key::float8, close]))[2],
         (min(ARRAY[first_key::float8, open1]))[2], max(high1), min(low1), (max(ARRAY[last_key::float8, close1]))[2],
         sum(volume0_exact)::float8, sum(volume1_exact)::float8, sum(volume_usd_exact)::float8, sum(trades)::int, sum(buys0)::int, min(first_key), max(last_key),
         (min(ARRAY[first_key::float8, open_usd0]))[2], max(high_usd0), min(low_usd0), (max(ARRAY[last_key::float8, close_usd0]))[2], sum(volume_usd0_exact)::float8,
         (min(ARRAY[first_key::float8, open_usd1]))[2], max(high_usd1), min(low_usd1), (max(ARRAY[last_key::float8, close_usd1]))[2], sum(volume_usd1_exact)::float8,
         sum(volume0_exact), sum(volume1_exact), sum(volume_usd_exact), sum(volume_usd0_exact), sum(volume_usd1_exact)
       FROM candles_1h WHERE chain_id = $1 GROUP BY chain_id, pool, 4`,
        [CHAIN],
      );
    });

    await stage("series", async () => {
      // Each swap seen from both tokens: its series USD price, the token amount and the USD value.
      const seriesSelect = (resolution: number) => `
      WITH sides AS (
        SELECT p.token0 AS token, s.token0_series_usd AS usd, abs(s.amount0_in - s.amount0_out) * power(10::numeric, -p.dec0) AS amount, s.volume_usd AS v,
          s.block_time, ${key} AS k
        FROM swaps s JOIN lp p ON p.address = s.pool WHERE s.chain_id = $1 AND s.block_time >= $2 AND s.block_time < $3
        UNION ALL
        SELECT p.token1, s.token1_series_usd, abs(s.amount1_in - s.amount1_out) * power(10::numeric, -p.dec1), s.volume_usd, s.block_time, ${key}
        FROM swaps s JOIN lp p ON p.address = s.pool WHERE s.chain_id = $1 AND s.block_time >= $2 AND s.block_time < $3
      )
      SELECT $1, token, ${resolution}, date_bin(interval '${resolution} seconds', block_time, timestamptz '1970-01-01 00:00:00+00'),
        (min(ARRAY[k, usd]))[2], max(usd), min(usd), (max(ARRAY[k, usd]))[2], sum(amount)::float8,
        min(k)::bigint, max(k)::bigint, sum(amount), sum(usd::numeric * usd::numeric * amount), sum(usd::numeric * amount),
        -- The average as the service stores it: Σp·v / Σv rounded once, or the close without volume.
        CASE WHEN sum(usd::numeric * amount) > 0
          THEN exact_quotient(sum(usd::numeric * usd::numeric * amount), sum(usd::numeric * amount))
          ELSE (max(ARRAY[k, usd]))[2] END
      FROM sides GROUP BY token, 4`;
      const columns =
        "chain_id, token, resolution, bucket, open, high, low, close, volume, first_key, last_key, volume_exact, sum_pv_exact, sum_v_exact, average";
      // One statement for each: the pools' tokens hashed once, the groups aggregated in work_mem.
      await q(`INSERT INTO token_usd_candles (${columns}) ${seriesSelect(3600)}`, [
        CHAIN,
        iso(from),
        iso(end + 1),
      ]);
      await q(`INSERT INTO token_usd_candles (${columns}) ${seriesSelect(300)}`, [
        CHAIN,
        iso(minuteFrom),
        iso(end + 1),
      ]);
    });

    await stage("prices and stats", async () => {
      const dayAgo = iso(end - DAY);
      await q(
        `INSERT INTO token_prices (chain_id, token, usd_price, block_number, block_time, provenance)
       SELECT DISTINCT ON (token) chain_id, token, close, $2, $3, '{"method":"pools","pools":[]}'::jsonb
       FROM token_usd_candles_1h WHERE chain_id = $1 ORDER BY token, bucket DESC`,
        [CHAIN, usedBlocks, iso(end)],
      );
      await q(
        `INSERT INTO pair_windows (chain_id, pool, token0, token1, volume_usd_24h, liquidity_usd, price_change_24h, buys_24h, sells_24h, liquidity_usd_exact, first_trade_at)
       SELECT $1, lp.address, lp.token0, lp.token1, COALESCE(d.volume, 0)::float8, lp.liquidity,
         CASE WHEN d.open > 0 THEN (d.close / d.open - 1) * 100 END, COALESCE(d.buys, 0), COALESCE(d.trades - d.buys, 0),
         lp.liquidity::numeric, CASE WHEN d.trades > 0 THEN $2::timestamptz END
       FROM lp LEFT JOIN (
         SELECT pool, sum(volume_usd_exact) AS volume, (min(ARRAY[first_key::float8, open]))[2] AS open,
           (max(ARRAY[last_key::float8, close]))[2] AS close, sum(buys0)::int AS buys, sum(trades)::int AS trades
         FROM candles_1h WHERE chain_id = $1 AND bucket >= $2 GROUP BY pool
       ) d ON d.pool = lp.address`,
        [CHAIN, dayAgo],
      );
      await q(
        `INSERT INTO token_windows (chain_id, token, price_change_24h, volume_usd_24h, liquidity_usd)
       SELECT $1, t.token, CASE WHEN c.open > 0 THEN (c.close / c.open - 1) * 100 END, COALESCE(v.volume, 0), COALESCE(v.liquidity, 0)
       FROM (SELECT token0 AS token FROM lp UNION SELECT token1 FROM lp) t
       LEFT JOIN (
         SELECT token, sum(volume_usd_24h) AS volume, sum(liquidity_usd) AS liquidity FROM (
           SELECT lp.token0 AS token, s.volume_usd_24h, s.liquidity_usd FROM lp JOIN pair_windows s ON s.chain_id = $1 AND s.pool = lp.address
           UNION ALL
           SELECT lp.token1, s.volume_usd_24h, s.liquidity_usd FROM lp JOIN pair_windows s ON s.chain_id = $1 AND s.pool = lp.address
         ) x GROUP BY token
       ) v ON v.token = t.token
       LEFT JOIN (
         SELECT token, (min(ARRAY[first_key::float8, open]))[2] AS open, (max(ARRAY[last_key::float8, close]))[2] AS close
         FROM token_usd_candles_1h WHERE chain_id = $1 AND bucket >= $2 GROUP BY token
       ) c ON c.token = t.token`,
        [CHAIN, dayAgo],
      );
      await q(
        `UPDATE sync_state SET indexed_block = $2::bigint, indexed_block_hash = '0x' || md5(($2::bigint - 1)::text) || md5('h' || ($2::bigint - 1)),
         indexed_block_time = $3, head_block = $2::bigint, head_block_time = $3, updated_at = now()
       WHERE chain_id = $1`,
        [CHAIN, usedBlocks, iso(end)],
      );
      await q(
        `INSERT INTO pricing_sync (chain_id, priced_block, figures_block) VALUES ($1, $2, $2)
       ON CONFLICT (chain_id) DO UPDATE SET priced_block = EXCLUDED.priced_block, figures_block = EXCLUDED.figures_block`,
        [CHAIN, usedBlocks],
      );
      // The minute tables start where the loaded minutes do, as after a retention's drop.
      await q(
        `INSERT INTO retained_from (relation, since) VALUES ('candles_1m', $1), ('token_usd_candles_5m', $1)
       ON CONFLICT (relation) DO UPDATE SET since = EXCLUDED.since`,
        [iso(minuteFrom)],
      );
    });

    await stage("analyze", async () => {
      await q("DROP TABLE lp");
      await q("DROP TABLE lt");
      await q("VACUUM ANALYZE");
    });
  }
}
