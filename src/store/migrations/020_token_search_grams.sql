-- tokenmarket schema, version 20: texts of one or two characters found through an index too
-- (GET /v1/tokens/search, src/store/tokens.ts searchTokensByText).
--
-- The trigram indexes of migration 013 serve texts of three characters or more. A shorter text
-- inside few names ("xq", "1", "%") was looked for in every token: 62-95 ms over 200,000 tokens.
-- This index holds each token's one- and two-character pieces of its lowercased symbol and name:
-- a text of one or two ASCII characters is looked up in it (1-5 ms), then matched as before.
-- Built in this migration's transaction: about 5 s for 200,000 tokens on the benchmark's 2 cores
-- (6 MB); inserts of tokens wait meanwhile.
-- The pieces may repeat: the index keeps each key of a row once (24 µs a token, against 36 with
-- DISTINCT).
CREATE FUNCTION token_search_grams(symbol text, name text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(substr(s.text, i, n.size)), '{}')
  FROM unnest(ARRAY[lower(coalesce(symbol, '')), lower(coalesce(name, ''))]) AS s(text),
    generate_series(1, 2) AS n(size),
    generate_series(1, length(s.text) - n.size + 1) AS i
$$;
CREATE INDEX tokens_search_grams_idx ON tokens USING gin (token_search_grams(symbol, name));
