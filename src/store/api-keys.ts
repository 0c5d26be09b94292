import { createHash, randomBytes } from "node:crypto";
import type { Queryable } from "./db.js";

export type ApiKeyRow = { id: number; name: string; prefix: string; createdAt: Date; revokedAt: Date | null };

const KEY_PREFIX = "tm_";
/** Shortest key accepted (seeded or created). */
export const MIN_KEY_LENGTH = 32;

/**
 * The characters of a key kept in clear to tell keys apart in `keys list`: `tm_` and 4 more for a
 * generated key, never more than a quarter of the key (7 of 35; 7 of 32 for a minimal seeded key).
 */
export function keyPrefixOf(key: string): string {
  return key.slice(0, Math.min(KEY_PREFIX.length + 4, Math.floor(key.length / 4)));
}

/** SHA-256 of a key: the only form in which keys are stored. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** A new random key: `tm_` + 32 characters of base64url (192 bits). */
function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(24).toString("base64url");
}

/** Creates a key and returns it in clear: the only time it is seen. */
export async function createApiKey(
  db: Queryable,
  name: string,
  key = generateApiKey(),
): Promise<{ id: number; key: string }> {
  if (key.length < MIN_KEY_LENGTH)
    throw new Error(`an API key must be at least ${MIN_KEY_LENGTH} characters long`);
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3)
     ON CONFLICT (key_hash) DO UPDATE SET name = EXCLUDED.name, revoked_at = NULL
     RETURNING id`,
    [name, hashApiKey(key), keyPrefixOf(key)],
  );
  return { id: (rows[0] as { id: number }).id, key };
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT id, name, key_prefix AS prefix, created_at AS "createdAt", revoked_at AS "revokedAt"
     FROM api_keys ORDER BY id`,
  );
  return rows;
}

/**
 * Revokes a key by id, name or prefix; returns how many keys were revoked. A prefix is short
 * (keyPrefixOf), so it revokes only when it names exactly one active key.
 */
export async function revokeApiKey(db: Queryable, which: string): Promise<number> {
  const id = /^\d+$/.test(which) ? Number(which) : -1;
  const { rowCount } = await db.query(
    `UPDATE api_keys SET revoked_at = now()
     WHERE revoked_at IS NULL AND (id = $1 OR name = $2 OR (key_prefix = $2 AND
       (SELECT count(*) FROM api_keys k WHERE k.key_prefix = $2 AND k.revoked_at IS NULL) = 1))`,
    [id, which],
  );
  return rowCount ?? 0;
}

/** The active key matching `key`, or null when it is unknown or revoked. */
export async function findActiveApiKey(
  db: Queryable,
  key: string,
): Promise<{ id: number; name: string } | null> {
  const { rows } = await db.query<{ id: number; name: string }>(
    "SELECT id, name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
    [hashApiKey(key)],
  );
  return rows[0] ?? null;
}

/**
 * Seeds keys from `TOKENMARKET_API_KEYS`: comma-separated entries, each `name:key` or a bare key
 * (named "env"). Existing keys are left as they are, revoked ones are re-activated.
 */
export async function seedApiKeysFromEnv(db: Queryable, value: string | undefined): Promise<number> {
  if (!value) return 0;
  let count = 0;
  for (const entry of value
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(":");
    const [name, key] = colon > 0 ? [entry.slice(0, colon), entry.slice(colon + 1)] : ["env", entry];
    if (key.length < MIN_KEY_LENGTH)
      throw new Error(
        `TOKENMARKET_API_KEYS: the key named "${name}" is shorter than ${MIN_KEY_LENGTH} characters`,
      );
    await createApiKey(db, name, key);
    count += 1;
  }
  return count;
}

/**
 * The demo key: a fresh key at each start, the previous demo key of the same name revoked, so no
 * key is ever stored in clear. Its id is kept in `settings` (one entry per name: `start` uses
 * "demo", each `serve` listener its own, so that one process rotating never revokes another's).
 */
export async function rotateDemoKey(db: Queryable, name = "demo"): Promise<string> {
  const setting = name === "demo" ? "demo_key_id" : `demo_key_id:${name}`;
  const previous = await db.query<{ value: number }>("SELECT value FROM settings WHERE key = $1", [setting]);
  const oldId = previous.rows[0]?.value;
  if (oldId !== undefined) await db.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [oldId]);
  const { id, key } = await createApiKey(db, name);
  await db.query(
    `INSERT INTO settings (key, value) VALUES ($1, $2::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [setting, JSON.stringify(id)],
  );
  return key;
}

/** Revokes every demo key (of `start` and of each `serve`); returns how many were active. */
export async function revokeDemoKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE api_keys SET revoked_at = now()
     WHERE revoked_at IS NULL
       AND id IN (SELECT (value #>> '{}')::bigint FROM settings WHERE key = 'demo_key_id' OR key LIKE 'demo_key_id:%')`,
  );
  return rowCount ?? 0;
}
