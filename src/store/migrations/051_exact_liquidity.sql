-- tokenmarket schema, version 51: USD liquidity exactly (docs/PRICING.md, "Exact prices").
--
-- A pool's USD liquidity is now Σ raw balance / 10^decimals × its token's USD price computed
-- exactly and rounded once (it was the sum of two products of rounded doubles); a token's liquidity
-- is the exact sum of its qualifying pools' liquidities, rounded once (it was a sum of doubles in
-- address order). pair_stats keeps each pool's liquidity as the exact decimal its double denotes,
-- which Postgres sums exactly (a float8 → numeric cast keeps 15 digits only). pricing_sync is
-- removed so that the pricing brings every figure up to date at its next batch (as migration 050).
ALTER TABLE pair_stats ADD COLUMN liquidity_usd_exact numeric;
DELETE FROM pricing_sync;
