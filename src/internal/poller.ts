/** Work repeated in the background: one run at a time, the next one `intervalMs` after each ends. */
export type Poller = {
  /** Starts a run, or returns the one under way. */
  run(): Promise<void>;
  /** Runs now and then again `intervalMs` after each run ends, until `stop` (a second start is ignored). */
  start(): void;
  stop(): void;
};

/** A poller of `work`; its timers are unref'd, so they never hold the process open. */
export function createPoller(work: () => Promise<void>, intervalMs: number): Poller {
  let current: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const run = () => {
    current ??= work().finally(() => {
      current = undefined;
    });
    return current;
  };
  const loop = async () => {
    await run();
    if (running) {
      timer = setTimeout(loop, intervalMs);
      timer.unref();
    }
  };
  return {
    run,
    start() {
      if (running) return;
      running = true;
      void loop();
    },
    stop() {
      running = false;
      if (timer) clearTimeout(timer);
    },
  };
}
