import type { Logger } from "../internal/logger.js";
import {
  COMMIT_CHANNEL,
  type CommitNotice,
  listenForCommits,
  parseCommitNotice,
  unlistenCommits,
} from "../store/commit-notify.js";
import type { Db, DbClient } from "../store/db.js";

export type CommitListener = {
  /** True while the LISTEN connection is up (notifications arrive). */
  listening(): boolean;
  start(): void;
  stop(): Promise<void>;
};

/**
 * Listens for the indexers' commit notifications (`pg_notify` in the commit and rollback
 * transactions) on one connection of the **primary** (a standby cannot LISTEN). The connection is
 * taken from `db` and kept; when it drops it is re-opened with backoff (100 ms doubling to 5 s),
 * and `onReconnect` is called once listening again, because notifications sent meanwhile are lost.
 */
export function createCommitListener(options: {
  db: Db;
  logger: Logger;
  onCommit: (notice: CommitNotice) => void;
  onReconnect?: () => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}): CommitListener {
  const minBackoffMs = options.minBackoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 5000;
  let client: DbClient | undefined;
  let running = false;
  let up = false;
  let backoff = minBackoffMs;
  let timer: NodeJS.Timeout | undefined;
  let connecting: Promise<void> | undefined;
  let failures = 0;

  const onNotification = (message: { channel: string; payload?: string }) => {
    if (message.channel !== COMMIT_CHANNEL) return;
    const notice = parseCommitNotice(message.payload);
    if (notice) options.onCommit(notice);
  };

  const drop = (error: unknown) => {
    const lost = client;
    client = undefined;
    if (up)
      options.logger.warn({ err: error }, "commit notifications lost; reconnecting (polling meanwhile)");
    up = false;
    if (lost) {
      lost.removeListener("notification", onNotification);
      // Destroys the broken connection instead of returning it to the pool.
      lost.release(error instanceof Error ? error : new Error(String(error)));
    }
    schedule();
  };

  const schedule = () => {
    if (!running || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, backoff);
    timer.unref();
    backoff = Math.min(maxBackoffMs, backoff * 2);
  };

  const connect = () => {
    connecting ??= (async () => {
      let c: DbClient | undefined;
      try {
        c = await options.db.connect();
        c.on("error", (error) => {
          if (client === c) drop(error);
        });
        c.on("notification", onNotification);
        await listenForCommits(c);
        if (!running) {
          c.release();
          return;
        }
        client = c;
        up = true;
        backoff = minBackoffMs;
        if (failures > 0) options.logger.info("listening for commit notifications again");
        failures = 0;
        options.onReconnect?.();
      } catch (error) {
        failures += 1;
        if (failures === 1)
          options.logger.warn({ err: error }, "cannot listen for commit notifications; retrying");
        if (c) {
          c.removeListener("notification", onNotification);
          c.release(error instanceof Error ? error : true);
        }
        schedule();
      }
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  return {
    listening: () => up,
    start() {
      if (running) return;
      running = true;
      void connect();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await connecting;
      const c = client;
      client = undefined;
      up = false;
      if (c) {
        c.removeListener("notification", onNotification);
        await unlistenCommits(c).catch(() => {});
        c.release();
      }
    },
  };
}
