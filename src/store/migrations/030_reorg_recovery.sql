-- Recovery from reorgs deeper than the reorg window (src/sync/README.md "Reorgs").

-- While a chain's indexed data is known to be off the node's canonical chain (a reorg found and
-- not yet rolled back, or one deeper than the kept block hashes), the reason; null otherwise.
-- Set by the indexer in a transaction of its own as soon as it finds the reorg, cleared by the
-- rollback's transaction: an API answer read in a snapshot that sees it is a 503, never data of
-- an abandoned branch.
ALTER TABLE sync_state ADD COLUMN off_canonical text;

-- Hashes of canonical blocks below the reorg window (blocks leave `blocks` for here), kept for
-- `keptBlockHashes` blocks below the indexed one: the walk back to a deep reorg's common ancestor.
-- Which blocks are here depends on the ranges the chain was fetched in (every block while
-- following the head, range ends in a backfill); about 150 bytes a block.
CREATE TABLE block_hashes (
  chain_id  integer NOT NULL REFERENCES chains ON DELETE CASCADE,
  number    bigint NOT NULL,
  hash      text NOT NULL,
  time      timestamptz NOT NULL,
  PRIMARY KEY (chain_id, number)
);
