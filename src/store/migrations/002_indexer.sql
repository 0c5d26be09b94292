-- tokenmarket schema, version 2: what the indexer needs beyond version 1.

-- The replay source (recorded logs) has no block hashes.
ALTER TABLE swaps ALTER COLUMN block_hash DROP NOT NULL;

-- V3 Initialize (a pool's first price) and Flash (its fees move the pool's balances) are state
-- events too. Every pool event carries the full state after it, V3 price included, so that the
-- latest state of a pool after a rollback is simply its latest remaining swap or pool event.
ALTER TABLE pool_events DROP CONSTRAINT pool_events_kind_check;
ALTER TABLE pool_events ADD CONSTRAINT pool_events_kind_check
  CHECK (kind IN ('sync', 'mint', 'burn', 'collect', 'initialize', 'flash'));
ALTER TABLE pool_events ADD COLUMN sqrt_price_x96 numeric(78, 0);  -- V3: after the event
ALTER TABLE pool_events ADD COLUMN tick integer;                    -- V3: after the event

-- The state of a pool before its first indexed event (at base_block): for a pool that predates the
-- start, read from the node at startBlock - 1 when the pool is first touched (null base_block:
-- not read yet); for one created inside the range, the empty pool. A rollback that removes all of
-- a pool's events falls back to it.
ALTER TABLE pools ADD COLUMN base_block bigint;
ALTER TABLE pools ADD COLUMN base_reserve0 numeric(78, 0);
ALTER TABLE pools ADD COLUMN base_reserve1 numeric(78, 0);
ALTER TABLE pools ADD COLUMN base_sqrt_price_x96 numeric(78, 0);
ALTER TABLE pools ADD COLUMN base_liquidity numeric(78, 0);
ALTER TABLE pools ADD COLUMN base_tick integer;

-- The scan of each factory's creation events below the indexed range, so that pools created
-- before startBlock are known: from the factory's deployment up to target_block (the checkpoint
-- when the factory was first seen: startBlock - 1, or later for a DEX added to the configuration
-- afterwards). Above target_block the indexer's own batches see the factory. The base state of
-- pools found by the scan is read at target_block.
CREATE TABLE factory_scans (
  chain_id       integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  factory        text NOT NULL,
  scanned_block  bigint NOT NULL,
  target_block   bigint NOT NULL,
  PRIMARY KEY (chain_id, factory)
);
