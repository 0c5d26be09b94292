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

  const store = {
    incr(
      key: string,
      callback: (error: Error | null, result: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
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
    read(
      key: string,
      callback: (error: Error | null, result: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
      const t = now();
      const w = windows.get(key);
      if (!w || w.start + timeWindow <= t) callback(null, { current: 0, ttl: 0 });
      else callback(null, { current: w.current, ttl: w.start + timeWindow - t });
    },
    child() {
      return store;
    },
  };
  // A constructor function that returns the one shared store: `new Store(params)` gives `store`.
  return function SharedStore() {
    return store;
  } as unknown as new (
    params: unknown,
  ) => typeof store;
}
