// Live updates by polling. Not EventSource: it cannot send the `x-api-key` header, and a key in
// the URL would end up in access logs. A poll runs only while the tab is visible, never
// overlaps the previous one, and runs at once when the tab becomes visible again.

export type VisibilitySource = Pick<Document, "visibilityState" | "addEventListener" | "removeEventListener">;

export type Poller = {
  /** Runs the task now (after the running one, if any) and restarts the wait. */
  poke(): void;
  stop(): void;
};

export type Timers = {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

const defaultTimers: Timers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as number),
};

/**
 * Calls `task` every `intervalMs` while `doc` is visible. A failing task is the task's to report.
 * `intervalMs` may be a function, read before each wait: the token page polls slowly while the
 * stream is live and every few seconds when it is down.
 */
export function createPoller(options: {
  intervalMs: number | (() => number);
  task: () => Promise<void>;
  doc: VisibilitySource;
  timers?: Timers;
}): Poller {
  const timers = options.timers ?? defaultTimers;
  let timer: unknown;
  let running: Promise<void> | undefined;
  let stopped = false;

  const schedule = () => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    if (stopped || options.doc.visibilityState !== "visible") return;
    const ms = typeof options.intervalMs === "function" ? options.intervalMs() : options.intervalMs;
    timer = timers.setTimeout(run, ms);
  };

  const run = () => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    if (stopped || options.doc.visibilityState !== "visible") return;
    if (running) {
      // A slow poll is still on: run again right after it.
      void running.then(run);
      return;
    }
    running = options.task().catch(() => undefined);
    void running.then(() => {
      running = undefined;
      schedule();
    });
  };

  const onVisibility = () => {
    if (options.doc.visibilityState === "visible") run();
    else schedule();
  };

  options.doc.addEventListener("visibilitychange", onVisibility);
  schedule();

  return {
    poke() {
      run();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      options.doc.removeEventListener("visibilitychange", onVisibility);
    },
  };
}
