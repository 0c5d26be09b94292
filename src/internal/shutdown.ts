import type { Logger } from "./logger.js";

export type Shutdown = {
  /**
   * Registers a cleanup; cleanups run in reverse order of registration. `force`, when given, is
   * what must still happen should the process exit without waiting (a repeated signal, a stop
   * that takes too long): synchronous and quick, e.g. signalling a child that would outlive us.
   */
  add(name: string, cleanup: () => Promise<void> | void, force?: () => void): void;
  /** Runs every cleanup once (later calls wait for the first), then exits with `exitCode`. */
  run(reason: string, exitCode?: number): Promise<void>;
  /** Resolves when a shutdown has completed. */
  done: Promise<void>;
};

/** Signals within this long of the stop's start are the same request. */
export const DEFAULT_SIGNAL_GRACE_MS = 3_000;

/**
 * Orderly shutdown on SIGINT/SIGTERM/SIGHUP: every registered cleanup runs (children stopped,
 * pools closed) and the process exits.
 *
 * One Ctrl-C often arrives as several signals: the terminal sends SIGINT to the whole process
 * group, and a parent such as npm (or tsx's CLI) forwards its own copy. So signals arriving
 * within `signalGraceMs` of the stop's start are one request and only logged; a signal repeated
 * later forces the exit, which still runs every `force` step so that no Postgres server (in a
 * process group of its own, out of the terminal's reach) or devnet node outlives us.
 */
export function createShutdown(options: {
  logger: Logger;
  exit?: boolean;
  timeoutMs?: number;
  signalGraceMs?: number;
}): Shutdown {
  const { logger } = options;
  const signalGraceMs = options.signalGraceMs ?? DEFAULT_SIGNAL_GRACE_MS;
  const steps: { name: string; cleanup: () => Promise<void> | void; force?: () => void }[] = [];
  let running: Promise<void> | undefined;
  let stoppingSince = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });

  /** Exits now, after the `force` steps (which must not throw us off the way out). */
  const forceExit = (exitCode: number): never => {
    for (const { name, force } of [...steps].reverse()) {
      try {
        force?.();
      } catch (error) {
        logger.error({ err: error, step: name }, "forced stop failed");
      }
    }
    // A progress bar hides the cursor while it draws; an exit in the middle must give it back.
    if (process.stderr.isTTY) process.stderr.write("\u001b[?25h");
    process.exit(exitCode);
  };

  const run = (reason: string, exitCode = 0): Promise<void> => {
    if (running) return running;
    logger.info({ reason }, "shutting down");
    stoppingSince = Date.now();
    running = (async () => {
      const timer = setTimeout(() => {
        logger.error("shutdown took too long; exiting");
        forceExit(1);
      }, options.timeoutMs ?? 20_000);
      timer.unref();
      for (const { name, cleanup } of [...steps].reverse()) {
        try {
          await cleanup();
        } catch (error) {
          logger.error({ err: error, step: name }, "cleanup failed");
        }
      }
      clearTimeout(timer);
      resolveDone();
      if (options.exit !== false) process.exit(exitCode);
    })();
    return running;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (!running) {
      void run(signal);
      return;
    }
    const sinceMs = Date.now() - stoppingSince;
    if (sinceMs < signalGraceMs) {
      // One Ctrl-C reaches the process more than once (the terminal signals the whole group, and
      // npm forwards its own copy): the same request, nothing for the user to read.
      logger.debug({ signal, since_ms: sinceMs }, "signal within the grace period: the same stop request");
      return;
    }
    logger.warn({ signal }, "signal repeated while stopping: exiting now");
    forceExit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);

  return {
    add: (name, cleanup, force) => {
      steps.push(force === undefined ? { name, cleanup } : { name, cleanup, force });
    },
    run,
    done,
  };
}
