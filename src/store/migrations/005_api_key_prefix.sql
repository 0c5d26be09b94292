-- Keys kept at most a short prefix in clear: 9 characters were stored, which was 9 of 16 for a
-- minimum-length seeded key. Keys are looked up by their hash only, so every existing key keeps
-- working; the prefix shrinks to 4 characters (a quarter of the shortest key ever accepted).
-- New keys store keyPrefixOf(key) (src/store/api-keys.ts): at most 7 characters, at most a quarter.
UPDATE api_keys SET key_prefix = left(key_prefix, 4) WHERE length(key_prefix) > 4;
