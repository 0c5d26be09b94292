-- What each chain's indexer last reported about itself, so that API processes without an indexer
-- (`tokenmarket serve`) tell the truth in /readyz: the head as last seen at the node, a fatal
-- stop, the backfill's ETA, and whether any indexer is alive at all (reported_at goes stale).
CREATE TABLE indexer_health (
  chain_id      integer PRIMARY KEY REFERENCES chains (chain_id) ON DELETE CASCADE,
  phase         text NOT NULL,
  head_block    bigint,
  head_seen_at  timestamptz NOT NULL,
  stopped_at    timestamptz,
  error         text,
  eta_seconds   double precision,
  reported_at   timestamptz NOT NULL DEFAULT now()
);
