-- tokenmarket schema, version 15: room in the pages of the tables the pricing rewrites at every
-- block (BENCHMARKS.md "Pricing"). When WETH trades, every token priced through it gets a
-- new token_prices row and token_stats row. Neither table indexes the rewritten columns, so each
-- update can be HOT (heap-only: no new index entry, the old version pruned within its page), but
-- only when the page has room for the new version: at the default fill factor (100) full pages
-- made almost every update a non-HOT one (under 1 % HOT in a 30,000-row test; 100 % at 50, at
-- 0.4× the time per update, dead versions bounded by the table's size). Storage parameters only:
-- no rewrite, no data changes; pages written from now on keep half their room free.
ALTER TABLE token_prices SET (fillfactor = 50);
ALTER TABLE token_stats SET (fillfactor = 50);
