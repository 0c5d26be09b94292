-- tokenmarket schema, version 9: market statistics over four windows (5m, 1h, 6h, 24h) of pairs
-- and tokens, and what keeps them current cheaply (docs/PRICING.md, "Market windows").
--
-- Existing data is kept. The new tables start empty: the pricing stage folds every stored, priced
-- swap into them at its next batch (market_sync has no row for the chain yet, so it starts from
-- the chain's first block), in exact arithmetic that SQL's float8 → numeric cast cannot do.

-- Trades of each pool per UTC minute (60) and per UTC hour (3600). A window is summed from
-- minutes at its ends and hours in between. volume_usd is exact: the sum of the trades'
-- swaps.volume_usd doubles, each taken as the exact binary fraction it is, so any grouping of
-- buckets gives the same sum, and a window's volume is that sum rounded once.
CREATE TABLE pool_trade_buckets (
  chain_id     integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  pool         text NOT NULL,
  resolution   integer NOT NULL CHECK (resolution IN (60, 3600)),
  bucket       timestamptz NOT NULL,       -- interval start, aligned to the UTC epoch
  volume_usd   numeric NOT NULL,           -- exact Σ swaps.volume_usd (a trade without one adds 0)
  trades       integer NOT NULL,
  buys         integer NOT NULL,           -- trades in which token0 left the pool (side "buy" of token0)
  first_key    bigint NOT NULL,            -- block_number * 100000 + log_index of the first trade
  last_key     bigint NOT NULL,            -- … of the last
  first_time   timestamptz NOT NULL,       -- block time of the first trade
  open_price   double precision,           -- swaps.price (token0 in token1) after the first trade that has one
  close_price  double precision,           -- … after the last one
  PRIMARY KEY (chain_id, pool, resolution, bucket)
);
-- The price at a window's start: the latest minute before it with a price (or the first in it).
CREATE INDEX pool_trade_buckets_priced_idx ON pool_trade_buckets (chain_id, pool, bucket)
  WHERE resolution = 60 AND close_price IS NOT NULL;

-- The same per token, over every pool holding it. open_usd/close_usd: the token's USD price at
-- the trade as its USD series records it (swaps.token0_series_usd / token1_series_usd).
CREATE TABLE token_trade_buckets (
  chain_id     integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  token        text NOT NULL,
  resolution   integer NOT NULL CHECK (resolution IN (60, 3600)),
  bucket       timestamptz NOT NULL,
  volume_usd   numeric NOT NULL,
  trades       integer NOT NULL,
  buys         integer NOT NULL,           -- trades in which the token left the pool
  first_key    bigint NOT NULL,
  last_key     bigint NOT NULL,
  first_time   timestamptz NOT NULL,
  open_usd     double precision,
  close_usd    double precision,
  PRIMARY KEY (chain_id, token, resolution, bucket)
);
CREATE INDEX token_trade_buckets_priced_idx ON token_trade_buckets (chain_id, token, bucket)
  WHERE resolution = 60 AND close_usd IS NOT NULL;

-- Each maker's (transaction sender's) latest trade per pool and per token: the makers of a
-- window are the rows with last_time at or after its start (an index range count).
CREATE TABLE pool_makers (
  chain_id    integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  pool        text NOT NULL,
  maker       text NOT NULL,
  last_time   timestamptz NOT NULL,
  last_block  bigint NOT NULL,
  PRIMARY KEY (chain_id, pool, maker)
);
CREATE INDEX pool_makers_time_idx ON pool_makers (chain_id, pool, last_time);
-- After a rollback, a token's maker row is rebuilt from the maker's rows of the token's pools.
CREATE INDEX pool_makers_maker_idx ON pool_makers (chain_id, maker);

CREATE TABLE token_makers (
  chain_id    integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  token       text NOT NULL,
  maker       text NOT NULL,
  last_time   timestamptz NOT NULL,
  last_block  bigint NOT NULL,
  PRIMARY KEY (chain_id, token, maker)
);
CREATE INDEX token_makers_time_idx ON token_makers (chain_id, token, last_time);

-- The windows' figures of each pair with at least one trade, as of `minute` (the windows end
-- with that minute; docs/API.md). price_change_*: percent of token0's price in token1.
CREATE TABLE pair_windows (
  chain_id          integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  pool              text NOT NULL,
  minute            timestamptz NOT NULL,
  price_change_5m   double precision,
  volume_usd_5m     double precision NOT NULL,
  buys_5m           integer NOT NULL,
  sells_5m          integer NOT NULL,
  makers_5m         integer NOT NULL,
  price_change_1h   double precision,
  volume_usd_1h     double precision NOT NULL,
  buys_1h           integer NOT NULL,
  sells_1h          integer NOT NULL,
  makers_1h         integer NOT NULL,
  price_change_6h   double precision,
  volume_usd_6h     double precision NOT NULL,
  buys_6h           integer NOT NULL,
  sells_6h          integer NOT NULL,
  makers_6h         integer NOT NULL,
  price_change_24h  double precision,
  volume_usd_24h    double precision NOT NULL,
  buys_24h          integer NOT NULL,
  sells_24h         integer NOT NULL,
  makers_24h        integer NOT NULL,
  last_price        double precision,       -- swaps.price after the latest trade that has one
  first_trade_at    timestamptz NOT NULL,
  PRIMARY KEY (chain_id, pool)
);
CREATE INDEX pair_windows_volume_idx ON pair_windows (chain_id, volume_usd_24h DESC, pool);
CREATE INDEX pair_windows_volume_1h_idx ON pair_windows (chain_id, volume_usd_1h DESC);

-- The same per token with at least one trade; price_change_*: percent of its USD price.
CREATE TABLE token_windows (
  chain_id          integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  token             text NOT NULL,
  minute            timestamptz NOT NULL,
  price_change_5m   double precision,
  volume_usd_5m     double precision NOT NULL,
  buys_5m           integer NOT NULL,
  sells_5m          integer NOT NULL,
  makers_5m         integer NOT NULL,
  price_change_1h   double precision,
  volume_usd_1h     double precision NOT NULL,
  buys_1h           integer NOT NULL,
  sells_1h          integer NOT NULL,
  makers_1h         integer NOT NULL,
  price_change_6h   double precision,
  volume_usd_6h     double precision NOT NULL,
  buys_6h           integer NOT NULL,
  sells_6h          integer NOT NULL,
  makers_6h         integer NOT NULL,
  price_change_24h  double precision,
  volume_usd_24h    double precision NOT NULL,
  buys_24h          integer NOT NULL,
  sells_24h         integer NOT NULL,
  makers_24h        integer NOT NULL,
  last_usd          double precision,       -- the series USD price after the latest trade that has one
  first_trade_at    timestamptz NOT NULL,
  PRIMARY KEY (chain_id, token)
);

-- Per chain: every priced swap up to built_block is in the buckets and maker rows; the windows
-- were last slid to `minute` (null: never).
CREATE TABLE market_sync (
  chain_id     integer PRIMARY KEY REFERENCES chains ON DELETE CASCADE,
  built_block  bigint NOT NULL,
  minute       timestamptz
);

-- Discovery (GET /api/v1/pools/top): the most liquid pools and the newest ones, top-N by index.
CREATE INDEX pair_stats_liquidity_idx ON pair_stats (chain_id, liquidity_usd DESC NULLS LAST, pool);
CREATE INDEX pools_created_idx ON pools (chain_id, created_block DESC, address);
