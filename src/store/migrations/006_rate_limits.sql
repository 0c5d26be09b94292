-- tokenmarket schema, version 4: the API's rate-limit counters, shared by every API process.

-- One fixed window per key: the window starts at the key's first request and lasts the
-- configured windowMs. UNLOGGED: no WAL, so counting costs little and nothing is replicated (the
-- counters live on the primary only); a crash empties it, which at worst gives every key a fresh
-- window.
CREATE UNLOGGED TABLE api_rate_limits (
  key           text PRIMARY KEY,
  window_start  bigint NOT NULL,   -- ms since the epoch, by the database's clock
  count         integer NOT NULL
);
