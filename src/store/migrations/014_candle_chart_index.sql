-- tokenmarket schema, version 14: the candles of a chart read from an index alone
-- (`npm run bench:scale`, BENCHMARKS.md "Scale"). An index only: no data changes.
--
-- A pair's candles (GET /api/v1/candles, src/store/candles.ts loadChartCandles) are written a
-- bucket at a time for every pool that traded, so one pool's consecutive candles lie on as many
-- heap pages as there are candles: 90 days of hourly candles of a busy pair took 2,160 heap pages,
-- 16 ms when they were not in shared buffers (10 M swaps, 400,000 pools). With the chart's columns
-- in the index (both sides' token prices and volumes; the USD candles, an extension, still read
-- the heap), Postgres answers by an index-only scan over a few dozen consecutive index pages, for
-- the pages autovacuum has marked all-visible (every bucket but the latest ones).
CREATE INDEX candles_chart_idx ON candles (chain_id, pool, resolution, bucket)
  INCLUDE (open, high, low, close, volume0, open1, high1, low1, close1, volume1);
