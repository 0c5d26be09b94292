/**
 * The stream's per-process limits: open connections per key and messages per second per
 * connection. Plain counters; the caller turns a refusal into a 429 message.
 */

/** Open connections per API key. */
export type ConnectionLimiter = {
  /** Counts one more connection of `keyId`; false (and nothing counted) when it already holds `max`. */
  acquire(keyId: number): boolean;
  release(keyId: number): void;
  /** Connections `keyId` holds now. */
  count(keyId: number): number;
};

export function createConnectionLimiter(max: number): ConnectionLimiter {
  const open = new Map<number, number>();
  return {
    acquire(keyId) {
      const n = open.get(keyId) ?? 0;
      if (n >= max) return false;
      open.set(keyId, n + 1);
      return true;
    },
    release(keyId) {
      const n = (open.get(keyId) ?? 0) - 1;
      if (n > 0) open.set(keyId, n);
      else open.delete(keyId);
    },
    count: (keyId) => open.get(keyId) ?? 0,
  };
}

/**
 * What a client message costs against its connection's budget: `ok`, `over` (the first message of
 * this second beyond the budget: answer it with a 429) or `ignored` (further ones: dropped
 * silently, so a flood does not turn into a flood of error messages).
 */
export type RateVerdict = "ok" | "over" | "ignored";

/** At most `perSecond` messages in each one-second window (fixed windows). */
export function createMessageRate(perSecond: number, now: () => number = Date.now) {
  let windowStart = Number.NEGATIVE_INFINITY;
  let count = 0;
  return (): RateVerdict => {
    const t = now();
    if (t - windowStart >= 1000) {
      windowStart = t;
      count = 0;
    }
    count += 1;
    if (count <= perSecond) return "ok";
    return count === perSecond + 1 ? "over" : "ignored";
  };
}
