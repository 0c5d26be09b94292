-- tokenmarket schema, version 1. Runs on PostgreSQL >= 15.
-- Conventions: addresses and hashes are lowercase 0x-hex text; raw on-chain amounts are
-- numeric(78,0) (exact uint256); prices are double precision, already decimal-adjusted.
-- Everything ingested for a chain hangs off chains(chain_id) with ON DELETE CASCADE, so a
-- devnet reborn with a new genesis is dropped with one DELETE.

CREATE TABLE chains (
  chain_id      integer PRIMARY KEY,
  name          text NOT NULL,
  genesis_hash  text NOT NULL,
  devnet        boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- The per-chain checkpoint: every block <= indexed_block is fully ingested. It is written in
-- the same transaction as the data it covers.
CREATE TABLE sync_state (
  chain_id            integer PRIMARY KEY REFERENCES chains ON DELETE CASCADE,
  indexed_block       bigint NOT NULL,
  indexed_block_hash  text,
  indexed_block_time  timestamptz,
  head_block          bigint,
  head_block_time     timestamptz,
  -- Backfill progress figures, written by the indexer for the API's freshness information.
  blocks_per_second   double precision,
  swaps_per_second    double precision,
  updated_at          timestamptz NOT NULL DEFAULT now()
);

-- Canonical blocks of the unfinalized window (and the checkpoint block), for reorg detection.
CREATE TABLE blocks (
  chain_id     integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  number       bigint NOT NULL,
  hash         text NOT NULL,
  parent_hash  text NOT NULL,
  time         timestamptz NOT NULL,
  PRIMARY KEY (chain_id, number)
);

CREATE TABLE tokens (
  chain_id           integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  address            text NOT NULL,
  name               text,
  symbol             text,
  decimals           smallint,
  total_supply       numeric(78, 0),
  metadata_at        timestamptz,           -- when name/symbol/decimals were read
  supply_at          timestamptz,           -- when total_supply was last refreshed
  PRIMARY KEY (chain_id, address)
);
CREATE INDEX tokens_symbol_idx ON tokens (lower(symbol) text_pattern_ops);
CREATE INDEX tokens_name_idx ON tokens (lower(name) text_pattern_ops);

-- Pools discovered from the configured factories' creation events, with their latest state.
-- The latest state is derived data: after a rollback it is recomputed from swaps and pool_events.
CREATE TABLE pools (
  chain_id          integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  address           text NOT NULL,
  dex               text NOT NULL,          -- the configured DEX name (factory_name)
  protocol          text NOT NULL CHECK (protocol IN ('v2', 'v3')),
  factory           text NOT NULL,
  token0            text NOT NULL,
  token1            text NOT NULL,
  fee               integer,                -- hundredths of a bip (3000 = 0.3 %)
  tick_spacing      integer,
  created_block     bigint NOT NULL,
  created_log_index integer NOT NULL,
  -- latest state (after the last ingested event of the pool)
  reserve0          numeric(78, 0),         -- token balances held by the pool (V2: Sync; V3: tracked)
  reserve1          numeric(78, 0),
  sqrt_price_x96    numeric(78, 0),         -- V3
  liquidity         numeric(78, 0),         -- V3 active liquidity
  tick              integer,                -- V3
  state_block       bigint,
  state_log_index   integer,
  PRIMARY KEY (chain_id, address)
);
CREATE INDEX pools_token0_idx ON pools (chain_id, token0);
CREATE INDEX pools_token1_idx ON pools (chain_id, token1);

-- Swaps: one row per Swap log of a known pool. Keyed by (chain, block, log index): writes are
-- idempotent. Amounts are raw integers from the pool's point of view (in = paid into the pool).
CREATE TABLE swaps (
  chain_id        integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  block_number    bigint NOT NULL,
  log_index       integer NOT NULL,
  block_hash      text NOT NULL,
  block_time      timestamptz NOT NULL,
  tx_hash         text NOT NULL,
  tx_index        integer NOT NULL,
  pool            text NOT NULL,
  maker           text,                     -- the transaction's sender (null only in replay)
  exchange        text,                     -- the contract the transaction called
  sender          text NOT NULL,            -- the Swap event's sender (router)
  recipient       text NOT NULL,            -- the Swap event's to/recipient
  amount0_in      numeric(78, 0) NOT NULL,
  amount1_in      numeric(78, 0) NOT NULL,
  amount0_out     numeric(78, 0) NOT NULL,
  amount1_out     numeric(78, 0) NOT NULL,
  reserve0        numeric(78, 0),           -- the pool's reserves after the swap (null when unknown)
  reserve1        numeric(78, 0),
  sqrt_price_x96  numeric(78, 0),           -- V3: after the swap
  liquidity       numeric(78, 0),           -- V3: active liquidity after the swap
  tick            integer,                  -- V3: after the swap
  -- Post-swap pool price of token0 in token1, decimal-adjusted (null when decimals unknown).
  price           double precision,
  -- Pricing stage: USD prices of both tokens at this trade and the trade's USD value.
  token0_usd      double precision,
  token1_usd      double precision,
  volume_usd      double precision,
  PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX swaps_pool_idx ON swaps (chain_id, pool, block_number DESC, log_index DESC);
CREATE INDEX swaps_time_idx ON swaps (chain_id, block_time);

-- Liquidity and state events other than swaps (V2 Sync outside a swap, Mint, Burn; V3 Mint,
-- Burn, Collect). They move reserves; kept so state can be recomputed after a rollback.
CREATE TABLE pool_events (
  chain_id        integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  block_number    bigint NOT NULL,
  log_index       integer NOT NULL,
  block_time      timestamptz NOT NULL,
  tx_hash         text NOT NULL,
  pool            text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('sync', 'mint', 'burn', 'collect')),
  amount0         numeric(78, 0),
  amount1         numeric(78, 0),
  liquidity_delta numeric(78, 0),           -- V3 mint (+) / burn (-) amount of liquidity
  tick_lower      integer,
  tick_upper      integer,
  reserve0        numeric(78, 0),           -- the pool's reserves after the event
  reserve1        numeric(78, 0),
  liquidity       numeric(78, 0),           -- V3 active liquidity after the event
  PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX pool_events_pool_idx ON pool_events (chain_id, pool, block_number DESC, log_index DESC);

-- One-minute, one-hour and one-day candles per pool, kept current at ingest. Prices are token0
-- in token1 (decimal-adjusted execution prices of the trades); the token1 side is the
-- reciprocal (open1 = 1/open0, high1 = 1/low0, …) with volume1. Coarser intervals roll up from
-- these: 5m/15m/30m from 1m, 4h from 1h.
CREATE TABLE candles (
  chain_id     integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  pool         text NOT NULL,
  resolution   integer NOT NULL CHECK (resolution IN (60, 3600, 86400)),  -- seconds
  bucket       timestamptz NOT NULL,     -- interval start, aligned to the UTC epoch
  open         double precision NOT NULL,
  high         double precision NOT NULL,
  low          double precision NOT NULL,
  close        double precision NOT NULL,
  volume0      double precision NOT NULL, -- token0 traded, decimal-adjusted
  volume1      double precision NOT NULL, -- token1 traded, decimal-adjusted
  volume_usd   double precision NOT NULL DEFAULT 0,
  trades       integer NOT NULL,
  buys0        integer NOT NULL DEFAULT 0, -- trades in which token0 was bought (left the pool)
  first_key    bigint NOT NULL,          -- block_number * 100000 + log_index of the open trade
  last_key     bigint NOT NULL,          -- … of the close trade
  PRIMARY KEY (chain_id, pool, resolution, bucket)
);

-- Current USD price of each priced token, with its provenance.
CREATE TABLE token_prices (
  chain_id     integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  token        text NOT NULL,
  usd_price    double precision,         -- null: no qualifying route
  block_number bigint NOT NULL,
  block_time   timestamptz NOT NULL,
  -- {"method": "anchor"|"pools", "pools": [{pool, dex, quote, liquidity_usd, price_usd, weight}], "confidence": …}
  provenance   jsonb NOT NULL,
  PRIMARY KEY (chain_id, token)
);

-- Hourly and 5-minute USD series per token over its qualifying pools: the volume-weighted
-- average (sum_pv / sum_v) for the line chart and the USD candles of the deprecated chart.
CREATE TABLE token_usd_candles (
  chain_id     integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  token        text NOT NULL,
  resolution   integer NOT NULL CHECK (resolution IN (300, 3600)),
  bucket       timestamptz NOT NULL,
  open         double precision NOT NULL,
  high         double precision NOT NULL,
  low          double precision NOT NULL,
  close        double precision NOT NULL,
  volume       double precision NOT NULL,  -- token units
  sum_pv       double precision NOT NULL,  -- Σ usd_price × usd_volume
  sum_v        double precision NOT NULL,  -- Σ usd_volume
  first_key    bigint NOT NULL,
  last_key     bigint NOT NULL,
  PRIMARY KEY (chain_id, token, resolution, bucket)
);

-- 24-hour statistics, kept current as blocks arrive and as the window slides.
CREATE TABLE pair_stats (
  chain_id         integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  pool             text NOT NULL,
  volume_usd_24h   double precision NOT NULL DEFAULT 0,
  liquidity_usd    double precision,
  price_change_24h double precision,      -- percent, token0 in token1
  buys_24h         integer NOT NULL DEFAULT 0,   -- token0 bought
  sells_24h        integer NOT NULL DEFAULT 0,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, pool)
);
CREATE TABLE token_stats (
  chain_id         integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  token            text NOT NULL,
  price_change_24h double precision,      -- percent of the USD price
  volume_usd_24h   double precision NOT NULL DEFAULT 0,
  liquidity_usd    double precision NOT NULL DEFAULT 0, -- over its qualifying pools
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, token)
);

-- API keys, stored as SHA-256 hashes. Not tied to a chain: they survive a devnet rebirth.
CREATE TABLE api_keys (
  id           bigserial PRIMARY KEY,
  name         text NOT NULL,
  key_hash     text NOT NULL UNIQUE,
  key_prefix   text NOT NULL,             -- first characters, to tell keys apart in listings
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);

-- Settings that survive a devnet rebirth (for example the demo key's id).
CREATE TABLE settings (
  key    text PRIMARY KEY,
  value  jsonb NOT NULL
);
