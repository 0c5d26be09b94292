-- tokenmarket schema, version 4: the writer fence of each chain (src/sync/writer-lock.ts).

-- Every process that takes a chain's writer lock (a session advisory lock) claims a new epoch
-- from this sequence, once it holds the lock and before it reads the checkpoint. A sequence, not a
-- per-chain counter: a chain dropped and created again (reborn devnet) never reuses an epoch.
CREATE SEQUENCE writer_epochs;

-- The current writer of the chain: its epoch and the backend pid of its lock connection. Every
-- write of the indexer first locks this row WHERE writer_epoch is its own and that backend still
-- holds the lock (pg_locks), so a writer that lost its lock, or was superseded, can never commit.
ALTER TABLE sync_state
  ADD COLUMN writer_epoch bigint,
  ADD COLUMN writer_lock_pid integer,
  ADD COLUMN writer_since timestamptz;
