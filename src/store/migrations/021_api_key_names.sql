-- API keys: a name names one active key (`keys revoke NAME` revokes exactly that one), and demo
-- keys are marked, so that an API whose configuration allows no demo key refuses them without
-- revoking them (a command that fails, or an API beside the demo, must not break the demo).

ALTER TABLE api_keys ADD COLUMN demo boolean NOT NULL DEFAULT false;

-- The demo keys recorded so far: `settings` holds the id of each (demo_key_id, demo_key_id:NAME).
UPDATE api_keys SET demo = true
WHERE id IN (SELECT (value #>> '{}')::bigint FROM settings
             WHERE key = 'demo_key_id' OR key LIKE 'demo_key_id:%');

-- Active keys that share a name: the oldest keeps it, each later one is renamed NAME#ID (they all
-- keep working; `keys list` shows the new names).
UPDATE api_keys k SET name = k.name || '#' || k.id
WHERE k.revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM api_keys o
              WHERE o.name = k.name AND o.revoked_at IS NULL AND o.id < k.id);

CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;
