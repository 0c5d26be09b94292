import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config/schema.js";
import { HttpError } from "../internal/errors.js";
import { hashApiKey } from "../store/api-keys.js";
import type { Deadline } from "../store/db.js";

export type ApiKeyIdentity = { id: number; name: string };

export type KeyCheck = {
  /**
   * The active key matching `key`, or null; answers from memory for at most `ttlMs`. `onQuery`
   * runs when (and only when) this call starts a database look-up, with a function to call with
   * its outcome: requests that are answered from memory or join a look-up under way do not run it.
   * `deadline` bounds the look-up this call starts (one it joins keeps its own).
   */
  find(
    key: string,
    onQuery?: () => (failed: boolean) => void,
    deadline?: Deadline,
  ): Promise<ApiKeyIdentity | null>;
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
  /** Finds the key; `deadline` (store/db.ts Deadline) bounds its waits on the database. */
  lookup: (key: string, deadline?: Deadline) => Promise<ApiKeyIdentity | null>;
  ttlMs?: number;
  /** How long an unknown key is remembered as unknown (default: ttlMs): a new key works after at most this. */
  negativeTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}): KeyCheck {
  const ttlMs = options.ttlMs ?? 1000;
  const negativeTtlMs = options.negativeTtlMs ?? ttlMs;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const known = new Map<string, { identity: ApiKeyIdentity | null; expires: number }>();
  const pending = new Map<string, Promise<ApiKeyIdentity | null>>();

  const find = async (key: string, onQuery?: () => (failed: boolean) => void, deadline?: Deadline) => {
    const hash = hashApiKey(key);
    const entry = known.get(hash);
    if (entry && entry.expires > now()) return entry.identity;
    const inFlight = pending.get(hash);
    if (inFlight) return inFlight;
    const done = onQuery?.();
    const query = options
      .lookup(key, deadline)
      .then(
        (identity) => {
          done?.(identity === null);
          return identity;
        },
        (error: unknown) => {
          // A database failure is no wrong key: it does not count against the address.
          done?.(false);
          throw error;
        },
      )
      .then((identity) => {
        known.delete(hash);
        if (known.size >= maxEntries) {
          const oldest = known.keys().next().value;
          if (oldest !== undefined) known.delete(oldest);
        }
        known.set(hash, { identity, expires: now() + (identity ? ttlMs : negativeTtlMs) });
        return identity;
      })
      .finally(() => pending.delete(hash));
    pending.set(hash, query);
    return query;
  };
  return { find, clear: () => known.clear() };
}

/** The messages of the key check's answers, shared with the OpenAPI document's examples. */
export const keyMessages = {
  missing: "the x-api-key header is required",
  unknown: "the API key is unknown or revoked",
  tooManyFailures: (waitSeconds: number) =>
    `too many failed API key checks from this address; retry after ${waitSeconds} s`,
  /** The 429 of a key over its rate limit (`api.rateLimit`). */
  rateLimited: (max: number, windowMs: number, retryAfterMs: number) =>
    `rate limit exceeded: ${max} requests per ${Math.round(windowMs / 1000)} s for this key; retry after ${Math.ceil(retryAfterMs / 1000)} s`,
};

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's API key, set by the key check of the data endpoints. */
    apiKey?: ApiKeyIdentity;
    /**
     * When the request's database answers are due (api.databaseTimeoutMs from its arrival), shared
     * by all its waits: a connection, the key check, the answer's queries. Unset for a WebSocket
     * upgrade: the stream's subscriptions outlive their request.
     */
    databaseDeadline?: Deadline;
  }
}

/** Failed key checks per client address: a flood of wrong keys costs a bounded number of look-ups. */
export type FailedKeyLimiter = {
  /** Seconds to wait when `address` is over its budget (429), or 0 when it may try a key. */
  blockedFor(address: string): number;
  /** Counts one check from `address` that is under way; call the returned function with its outcome. */
  begin(address: string): (failed: boolean) => void;
};

/**
 * At most `max` failed key checks per client address per `windowMs` (fixed window). Only checks
 * that start a database look-up count (a key answered from memory costs nothing), and a look-up
 * under way counts as a failure until it succeeds, so a concurrent flood of distinct wrong keys
 * cannot start more than `max` look-ups either; a busy client with a valid key is never counted
 * for the requests that share its look-up. Memory is bounded by `maxAddresses`.
 */
export function createFailedKeyLimiter(options: {
  max: number;
  windowMs: number;
  maxAddresses?: number;
  now?: () => number;
}): FailedKeyLimiter {
  const now = options.now ?? Date.now;
  const maxAddresses = options.maxAddresses ?? 100_000;
  const windows = new Map<string, { start: number; count: number }>();
  const current = (address: string) => {
    const at = now();
    let entry = windows.get(address);
    if (!entry || at - entry.start >= options.windowMs) {
      windows.delete(address);
      if (windows.size >= maxAddresses) {
        const oldest = windows.keys().next().value;
        if (oldest !== undefined) windows.delete(oldest);
      }
      entry = { start: at, count: 0 };
      windows.set(address, entry);
    }
    return entry;
  };
  return {
    blockedFor(address) {
      const entry = current(address);
      if (entry.count < options.max) return 0;
      return Math.max(1, Math.ceil((entry.start + options.windowMs - now()) / 1000));
    },
    begin(address) {
      const entry = current(address);
      entry.count += 1;
      return (failed) => {
        if (!failed && windows.get(address) === entry) entry.count -= 1;
      };
    },
  };
}

/**
 * onRequest hook of every data endpoint: a missing, unknown or revoked `x-api-key` is a 403
 * before anything else (parameters are validated later), so a caller without a key learns nothing.
 * An address with too many failed checks in the window gets a 429 with `Retry-After` before any
 * look-up.
 */
export function requireApiKey(keys: KeyCheck, limiter?: FailedKeyLimiter) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const header = request.headers["x-api-key"];
    if (typeof header !== "string" || header.length === 0) {
      throw new HttpError(403, keyMessages.missing);
    }
    const wait = limiter?.blockedFor(request.ip) ?? 0;
    if (wait > 0) {
      throw new HttpError(429, keyMessages.tooManyFailures(wait), {
        "retry-after": String(wait),
      });
    }
    const identity =
      header.length > MAX_KEY_LENGTH
        ? null
        : await keys.find(header, limiter && (() => limiter.begin(request.ip)), request.databaseDeadline);
    if (!identity) throw new HttpError(403, keyMessages.unknown);
    request.apiKey = identity;
  };
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);

/**
 * The demo key is handed to any page of the API's origin, so it exists, and is honoured, only
 * where no one else can reach that origin: a devnet configuration (every chain a devnet) on a
 * loopback listener. Elsewhere a demo key is refused, never revoked (the demo may still run).
 */
export function demoKeyAllowed(config: Config): boolean {
  return (
    config.api.demoKey &&
    config.devnet.enabled &&
    config.chains.every((chain) => chain.devnet) &&
    LOOPBACK_HOSTS.has(config.api.host)
  );
}
