/**
 * Where a batch's time goes: milliseconds per named step, logged with the batch. Mixed when
 * several chains commit at once (one timer per pricing stage).
 */
export type StepTimer = {
  /** Runs `run`, adding its duration (resolved or rejected) to the step `name`. */
  step<T>(name: string, run: () => Promise<T> | T): Promise<T>;
  /** Starts a new batch's record. */
  reset(): void;
  /** The steps recorded since the last reset, in ms rounded to hundredths. */
  rounded(): Record<string, number>;
};

export function createStepTimer(clock: () => number = () => performance.now()): StepTimer {
  let steps: Record<string, number> = {};
  return {
    async step(name, run) {
      const started = clock();
      try {
        return await run();
      } finally {
        steps[name] = (steps[name] ?? 0) + clock() - started;
      }
    },
    reset() {
      steps = {};
    },
    rounded() {
      return Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, Math.round(v * 100) / 100]));
    },
  };
}

/** A timer that records nothing (the rollback's and the tests' steps). */
export const untimed: StepTimer["step"] = async (_name, run) => run();
