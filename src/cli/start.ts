import type { Config } from "../config/schema.js";
import { BaseError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createShutdown } from "../internal/shutdown.js";
import { type Role, startService } from "../runtime/service.js";
import { buildPageIfStale } from "./web-page.js";

/**
 * `tokenmarket start` (the whole service in one process tree), `index` or `serve` (one role).
 * Prints what runs where; Ctrl-C or SIGTERM stops every child (Postgres, the devnet) before exiting.
 */
export async function runStart(options: { config: Config; logger: Logger; role?: Role }): Promise<number> {
  const { logger } = options;
  const shutdown = createShutdown({ logger });
  try {
    // The page is served by the API (`start`, `serve`), not by an indexer alone.
    if ((options.role ?? "all") !== "index") await buildPageIfStale(logger);
    const service = await startService({
      config: options.config,
      logger,
      onStop: shutdown.add,
      role: options.role ?? "all",
    });
    const banner = await bannerWhenReady(service.summary, shutdown.done);
    if (banner !== null) console.log(banner);
  } catch (error) {
    // One clear line for launch problems (a taken port, a bad RPC URL); the stack otherwise. An
    // AbortError is a start that a stop (Ctrl-C) ended, such as the devnet's history: no error.
    if ((error as Error | null)?.name === "AbortError") {
      // The stop that ended it runs: run() below waits for it.
    } else if (error instanceof BaseError && !error.retryable) console.error(`tokenmarket: ${error.message}`);
    else console.error(error);
    await shutdown.run("start-up failed", 1);
  }
  await shutdown.done;
  return 0;
}

/**
 * The start-up summary once the service is ready (its /readyz answers 200), with the time from
 * the command's start to then; null when the service stops first. Readiness is what a user or a
 * load balancer waits for, so the banner never says "running" before it.
 */
async function bannerWhenReady(summary: string, stopped: Promise<unknown>): Promise<string | null> {
  const readyz = /(http:\/\/\S+\/readyz)/.exec(summary)?.[1];
  let stopping = false;
  void stopped.then(() => {
    stopping = true;
  });
  while (readyz !== undefined && !stopping) {
    try {
      const response = await fetch(readyz, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // Not answering yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (stopping) return null;
  const seconds = ((Date.now() - commandStartedAt()) / 1000).toFixed(1);
  return summary.replace(/is running \(started in [\d.]+ s\)/, `is running (ready in ${seconds} s)`);
}

/**
 * When the command started (epoch ms): its parent's start when this process is the heap-limited
 * child that parent started (heap.ts), else this process's own.
 */
function commandStartedAt(): number {
  const parentStarted = Number(process.env.TOKENMARKET_HEAP_PARENT_STARTED);
  const fromParent = process.env.TOKENMARKET_HEAP_PARENT === String(process.ppid) && parentStarted > 0;
  return fromParent ? parentStarted : performance.timeOrigin;
}
