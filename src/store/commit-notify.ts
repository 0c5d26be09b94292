import type { DbClient, Queryable } from "./db.js";

/** The channel on which indexers announce commits; API processes LISTEN on it (on the primary). */
export const COMMIT_CHANNEL = "tokenmarket_commit";

/** What an indexer committed: the chain's checkpoint is now `block` (lower after a rollback). */
export type CommitNotice = { chainId: number; block: number };

/**
 * Announces a commit from inside its transaction: Postgres delivers the notification only when
 * the transaction commits, and never for one rolled back, so a listener never hears of data it
 * cannot read yet on the primary.
 */
export async function notifyCommit(client: Queryable, notice: CommitNotice): Promise<void> {
  await client.query("SELECT pg_notify($1, $2)", [
    COMMIT_CHANNEL,
    JSON.stringify({ chain: notice.chainId, block: notice.block }),
  ]);
}

/**
 * Subscribes the connection to commit notifications (they arrive as its "notification" events).
 * Only on the primary: a standby cannot LISTEN. The connection must stay out of the pool's
 * rotation while subscribed.
 */
export async function listenForCommits(client: DbClient): Promise<void> {
  await client.query(`LISTEN ${COMMIT_CHANNEL}`);
}

/** Ends the connection's subscription, before it goes back to the pool. */
export async function unlistenCommits(client: DbClient): Promise<void> {
  await client.query(`UNLISTEN ${COMMIT_CHANNEL}`);
}

/** The notice of a notification's payload, or undefined when it is not one of ours. */
export function parseCommitNotice(payload: string | undefined): CommitNotice | undefined {
  if (!payload) return undefined;
  try {
    const value = JSON.parse(payload) as { chain?: unknown; block?: unknown };
    if (Number.isSafeInteger(value.chain) && Number.isSafeInteger(value.block))
      return { chainId: value.chain as number, block: value.block as number };
  } catch {
    // Not ours: ignored.
  }
  return undefined;
}
