-- tokenmarket schema, version 19: the tokens in the search's order
-- (GET /v1/tokens/search, src/store/tokens.ts searchTokensByText).
--
-- A text inside many names or symbols ("coin": 27,000 of 200,000 tokens; "a": 130,000) had every
-- match ranked by its liquidity, one lookup each: 150 ms to 1 s. The search now walks the tokens
-- in its own order (liquidity, then chain and address) and stops at a page of matches. The cost:
-- an update of a token's liquidity is no longer heap-only (migration 015) but adds an entry here,
-- as pair_stats' rank indexes already do for pools (BENCHMARKS.md "Scale").
CREATE INDEX token_stats_search_idx ON token_stats (liquidity_usd DESC, chain_id, token);
