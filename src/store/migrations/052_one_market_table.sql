-- tokenmarket schema, version 52: one table per kind holds the 24-hour figures (docs/PRICING.md,
-- "Market windows").
--
-- pair_stats and token_stats held a second copy of the 24-hour volume, trade counts and price
-- change beside pair_windows and token_windows, computed from other inputs (candles rather than
-- trade buckets), so that two endpoints could answer two figures for the same pair. Their own
-- figures move here: a pair's tokens and USD liquidity (with its exact decimal, migration 051), a
-- token's USD liquidity and its 24-hour change, which is the percent change of its USD price (the
-- price the API shows, against its USD series when the window starts: it follows the price when a
-- reference token moves, without a trade of its own). A row now exists for a pool or token that
-- has a liquidity but no trade: its window figures are 0 and its minute and first trade null.
-- The rank, liquidity and search indexes move with the columns they order by.
ALTER TABLE pair_windows
  ADD COLUMN token0 text,
  ADD COLUMN token1 text,
  ADD COLUMN liquidity_usd double precision,
  ADD COLUMN liquidity_usd_exact numeric,
  ALTER COLUMN minute DROP NOT NULL,
  ALTER COLUMN first_trade_at DROP NOT NULL;
ALTER TABLE token_windows
  ADD COLUMN liquidity_usd double precision NOT NULL DEFAULT 0,
  ALTER COLUMN minute DROP NOT NULL,
  ALTER COLUMN first_trade_at DROP NOT NULL;
DO $$
DECLARE
  t text;
  c text;
  w text;
BEGIN
  FOREACH t IN ARRAY ARRAY['pair_windows', 'token_windows'] LOOP
    FOREACH c IN ARRAY ARRAY['volume_usd', 'buys', 'sells', 'makers'] LOOP
      FOREACH w IN ARRAY ARRAY['5m', '1h', '6h', '24h'] LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET DEFAULT 0', t, c || '_' || w);
      END LOOP;
    END LOOP;
  END LOOP;
END $$;

INSERT INTO pair_windows (chain_id, pool, liquidity_usd, liquidity_usd_exact)
SELECT chain_id, pool, liquidity_usd, liquidity_usd_exact FROM pair_stats
ON CONFLICT (chain_id, pool) DO UPDATE
  SET liquidity_usd = EXCLUDED.liquidity_usd, liquidity_usd_exact = EXCLUDED.liquidity_usd_exact;
UPDATE pair_windows w SET token0 = p.token0, token1 = p.token1
FROM pools p WHERE p.chain_id = w.chain_id AND p.address = w.pool;
-- The 24-hour change of a token is the one token_stats held (the windows' was measured to the
-- series price at the token's last trade).
INSERT INTO token_windows (chain_id, token, liquidity_usd, price_change_24h)
SELECT chain_id, token, liquidity_usd, price_change_24h FROM token_stats
ON CONFLICT (chain_id, token) DO UPDATE
  SET liquidity_usd = EXCLUDED.liquidity_usd, price_change_24h = EXCLUDED.price_change_24h;
UPDATE token_windows w SET price_change_24h = NULL
WHERE NOT EXISTS (SELECT 1 FROM token_stats s WHERE s.chain_id = w.chain_id AND s.token = w.token);

CREATE INDEX pair_windows_token0_rank_idx
  ON pair_windows (chain_id, token0, volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool);
CREATE INDEX pair_windows_token1_rank_idx
  ON pair_windows (chain_id, token1, volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool);
CREATE INDEX pair_windows_liquidity_idx ON pair_windows (chain_id, liquidity_usd DESC NULLS LAST, pool);
CREATE INDEX token_windows_search_idx ON token_windows (liquidity_usd DESC, chain_id, token);
-- As token_stats (migration 015): room in each page for a row's new version.
ALTER TABLE token_windows SET (fillfactor = 50);
DROP TABLE pair_stats, token_stats;
