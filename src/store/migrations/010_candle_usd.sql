-- tokenmarket schema, version 10: the USD candles of both tokens of each pool candle.
--
-- `/api/v1/candles?currency=usd` answers a token's USD price at each trade of a pair: the trade's
-- stored USD price of that token (swaps.token0_usd / token1_usd), volume Σ volume_usd, trades
-- without a USD price of the token left out. Kept per side in the candle rows as they grow at
-- ingest (and rebuilt with them after a rollback), so a long range reads as few rows as the
-- token candles do. Null where the bucket holds no USD-priced trade of that token.
ALTER TABLE candles
  ADD COLUMN open_usd0   double precision,
  ADD COLUMN high_usd0   double precision,
  ADD COLUMN low_usd0    double precision,
  ADD COLUMN close_usd0  double precision,
  ADD COLUMN volume_usd0 double precision,
  ADD COLUMN open_usd1   double precision,
  ADD COLUMN high_usd1   double precision,
  ADD COLUMN low_usd1    double precision,
  ADD COLUMN close_usd1  double precision,
  ADD COLUMN volume_usd1 double precision;

-- Existing rows keep their data and get their USD candles from the stored swaps: the trades a
-- candle holds are the bucket's swaps with an execution price (both net amounts non-zero and
-- flowing opposite ways) in a pool whose tokens' decimals are known; each side folds, in
-- (block, log index) order, the trades with a USD price of its token: first and last price, the
-- extremes, and Σ volume_usd (null counted as 0) added in that order, the very sum the ingest makes.
WITH trades AS (
  SELECT s.chain_id, s.pool, s.block_number, s.log_index, s.block_time,
    s.token0_usd, s.token1_usd, COALESCE(s.volume_usd, 0) AS volume_usd
  FROM swaps s
  JOIN pools p ON p.chain_id = s.chain_id AND p.address = s.pool
  JOIN tokens t0 ON t0.chain_id = p.chain_id AND t0.address = p.token0
  JOIN tokens t1 ON t1.chain_id = p.chain_id AND t1.address = p.token1
  WHERE (s.token0_usd IS NOT NULL OR s.token1_usd IS NOT NULL)
    AND t0.decimals IS NOT NULL AND t1.decimals IS NOT NULL
    AND s.amount0_in <> s.amount0_out AND s.amount1_in <> s.amount1_out
    AND (s.amount0_in > s.amount0_out) <> (s.amount1_in > s.amount1_out)
),
usd AS (
  SELECT t.chain_id, t.pool, r.resolution,
    date_bin(r.resolution * interval '1 second', t.block_time, timestamptz '1970-01-01 00:00:00+00') AS bucket,
    (array_agg(t.token0_usd ORDER BY t.block_number, t.log_index) FILTER (WHERE t.token0_usd IS NOT NULL))[1] AS open_usd0,
    max(t.token0_usd) AS high_usd0,
    min(t.token0_usd) AS low_usd0,
    (array_agg(t.token0_usd ORDER BY t.block_number DESC, t.log_index DESC) FILTER (WHERE t.token0_usd IS NOT NULL))[1] AS close_usd0,
    sum(t.volume_usd ORDER BY t.block_number, t.log_index) FILTER (WHERE t.token0_usd IS NOT NULL) AS volume_usd0,
    (array_agg(t.token1_usd ORDER BY t.block_number, t.log_index) FILTER (WHERE t.token1_usd IS NOT NULL))[1] AS open_usd1,
    max(t.token1_usd) AS high_usd1,
    min(t.token1_usd) AS low_usd1,
    (array_agg(t.token1_usd ORDER BY t.block_number DESC, t.log_index DESC) FILTER (WHERE t.token1_usd IS NOT NULL))[1] AS close_usd1,
    sum(t.volume_usd ORDER BY t.block_number, t.log_index) FILTER (WHERE t.token1_usd IS NOT NULL) AS volume_usd1
  FROM trades t
  CROSS JOIN (VALUES (60), (3600), (86400)) AS r(resolution)
  GROUP BY t.chain_id, t.pool, r.resolution, 4
)
UPDATE candles c SET
  open_usd0 = u.open_usd0, high_usd0 = u.high_usd0, low_usd0 = u.low_usd0,
  close_usd0 = u.close_usd0, volume_usd0 = u.volume_usd0,
  open_usd1 = u.open_usd1, high_usd1 = u.high_usd1, low_usd1 = u.low_usd1,
  close_usd1 = u.close_usd1, volume_usd1 = u.volume_usd1
FROM usd u
WHERE c.chain_id = u.chain_id AND c.pool = u.pool AND c.resolution = u.resolution AND c.bucket = u.bucket;
