-- tokenmarket schema, version 17: how far the market-wide figures are current.
--
-- A backfill batch far below the head prices its trades, candles and USD series but leaves the
-- figures that follow every reference-price move (token_prices, pair_stats, token_stats) to a
-- later batch (docs/PRICING.md, "Figures deferred in a backfill"). figures_block is the block
-- as of which those were last brought up to date; below priced_block, the next batch that
-- refreshes them recomputes the statistics of every pool, since what changed in between is
-- known only to the process that deferred it. Existing rows were current at their priced block.
-- A row written by an older version during an upgrade (it knows only priced_block) keeps the
-- default, -1: behind, so the new version refreshes everything once.
ALTER TABLE pricing_sync ADD COLUMN figures_block bigint NOT NULL DEFAULT -1;
UPDATE pricing_sync SET figures_block = priced_block;
