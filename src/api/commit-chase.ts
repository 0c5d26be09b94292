/**
 * The read router's handling of the indexers' commit notifications: the newest notified block of
 * each chain (and whether it went back: a rollback), and the chase of every database until its
 * `sync_state` holds it: re-read at once, then every CHASE_MS for up to CHASE_FOR_MS.
 */
import type { CommitNotice } from "../store/commit-notify.js";
import type { ReadTarget } from "./read-target.js";

/** How often a replica that has not replayed a notified commit yet is re-read, and for how long. */
const CHASE_MS = 20;
const CHASE_FOR_MS = 2000;

/** Per chain, the newest notified block and whether it went below the one notified before. */
export type Notified = ReadonlyMap<number, { block: number; rollback: boolean }>;

/** The notified blocks after `notice`. */
export function notify(
  notified: Notified,
  notice: CommitNotice,
): Map<number, { block: number; rollback: boolean }> {
  const previous = notified.get(notice.chainId);
  return new Map(notified).set(notice.chainId, {
    block: notice.block,
    rollback: previous !== undefined && notice.block < previous.block,
  });
}

/** True when a database at `blockOf` holds every notified commit: at or above it, exactly at it after a rollback. */
export function holdsNotified(notified: Notified, blockOf: (chainId: number) => number): boolean {
  for (const [chainId, n] of notified) {
    const b = blockOf(chainId);
    if (n.rollback ? b !== n.block : b < n.block) return false;
  }
  return true;
}

export type CommitChase = {
  /** Records the notice and chases every target until it holds it (while `running()`). */
  onCommit(notice: CommitNotice): void;
};

export function createCommitChase(targets: readonly ReadTarget[], running: () => boolean): CommitChase {
  let notified: Notified = new Map();
  const chasing = new Set<ReadTarget>();

  const chase = (t: ReadTarget) => {
    if (chasing.has(t)) return;
    chasing.add(t);
    const deadline = Date.now() + CHASE_FOR_MS;
    const step = async () => {
      await t.sync.refresh();
      if (running() && !holdsNotified(notified, (id) => t.sync.blockOf(id)) && Date.now() < deadline) {
        setTimeout(() => void step(), CHASE_MS).unref();
      } else chasing.delete(t);
    };
    void step();
  };

  return {
    onCommit(notice) {
      notified = notify(notified, notice);
      for (const t of targets) chase(t);
    },
  };
}
