import { sleep } from "./retry.js";

/**
 * How much of the configured parallelism a provider is given now: a share in (0, 1] of the waves
 * in flight (`concurrency`, at least one) and of the calls a wave carries (`batchSize` ×
 * `concurrency`, at least half a batch).
 */
export type RateGateState = {
  share: number;
  /** Waves (one bulk read's HTTP batches sent together, or one call) allowed in flight at once. */
  waves: number;
  /** Milliseconds until requests may be sent again (0: not paused). */
  pausedForMs: number;
};

export type RateGate = {
  /**
   * Waits until the provider's pause is over and a wave may start (fewer than `waves` in flight),
   * then takes its place; the returned function gives it back. Rejects when `signal` aborts.
   */
  enter(signal?: AbortSignal): Promise<() => void>;
  /**
   * Calls a bulk read's wave of `full` calls (`batch` × concurrency) is cut to now: never below
   * half a batch, since a provider that counts requests rather than calls (or refuses at random)
   * gains nothing from smaller ones, and a batch is then one request in place of several.
   */
  calls(full: number, batch: number): number;
  /**
   * The provider throttled (HTTP 429, "rate limit"): no request is sent by anyone for `delayMs`
   * (its Retry-After, or the backoff), and the share is halved.
   */
  throttled(delayMs: number): void;
  /** A wave came back without throttling: the share grows back, a step at a time. */
  succeeded(): void;
  state(): RateGateState;
};

/** The share never falls below this (one wave at a time; batches at their floor). */
const MIN_SHARE = 1 / 64;
/** Each wave without throttling gives back this much share (additive increase). */
const STEP = 1 / 16;

/**
 * The provider's rate as the client sees it, shared by every call of one client (one chain's
 * URL): additive increase, multiplicative decrease of the parallelism, and a pause for everyone
 * when the provider says when to come back. A throttled provider then gets about one wave per
 * Retry-After instead of every caller retrying on its own schedule, and the work in flight is
 * slowed, not failed.
 */
export function createRateGate(options: { concurrency: number; now?: () => number }): RateGate {
  const now = options.now ?? Date.now;
  let share = 1;
  let pausedUntil = 0;
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const waves = () => Math.max(1, Math.floor(options.concurrency * share));

  const wakeNext = () => {
    while (waiting.length > 0 && inFlight < waves()) {
      inFlight++;
      (waiting.shift() as () => void)();
    }
  };

  const enter = async (signal?: AbortSignal): Promise<() => void> => {
    for (let at = now(); pausedUntil > at; at = now()) await sleep(pausedUntil - at, signal);
    if (inFlight < waves() && waiting.length === 0) {
      inFlight++;
    } else {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          reject(signal?.reason);
        };
        waiting.push(go);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
      // Woken after a pause was set meanwhile: wait it out too, holding the place.
      for (let at = now(); pausedUntil > at; at = now()) {
        await sleep(pausedUntil - at, signal).catch((error: unknown) => {
          inFlight--;
          wakeNext();
          throw error;
        });
      }
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      inFlight--;
      wakeNext();
    };
  };

  return {
    enter,
    calls: (full, batch) => Math.min(full, Math.max(Math.ceil(batch / 2), Math.floor(full * share))),
    throttled(delayMs) {
      pausedUntil = Math.max(pausedUntil, now() + Math.max(0, delayMs));
      share = Math.max(MIN_SHARE, share / 2);
    },
    succeeded() {
      if (share >= 1) return;
      share = Math.min(1, share + STEP);
      wakeNext();
    },
    state: () => ({ share, waves: waves(), pausedForMs: Math.max(0, pausedUntil - now()) }),
  };
}
