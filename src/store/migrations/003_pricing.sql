-- tokenmarket schema, version 3: what the pricing stage needs beyond versions 1 and 2.

-- How far the pricing stage has processed each chain (every block up to priced_block is priced).
-- Normally equal to sync_state.indexed_block, since both move in the same transaction; a lower
-- value (pricing attached to an already indexed database) is caught up from the stored rows.
CREATE TABLE pricing_sync (
  chain_id      integer PRIMARY KEY REFERENCES chains ON DELETE CASCADE,
  priced_block  bigint NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The pool state the USD routing reads, derived only from swaps and pool_events (never from a
-- batch boundary), so that it is the same however the blocks were batched. No foreign key to
-- pools: a rollback that deletes a pool leaves this row to tell the pricing which pool it was.
CREATE TABLE pool_price_state (
  chain_id           integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  pool               text NOT NULL,
  token0             text NOT NULL,
  token1             text NOT NULL,
  reserve0           numeric(78, 0),        -- balances after the pool's latest event (null: unknown)
  reserve1           numeric(78, 0),
  sqrt_price_x96     numeric(78, 0),        -- V3: after the latest event
  swap_block         bigint,                -- the pool's latest block with a swap
  pre_swap_reserve0  numeric(78, 0),        -- balances just before the first swap of swap_block
  pre_swap_reserve1  numeric(78, 0),
  state_block        bigint NOT NULL,       -- the latest event
  state_log_index    integer NOT NULL,
  state_time         timestamptz NOT NULL,
  PRIMARY KEY (chain_id, pool)
);
CREATE INDEX pool_price_state_block_idx ON pool_price_state (chain_id, state_block);

-- A trade's USD price of each token when the trade enters that token's USD series
-- (token_usd_candles); null when it does not (pool below the floor, outlier, token unpriced).
-- Kept so that a rollback rebuilds the series from the remaining swaps without re-pricing them.
ALTER TABLE swaps ADD COLUMN token0_series_usd double precision;
ALTER TABLE swaps ADD COLUMN token1_series_usd double precision;
