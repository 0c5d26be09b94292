/** A clock that moves only when told: `now()` in ms from 0, `advance(ms)`. */
export function manualClock() {
  let ms = 0;
  return {
    now: () => ms,
    advance: (by: number) => {
      ms += by;
    },
  };
}

/** `fn` as an async call answering on a later tick, as a query would, with its calls counted. */
export function countedAsync<A extends unknown[], R>(fn: (...args: A) => R) {
  let calls = 0;
  return {
    call: async (...args: A): Promise<R> => {
      calls += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return fn(...args);
    },
    calls: () => calls,
  };
}
