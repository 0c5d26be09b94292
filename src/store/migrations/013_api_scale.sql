-- tokenmarket schema, version 13: indexes the API's reads need at mainnet scale (measured
-- by `npm run bench:scale`, BENCHMARKS.md "Scale"). Indexes only: no data
-- changes.
--
-- The pairs of a token (GET /api/v1/pairs, src/store/pools.ts findPoolsOfToken), busiest first: the
-- statistics in the answer's order, so that the pairs of a token held by most pools (WETH) are read
-- from the top down to the page's size instead of all sorted.
CREATE INDEX pair_stats_rank_idx ON pair_stats (chain_id, volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool);

-- Token search by text (GET /v1/tokens/search, src/store/tokens.ts searchTokensByText): a
-- substring of the symbol or the name, case-insensitive, found through trigram indexes rather than
-- a scan of every token (200,000 and more on a mainnet). pg_trgm ships with PostgreSQL (contrib).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX tokens_symbol_trgm_idx ON tokens USING gin (lower(symbol) gin_trgm_ops);
CREATE INDEX tokens_name_trgm_idx ON tokens USING gin (lower(name) gin_trgm_ops);
