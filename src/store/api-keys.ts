import { createHash, randomBytes } from "node:crypto";
import { BaseError } from "../internal/errors.js";
import { type Db, type Queryable, withTransaction } from "./db.js";

export type ApiKeyRow = {
  id: number;
  name: string;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** A key of the local demo: honoured only by an API whose configuration allows a demo key. */
  demo: boolean;
};

/** A key command that cannot do what it was asked (a taken name, an ambiguous target): the user's to fix. */
export class ApiKeyError extends BaseError {
  override name = "ApiKeyError";
}

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

/**
 * Creates a key and returns it in clear: the only time it is seen. A name names one active key:
 * a name already taken is an ApiKeyError. The same key again (seeding at each start) keeps its row.
 */
export async function createApiKey(
  db: Queryable,
  name: string,
  key = generateApiKey(),
  options: { demo?: boolean } = {},
): Promise<{ id: number; key: string }> {
  if (key.length < MIN_KEY_LENGTH)
    throw new Error(`an API key must be at least ${MIN_KEY_LENGTH} characters long`);
  try {
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO api_keys (name, key_hash, key_prefix, demo) VALUES ($1, $2, $3, $4)
       ON CONFLICT (key_hash) DO UPDATE SET name = EXCLUDED.name, revoked_at = NULL
       RETURNING id`,
      [name, hashApiKey(key), keyPrefixOf(key), options.demo === true],
    );
    return { id: (rows[0] as { id: number }).id, key };
  } catch (error) {
    if ((error as { constraint?: string }).constraint === "api_keys_active_name") {
      const { rows } = await db.query<{ id: number }>(
        "SELECT id FROM api_keys WHERE name = $1 AND revoked_at IS NULL",
        [name],
      );
      throw new ApiKeyError(
        `an active key is already named "${name}" (#${rows[0]?.id ?? "?"}): choose another name, or revoke that key first`,
        { cause: error },
      );
    }
    throw error;
  }
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT id, name, key_prefix AS prefix, created_at AS "createdAt", revoked_at AS "revokedAt", demo
     FROM api_keys ORDER BY id`,
  );
  return rows;
}

/**
 * The active key named by `which`: its id, its name or its prefix, in that order of precedence;
 * null when none matches. A prefix is short (keyPrefixOf): one that several active keys share
 * names none of them, and is an ApiKeyError listing them.
 */
export async function findKeyToRevoke(
  db: Queryable,
  which: string,
): Promise<{ id: number; name: string } | null> {
  const id = /^\d+$/.test(which) ? Number(which) : -1;
  const { rows } = await db.query<{ id: number; name: string; by: number }>(
    `SELECT id, name, CASE WHEN id = $1 THEN 0 WHEN name = $2 THEN 1 ELSE 2 END AS by
     FROM api_keys WHERE revoked_at IS NULL AND (id = $1 OR name = $2 OR key_prefix = $2)
     ORDER BY by, id`,
    [id, which],
  );
  const first = rows[0];
  if (!first) return null;
  const candidates = rows.filter((r) => r.by === first.by);
  if (candidates.length > 1) {
    throw new ApiKeyError(
      `${candidates.length} active keys start with "${which}" (${candidates.map((r) => `#${r.id} "${r.name}"`).join(", ")}): name the key by its id or name`,
    );
  }
  return { id: first.id, name: first.name };
}

/**
 * Revokes the one active key named by `which` (findKeyToRevoke); returns how many were revoked:
 * 0 when none matches or a prefix is ambiguous, else 1.
 */
export async function revokeApiKey(db: Queryable, which: string): Promise<number> {
  let key: { id: number } | null;
  try {
    key = await findKeyToRevoke(db, which);
  } catch (error) {
    if (error instanceof ApiKeyError) return 0;
    throw error;
  }
  if (!key) return 0;
  const { rowCount } = await db.query(
    "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
    [key.id],
  );
  return rowCount ?? 0;
}

/**
 * The active key matching `key`, or null when it is unknown or revoked; a demo key counts only
 * where `demo` allows it (an API whose configuration allows a demo key: demoKeyAllowed).
 */
export async function findActiveApiKey(
  db: Queryable,
  key: string,
  options: { demo?: boolean } = {},
): Promise<{ id: number; name: string } | null> {
  const { rows } = await db.query<{ id: number; name: string }>(
    "SELECT id, name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL AND (NOT demo OR $2)",
    [hashApiKey(key), options.demo === true],
  );
  return rows[0] ?? null;
}

/**
 * Seeds keys from `TOKENMARKET_API_KEYS`: comma-separated entries, each `name:key` or a bare key
 * (named "env-" and its prefix). Existing keys are left as they are, revoked ones are re-activated;
 * a name that another active key holds is an ApiKeyError.
 */
export async function seedApiKeysFromEnv(db: Queryable, value: string | undefined): Promise<number> {
  if (!value) return 0;
  let count = 0;
  for (const entry of value
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(":");
    const [name, key] =
      colon > 0 ? [entry.slice(0, colon), entry.slice(colon + 1)] : [`env-${keyPrefixOf(entry)}`, entry];
    if (key.length < MIN_KEY_LENGTH)
      throw new Error(
        `TOKENMARKET_API_KEYS: the key named "${name}" is shorter than ${MIN_KEY_LENGTH} characters`,
      );
    try {
      await createApiKey(db, name, key);
    } catch (error) {
      if (error instanceof ApiKeyError) throw new ApiKeyError(`TOKENMARKET_API_KEYS: ${error.message}`);
      throw error;
    }
    count += 1;
  }
  return count;
}

/** Where the demo key is kept in clear (a demo key is handed to any page of a loopback demo anyway). */
const DEMO_KEY_SETTING = "demo_key";

/**
 * The demo key: a fresh key at each `start`, every earlier demo key revoked. Kept in `settings`
 * so that a `serve` beside the demo offers the same key (currentDemoKey) instead of minting one.
 * Demo keys are marked: an API whose configuration allows none refuses them (findActiveApiKey).
 */
export async function rotateDemoKey(db: Db): Promise<string> {
  return withTransaction(db, async (client) => {
    await client.query("UPDATE api_keys SET revoked_at = now() WHERE demo AND revoked_at IS NULL");
    // Earlier demo keys are revoked above; their names are free again.
    const { id, key } = await createApiKey(client, "demo", undefined, { demo: true });
    await client.query(
      `INSERT INTO settings (key, value) VALUES ($1, $2::jsonb)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
      [DEMO_KEY_SETTING, JSON.stringify({ id, key })],
    );
    // Records of an older layout (one demo key per `serve` listener), all revoked now.
    await client.query("DELETE FROM settings WHERE key = 'demo_key_id' OR key LIKE 'demo_key_id:%'");
    return key;
  });
}

/** The active demo key of the running (or last) demo, or null when there is none. */
export async function currentDemoKey(db: Queryable): Promise<string | null> {
  const { rows } = await db.query<{ key: string }>(
    `SELECT s.value ->> 'key' AS key FROM settings s
     JOIN api_keys k ON k.id = (s.value ->> 'id')::bigint AND k.demo AND k.revoked_at IS NULL
     WHERE s.key = $1`,
    [DEMO_KEY_SETTING],
  );
  return rows[0]?.key ?? null;
}
