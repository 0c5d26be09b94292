/**
 * The wait of a chain's indexer at the head: until a new-head notification (wake), a timeout, or
 * the abort of the run, whichever comes first. At most one wait at a time.
 */
export type HeadWait = {
  /** Resolves after `ms`, at the next wake(), or at the abort (at once when already aborted). */
  wait(ms: number): Promise<void>;
  /** Resolves after `ms` or at the abort, whatever new heads come meanwhile. */
  pause(ms: number): Promise<void>;
  /** Ends the current wait (a no-op when none). */
  wake(): void;
};

export function createHeadWait(signal: AbortSignal): HeadWait {
  let wake: (() => void) | null = null;
  const sleep = (ms: number, wakeable: boolean) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        if (wakeable) wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (signal.aborted) return done();
      signal.addEventListener("abort", done, { once: true });
      if (wakeable) wake = done;
    });
  return {
    wait: (ms) => sleep(ms, true),
    pause: (ms) => sleep(ms, false),
    wake: () => wake?.(),
  };
}

/**
 * A head below the highest one the node gave in this run: a backend behind the others, or a
 * real shorter reorg (a devnet reverted). "inconsistent" (waited out like any inconsistent
 * answer) until `streak` inconsistent answers in a row reached `failoverAfter`; then the node is
 * believed ("follow", logged). "ahead" for a head at or above the highest.
 */
export function headBehind(
  head: number,
  highest: number,
  streak: number,
  failoverAfter: number,
): "ahead" | "inconsistent" | "follow" {
  if (head >= highest) return "ahead";
  return streak < failoverAfter ? "inconsistent" : "follow";
}
