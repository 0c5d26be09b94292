import type { FastifyReply, FastifyRequest } from "fastify";
import { HttpError } from "../internal/errors.js";
import { hashApiKey } from "../store/api-keys.js";

export type ApiKeyIdentity = { id: number; name: string };

export type KeyCheck = {
  /** The active key matching `key`, or null; answers from memory for at most `ttlMs`. */
  find(key: string): Promise<ApiKeyIdentity | null>;
  clear(): void;
};

/** Longer keys are refused without a look-up (generated keys are 35 characters). */
const MAX_KEY_LENGTH = 200;

/**
 * Looks keys up through `lookup` (the database) and remembers each answer, found or not, for
 * `ttlMs` (1 s by default): a revoked key stops working at most that long after its revocation.
 * Concurrent look-ups of one key share one query. Entries are keyed by the key's hash, so keys are
 * not kept in clear, and the memory is bounded by `maxEntries`.
 */
export function createKeyCheck(options: {
  lookup: (key: string) => Promise<ApiKeyIdentity | null>;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}): KeyCheck {
  const ttlMs = options.ttlMs ?? 1000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const known = new Map<string, { identity: ApiKeyIdentity | null; expires: number }>();
  const pending = new Map<string, Promise<ApiKeyIdentity | null>>();

  const find = async (key: string) => {
    const hash = hashApiKey(key);
    const entry = known.get(hash);
    if (entry && entry.expires > now()) return entry.identity;
    const inFlight = pending.get(hash);
    if (inFlight) return inFlight;
    const query = options
      .lookup(key)
      .then((identity) => {
        known.delete(hash);
        if (known.size >= maxEntries) {
          const oldest = known.keys().next().value;
          if (oldest !== undefined) known.delete(oldest);
        }
        known.set(hash, { identity, expires: now() + ttlMs });
        return identity;
      })
      .finally(() => pending.delete(hash));
    pending.set(hash, query);
    return query;
  };
  return { find, clear: () => known.clear() };
}

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's API key, set by the key check of the data endpoints. */
    apiKey?: ApiKeyIdentity;
  }
}

/**
 * onRequest hook of every data endpoint: a missing, unknown or revoked `x-api-key` is a 403
 * before anything else (parameters are validated later), so a caller without a key learns nothing.
 */
export function requireApiKey(keys: KeyCheck) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers["x-api-key"];
    if (typeof header !== "string" || header.length === 0) {
      throw new HttpError(403, "the x-api-key header is required");
    }
    const identity = header.length > MAX_KEY_LENGTH ? null : await keys.find(header);
    if (!identity) throw new HttpError(403, "the API key is unknown or revoked");
    request.apiKey = identity;
  };
}
