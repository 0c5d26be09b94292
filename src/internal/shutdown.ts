import type { Logger } from "./logger.js";

export type Shutdown = {
  /** Registers a cleanup; cleanups run in reverse order of registration. */
  add(name: string, cleanup: () => Promise<void> | void): void;
  /** Runs every cleanup once (later calls wait for the first), then exits with `exitCode`. */
  run(reason: string, exitCode?: number): Promise<void>;
  /** Resolves when a shutdown has completed. */
  done: Promise<void>;
};

/**
 * Orderly shutdown on SIGINT/SIGTERM: every registered cleanup runs (children stopped, pools
 * closed) and the process exits. A second signal while cleaning up forces the exit.
 */
export function createShutdown(options: { logger: Logger; exit?: boolean; timeoutMs?: number }): Shutdown {
  const cleanups: { name: string; cleanup: () => Promise<void> | void }[] = [];
  let running: Promise<void> | undefined;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });

  const run = (reason: string, exitCode = 0): Promise<void> => {
    if (running) return running;
    options.logger.info({ reason }, "shutting down");
    running = (async () => {
      const timer = setTimeout(() => {
        options.logger.error("shutdown took too long; exiting");
        process.exit(1);
      }, options.timeoutMs ?? 20_000);
      timer.unref();
      for (const { name, cleanup } of [...cleanups].reverse()) {
        try {
          await cleanup();
        } catch (error) {
          options.logger.error({ err: error, step: name }, "cleanup failed");
        }
      }
      clearTimeout(timer);
      resolveDone();
      if (options.exit !== false) process.exit(exitCode);
    })();
    return running;
  };

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      options.logger.warn({ signal }, "second signal: exiting now");
      process.exit(130);
    }
    void run(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);

  return { add: (name, cleanup) => cleanups.push({ name, cleanup }), run, done };
}
