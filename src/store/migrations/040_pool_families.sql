-- DEX families beyond V2 and V3 (src/protocols registers them; the store does not list them).

-- A pool's family is one of the registry's names, checked by the configuration's schema.
ALTER TABLE pools DROP CONSTRAINT pools_protocol_check;

-- A pool that lives inside a manager (Uniswap V4) is its 32-byte pool id (`address`, 0x + 64
-- hex digits, text like any address) and names its hook contract; null for other pools.
ALTER TABLE pools ADD COLUMN hooks text;

-- Uniswap V4 Donate: tokens paid into a pool without a trade.
ALTER TABLE pool_events DROP CONSTRAINT pool_events_kind_check;
ALTER TABLE pool_events ADD CONSTRAINT pool_events_kind_check
  CHECK (kind IN ('sync', 'mint', 'burn', 'collect', 'initialize', 'flash', 'donate'));
