/**
 * The minute slide's schedule: one slide of a chain at a time per database, and the instant the
 * last finished one slid to (the next slide recomputes only what the clock moved since).
 */
export type SlideSchedule<R> = {
  /**
   * Runs `slide(time, since)` for a chain: `since` is when the last slide that finished slid to
   * (undefined: none). Without a time (the runtime's minute), a slide still running is left to
   * finish and its result returned; with one, the call waits for it (and any that started while
   * it waited) and then slides. A slide that fails leaves `since` where it was.
   */
  run(
    key: object,
    chainId: number,
    at: Date | undefined,
    slide: (time: Date, since: number | undefined) => Promise<R>,
  ): Promise<R>;
};

export function createSlideSchedule<R>(now: () => Date): SlideSchedule<R> {
  const states = new WeakMap<object, Map<number, { last?: number; running?: Promise<R> }>>();
  const stateOf = (key: object, chainId: number) => {
    let ofKey = states.get(key);
    if (!ofKey) {
      ofKey = new Map();
      states.set(key, ofKey);
    }
    let state = ofKey.get(chainId);
    if (!state) {
      state = {};
      ofKey.set(chainId, state);
    }
    return state;
  };
  return {
    async run(key, chainId, at, slide) {
      const state = stateOf(key, chainId);
      while (state.running) {
        if (at === undefined) return state.running;
        await state.running.catch(() => undefined);
      }
      const time = at ?? now();
      const running = slide(time, state.last).then((result) => {
        state.last = time.getTime();
        return result;
      });
      state.running = running;
      try {
        return await running;
      } finally {
        if (state.running === running) delete state.running;
      }
    },
  };
}
