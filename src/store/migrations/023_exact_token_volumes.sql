-- tokenmarket schema, version 23: a token's 24-hour volume is the exact sum of its pools' (docs/PRICING.md, "Exact sums").
--
-- pair_stats keeps its 24-hour USD volume exactly beside the double (the exact sum of its candles'
-- volume_usd_exact, migration 022); token_stats.volume_usd_24h sums these exactly and rounds once,
-- instead of adding the pools' rounded volumes as doubles. Existing rows get 0 and are recomputed
-- when migration 022's catch-up refreshes the statistics of every pool that traded.
ALTER TABLE pair_stats ADD COLUMN volume_usd_24h_exact numeric NOT NULL DEFAULT 0;
