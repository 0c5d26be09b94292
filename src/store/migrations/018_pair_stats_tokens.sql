-- tokenmarket schema, version 18: the pairs of a token ranked through an index of that token's
-- pools (GET /api/v1/pairs, src/store/pools.ts findPoolsOfToken).
--
-- Migration 013's rank index held every pool of the chain in the answer's order: the pairs of a
-- token were found by walking it from the top and skipping the other tokens' pools, about a
-- thousand entries for USDC's 200 busiest at 300,000 pools. A pool's statistics row now carries
-- its two tokens (they never change), and each side has its own rank index: a page of `limit`
-- pairs reads at most `limit` entries of each. The tokens are NULL only for a row whose pool is
-- not in `pools`, which no answer shows (the pairs' reads join `pools`).
DROP INDEX pair_stats_rank_idx;
ALTER TABLE pair_stats ADD COLUMN token0 text, ADD COLUMN token1 text;
UPDATE pair_stats ps SET token0 = p.token0, token1 = p.token1
FROM pools p WHERE p.chain_id = ps.chain_id AND p.address = ps.pool;
CREATE INDEX pair_stats_token0_rank_idx
  ON pair_stats (chain_id, token0, volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool);
CREATE INDEX pair_stats_token1_rank_idx
  ON pair_stats (chain_id, token1, volume_usd_24h DESC, liquidity_usd DESC NULLS LAST, pool);
