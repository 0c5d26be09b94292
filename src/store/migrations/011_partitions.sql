-- tokenmarket schema, version 11: time partitions for the tables that grow with every trade, so
-- that a year of a busy chain stays manageable and a retention drops whole partitions
-- (docs/ARCHITECTURE.md, "Partitions and retention"; src/store/partitions.ts keeps them).
--
--   swaps                  RANGE (block_time): one partition per UTC day
--   candles                LIST (resolution): candles_1m (60) RANGE (bucket), one partition per
--                          week (Monday 00:00 UTC); candles_1h (3600) and candles_1d (86400) plain
--   token_usd_candles      LIST (resolution): token_usd_candles_5m (300) RANGE (bucket), one
--                          partition per week; token_usd_candles_1h (3600) plain
--
-- Each range-partitioned table has a DEFAULT partition, so that an insert never fails: rows beyond
-- the partitions created ahead land there and the upkeep moves them into partitions of their own.
-- A partitioned table's unique keys must hold its partition key: the candles' and series' keys
-- already do (resolution, bucket); the swaps' key becomes (chain_id, block_number, log_index,
-- block_time), which is the same uniqueness since a block has one time.
--
-- Existing rows are kept: each table is renamed, its partitioned successor created with the same
-- columns in the same order, partitions made for every day or week that holds a row and for the
-- current one and three ahead, the rows copied, the old table dropped, then keys and indexes built (once, over the
-- filled partitions) and the statistics gathered.

-- One partition of `parent` per period of `width` (from Monday 1970-01-05 00:00 UTC) that holds a
-- time of `times`, and for the current period and the three after it; named
-- <parent>_p<YYYYMMDD of its start, UTC>, as src/store/partitions.ts names them. Periods without
-- data in between get none (the DEFAULT partition would take a row there; the upkeep moves it).
CREATE FUNCTION pg_temp.add_partitions(parent text, width interval, times timestamptz[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  origin constant timestamptz := timestamptz '1970-01-05 00:00:00+00';
  current timestamptz := date_bin(width, now(), origin);
  lower timestamptz;
BEGIN
  FOR lower IN
    SELECT DISTINCT date_bin(width, t, origin) FROM unnest(times) AS t
    UNION SELECT current + k * width FROM generate_series(0, 3) AS k
    ORDER BY 1
  LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
      parent || '_p' || to_char(lower AT TIME ZONE 'UTC', 'YYYYMMDD'),
      parent, lower, lower + width
    );
  END LOOP;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- swaps

ALTER TABLE swaps RENAME TO swaps_010;
CREATE TABLE swaps (LIKE swaps_010 INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY RANGE (block_time);
SELECT pg_temp.add_partitions('swaps', interval '1 day',
  ARRAY(SELECT DISTINCT date_trunc('day', block_time, 'UTC') FROM swaps_010));
CREATE TABLE swaps_default PARTITION OF swaps DEFAULT;
INSERT INTO swaps SELECT * FROM swaps_010;
DROP TABLE swaps_010;

ALTER TABLE swaps ADD PRIMARY KEY (chain_id, block_number, log_index, block_time);
ALTER TABLE swaps ADD FOREIGN KEY (chain_id) REFERENCES chains ON DELETE CASCADE;
-- A pool's trades newest first (the API's trades, a pool's latest state and swap block).
CREATE INDEX swaps_pool_idx ON swaps (chain_id, pool, block_number DESC, log_index DESC);
-- Trades of a time range across pools (the market statistics' reads).
CREATE INDEX swaps_time_idx ON swaps (chain_id, block_time);

-- The swaps of each pool's latest block of swaps among those the retention dropped: what a
-- rollback needs to rebuild the state of a pool whose remaining events are all older than the
-- swaps kept (the state after its latest event, and the balances before the first swap of its
-- latest block with swaps). One block per pool at most; filled just before a swaps partition is
-- dropped.
CREATE TABLE pool_last_swaps (LIKE swaps INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE pool_last_swaps ADD PRIMARY KEY (chain_id, block_number, log_index);
ALTER TABLE pool_last_swaps ADD FOREIGN KEY (chain_id) REFERENCES chains ON DELETE CASCADE;
CREATE INDEX pool_last_swaps_pool_idx ON pool_last_swaps (chain_id, pool, block_number DESC, log_index DESC);

-- ---------------------------------------------------------------------------------------------
-- candles

ALTER TABLE candles RENAME TO candles_010;
CREATE TABLE candles (LIKE candles_010 INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY LIST (resolution);
CREATE TABLE candles_1m PARTITION OF candles FOR VALUES IN (60) PARTITION BY RANGE (bucket);
CREATE TABLE candles_1h PARTITION OF candles FOR VALUES IN (3600);
CREATE TABLE candles_1d PARTITION OF candles FOR VALUES IN (86400);
SELECT pg_temp.add_partitions('candles_1m', interval '7 days',
  ARRAY(SELECT DISTINCT date_trunc('day', bucket, 'UTC') FROM candles_010 WHERE resolution = 60));
CREATE TABLE candles_1m_default PARTITION OF candles_1m DEFAULT;
INSERT INTO candles SELECT * FROM candles_010;
DROP TABLE candles_010;

ALTER TABLE candles ADD PRIMARY KEY (chain_id, pool, resolution, bucket);
ALTER TABLE candles ADD FOREIGN KEY (chain_id) REFERENCES chains ON DELETE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- token_usd_candles

ALTER TABLE token_usd_candles RENAME TO token_usd_candles_010;
CREATE TABLE token_usd_candles (LIKE token_usd_candles_010 INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
  PARTITION BY LIST (resolution);
CREATE TABLE token_usd_candles_5m PARTITION OF token_usd_candles FOR VALUES IN (300)
  PARTITION BY RANGE (bucket);
CREATE TABLE token_usd_candles_1h PARTITION OF token_usd_candles FOR VALUES IN (3600);
SELECT pg_temp.add_partitions('token_usd_candles_5m', interval '7 days',
  ARRAY(SELECT DISTINCT date_trunc('day', bucket, 'UTC') FROM token_usd_candles_010 WHERE resolution = 300));
CREATE TABLE token_usd_candles_5m_default PARTITION OF token_usd_candles_5m DEFAULT;
INSERT INTO token_usd_candles SELECT * FROM token_usd_candles_010;
DROP TABLE token_usd_candles_010;

ALTER TABLE token_usd_candles ADD PRIMARY KEY (chain_id, token, resolution, bucket);
ALTER TABLE token_usd_candles ADD FOREIGN KEY (chain_id) REFERENCES chains ON DELETE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Retention

-- Where each retained table's history now starts: every row older than `since` was dropped with
-- its partition (src/store/partitions.ts). No row: nothing was ever dropped. The API reads it to
-- answer ranges older than the retention (docs/API.md, "Retention").
CREATE TABLE retained_from (
  relation  text PRIMARY KEY CHECK (relation IN ('swaps', 'candles_1m', 'token_usd_candles_5m')),
  since     timestamptz NOT NULL
);

ANALYZE swaps;
ANALYZE candles;
ANALYZE token_usd_candles;
