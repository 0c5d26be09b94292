-- tokenmarket schema, version 22: candle volumes summed exactly (docs/PRICING.md, "Exact sums").
--
-- A candle's volumes were sums of per-trade doubles, added in key order: off by an ulp or more
-- from the correctly rounded exact sum in about 0.4 % of the demo's candles and 1-17 % of real
-- days'. Each candle now keeps its exact sums beside the doubles: token volumes as the sum of
-- the trades' |net raw amount| / 10^decimals, USD volumes as the exact sum of the trades'
-- volume_usd doubles; the doubles are those sums correctly rounded, and roll-ups (5m, 15m, 30m,
-- 4h) add the exact sums and round once.
--
-- The stored candles cannot be made exact from their doubles: they are emptied, and the pricing
-- stage rebuilds them from the stored swaps at its next batch (pricing_sync removed: it catches
-- up every stored block, as when the pricing is attached to an indexed database; the swaps' USD
-- figures, prices and statistics it writes again are the ones it wrote before, the USD series
-- and market windows skip what they already hold).
TRUNCATE candles;
DELETE FROM pricing_sync;
ALTER TABLE candles
  ADD COLUMN volume0_exact numeric NOT NULL,
  ADD COLUMN volume1_exact numeric NOT NULL,
  ADD COLUMN volume_usd_exact numeric NOT NULL,
  ADD COLUMN volume_usd0_exact numeric,
  ADD COLUMN volume_usd1_exact numeric;
