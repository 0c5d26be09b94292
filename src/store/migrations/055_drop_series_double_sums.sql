-- tokenmarket schema, version 55: the series' double sums go. Σ p·v and Σ v are kept exactly
-- (sum_pv_exact, sum_v_exact, migration 050) and their quotient rounded once is `average`
-- (migration 053); nothing reads the doubles rounded from them.
ALTER TABLE token_usd_candles DROP COLUMN sum_pv, DROP COLUMN sum_v;
