import { pino } from "pino";
import type { Logger } from "../internal/logger.js";

/** Polls `condition` every `intervalMs` until it is true; throws `message` after `timeoutMs`. */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  message: string,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

export type CapturedLog = { level: number; msg: string } & Record<string, unknown>;

/** A logger that keeps its JSON lines in memory, for asserting what was logged. */
export function createCapturingLogger(level = "debug"): { logger: Logger; lines: CapturedLog[] } {
  const lines: CapturedLog[] = [];
  const logger = pino(
    { level },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as CapturedLog);
      },
    },
  );
  return { logger, lines };
}
