-- tokenmarket schema, version 50: trades valued exactly, and the USD series' hourly average from
-- exact sums and from the prices that set the token's price (docs/PRICING.md, "Exact sums",
-- "USD series").
--
-- A trade's USD value is now its amount times its token's USD price exactly, rounded once (it was
-- the product of the two rounded doubles). A USD series point is now the token's USD price at the
-- trade, for trades of the pools that set that price (it was the trade's execution price times its
-- quote's USD price, for those pools and the ones the median filter dropped), and each bucket keeps
-- Σ p·v and Σ v exactly beside the doubles; the average is their ratio rounded once.
--
-- What the stored swaps' figures fed is emptied and pricing_sync removed, so the pricing prices
-- every stored block again at its next batch and rebuilds the candles, the USD series and the
-- market windows from the swaps it re-values (as migration 022).
TRUNCATE candles, token_usd_candles, pool_trade_buckets, token_trade_buckets, pool_makers, token_makers,
  pair_windows, token_windows;
DELETE FROM market_sync;
DELETE FROM pricing_sync;
ALTER TABLE token_usd_candles
  ADD COLUMN sum_pv_exact numeric NOT NULL,
  ADD COLUMN sum_v_exact numeric NOT NULL;
