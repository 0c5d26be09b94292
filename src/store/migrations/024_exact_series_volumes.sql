-- tokenmarket schema, version 24: the token volume of a USD series bucket summed exactly (docs/PRICING.md, "Exact sums").
--
-- As the candles' (migration 022): each token_usd_candles bucket keeps Σ |net raw amount| /
-- 10^decimals of its trades as numeric beside the double, which is that sum correctly rounded,
-- and the deprecated chart's 15- and 30-minute roll-ups add the exact sums. The stored buckets
-- are emptied and pricing_sync removed again, so the pricing rebuilds them (and the candles, as
-- they are) from the stored swaps at its next batch.
TRUNCATE token_usd_candles;
DELETE FROM pricing_sync;
ALTER TABLE token_usd_candles ADD COLUMN volume_exact numeric NOT NULL;
