import type { Config } from "../config/schema.js";
import { BaseError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createShutdown } from "../internal/shutdown.js";
import { type Role, startService } from "../runtime/service.js";

/**
 * `tokenmarket start` (the whole service in one process tree), `index` or `serve` (one role).
 * Prints what runs where; Ctrl-C or SIGTERM stops every child (Postgres, the devnet) before exiting.
 */
export async function runStart(options: { config: Config; logger: Logger; role?: Role }): Promise<number> {
  const { logger } = options;
  const shutdown = createShutdown({ logger });
  try {
    const service = await startService({
      config: options.config,
      logger,
      onStop: shutdown.add,
      role: options.role ?? "all",
    });
    console.log(service.summary);
  } catch (error) {
    // One clear line for launch problems (a taken port, a bad RPC URL); the stack otherwise.
    if (error instanceof BaseError && !error.retryable) console.error(`tokenmarket: ${error.message}`);
    else console.error(error);
    await shutdown.run("start-up failed", 1);
  }
  await shutdown.done;
  return 0;
}
