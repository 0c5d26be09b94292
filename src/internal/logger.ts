import { pino } from "pino";

export type Logger = pino.Logger;

/**
 * Structured logger (pino). Fields are snake_case. Pretty output when the terminal is a TTY
 * and LOG_FORMAT is not "json"; JSON lines otherwise.
 */
export function createLogger(options: { level?: string; name?: string; pretty?: boolean } = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? "info";
  const pretty = options.pretty ?? (process.stdout.isTTY === true && process.env.LOG_FORMAT !== "json");
  return pino({
    name: options.name ?? "tokenmarket",
    level,
    redact: {
      paths: ["api_key", "*.api_key", "headers['x-api-key']", "req.headers['x-api-key']"],
      censor: "[redacted]",
    },
    ...(pretty
      ? {
          transport: {
            target: "pino-pretty",
            options: { colorize: true, translateTime: "HH:MM:ss.l", ignore: "pid,hostname" },
          },
        }
      : {}),
  });
}

/** A logger that drops everything, for tests that do not want output. */
export function createSilentLogger(): Logger {
  return pino({ level: "silent" });
}
