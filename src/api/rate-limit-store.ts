/** A store's answer: the key's count in its current window and the milliseconds left of that window. */
type RateLimitResult = { current: number; ttl: number };
export type RateLimitCallback = (error: Error | null, result: RateLimitResult) => void;

/** A store whose `child` (the plugin asks one per route) is the store itself. */
type SharedStore<S> = S & { child(): SharedStore<S> };

/**
 * A store as @fastify/rate-limit takes it: the plugin constructs its store with `new` and asks it
 * for a child per route; both give the one store made of `methods`.
 */
export function storeConstructor<S extends object>(methods: S): new (params: unknown) => SharedStore<S> {
  const store: SharedStore<S> = { ...methods, child: () => store };
  return function Store() {
    return store;
  } as unknown as new (
    params: unknown,
  ) => SharedStore<S>;
}

/**
 * A fixed-window counter store for @fastify/rate-limit shared by every listener of the process,
 * so a key's budget is one budget whether it calls /v1/ or /api/v1/ (which may be served on two
 * ports). The plugin constructs stores with `new`, so this returns a constructor function.
 */
export function createSharedRateLimitStore(options: { maxKeys?: number; now?: () => number } = {}) {
  const maxKeys = options.maxKeys ?? 100_000;
  const now = options.now ?? Date.now;
  const windows = new Map<string, { current: number; start: number }>();

  const sweep = (timeWindow: number) => {
    const t = now();
    for (const [key, w] of windows) if (w.start + timeWindow <= t) windows.delete(key);
    // Still full of live windows: drop the oldest rather than grow without bound.
    for (const key of windows.keys()) {
      if (windows.size < maxKeys) break;
      windows.delete(key);
    }
  };

  return storeConstructor({
    incr(key: string, callback: RateLimitCallback, timeWindow: number) {
      const t = now();
      let w = windows.get(key);
      if (!w || w.start + timeWindow <= t) {
        if (!w && windows.size >= maxKeys) sweep(timeWindow);
        w = { current: 0, start: t };
        windows.set(key, w);
      }
      w.current += 1;
      callback(null, { current: w.current, ttl: w.start + timeWindow - t });
    },
    read(key: string, callback: RateLimitCallback, timeWindow: number) {
      const t = now();
      const w = windows.get(key);
      if (!w || w.start + timeWindow <= t) callback(null, { current: 0, ttl: 0 });
      else callback(null, { current: w.current, ttl: w.start + timeWindow - t });
    },
  });
}
