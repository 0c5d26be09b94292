/**
 * One round of a chain's indexer loop: the node's head, then either a range to ingest (backfill)
 * or, at the head, the checkpoint's check, the head recorded, the supply refresh and the wait for
 * the next head. Its state is the run's view of the head: the highest the node answered, the one
 * recorded last, and whether the backfill has caught up.
 */
import type { ChainConfig } from "../config/schema.js";
import { InconsistentAnswerError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Checkpoint } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { BlockHeader } from "../rpc/types.js";
import { recordHead } from "../store/chain-state.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { type HeadWait, headBehind } from "./head-wait.js";
import type { Ingest } from "./ingest.js";
import type { Progress } from "./progress.js";
import type { SupplyRefresh } from "./supply-refresh.js";

/** A backfill closer than this to the head lets a poll interval of blocks gather before its batch. */
const GATHER_BELOW_BLOCKS = 64;

export type HeadRounds = {
  /** "done" when caught up without `follow`; "again" otherwise. Throws what its steps throw. */
  round(): Promise<"done" | "again">;
};

export function createHeadRounds(args: {
  chain: ChainConfig;
  db: Db;
  rpc: RpcClient;
  logger: Logger;
  progress: Progress;
  ingest: Pick<Ingest, "next">;
  supplies: SupplyRefresh;
  heads: HeadWait;
  options: { follow: boolean; inconsistentFailoverAfter: number };
  checkpoint(): Checkpoint;
  verifyCheckpoint(head: BlockHeader): Promise<boolean>;
  fence(client: DbClient): Promise<void>;
  /** How many inconsistent answers in a row the node has given. */
  inconsistentStreak(): number;
  /** A whole round at the head worked (the restart backoff and the inconsistency streak start over). */
  worked(): void;
}): HeadRounds {
  const { chain, rpc, logger, progress, options } = args;
  /** The highest head the node has answered (a lower one later is inconsistent). */
  let highestHead = -1;
  let recordedHead = -1;
  let caughtUp = false;
  /** The last round let blocks gather (a backfill near a moving head): this one takes them. */
  let gathered = false;

  /** The node's head, checked against the highest it gave before. */
  const latestHead = async (): Promise<BlockHeader> => {
    const head = await rpc.getBlock("latest");
    if (!head) throw new RetryableRpcError("the node has no latest block");
    const behind = headBehind(
      head.number,
      highestHead,
      args.inconsistentStreak(),
      options.inconsistentFailoverAfter,
    );
    if (behind === "inconsistent") {
      throw new InconsistentAnswerError(
        "head_backwards",
        [head.number, highestHead],
        `the head went back from block ${highestHead} to block ${head.number}`,
      );
    }
    if (behind === "follow") {
      logger.warn(
        { head_block: head.number, highest_head_block: highestHead, rpc_host: rpc.host() },
        "the node keeps answering a lower head; following it",
      );
    }
    highestHead = head.number;
    return head;
  };

  return {
    async round() {
      const headBefore = highestHead;
      const head = await latestHead();
      progress.head(head.number, head.timestamp);
      const target = head.number - chain.confirmations;
      if (target > args.checkpoint().block) {
        if (!caughtUp) progress.phase("backfill");
        // A backfill a few blocks behind a head that keeps moving fast (a node still syncing, a
        // devnet writing its history) would take a batch of a few blocks a round, each paying a
        // batch's fixed cost (its candles, series and figures, one transaction): it lets one poll
        // interval of blocks gather first, once, and then takes them in one batch. A head that
        // did not move since the last round has nothing to gather.
        const moving = headBefore >= 0 && head.number > headBefore;
        const near = target - args.checkpoint().block < GATHER_BELOW_BLOCKS;
        if (!caughtUp && !gathered && moving && near) {
          gathered = true;
          await args.heads.pause(chain.pollIntervalMs);
          return "again";
        }
        gathered = false;
        await args.ingest.next(target);
        return "again";
      }
      if (!(await args.verifyCheckpoint(head))) return "again";
      if (!caughtUp) {
        caughtUp = true;
        logger.info(
          { indexed_block: args.checkpoint().block, head_block: head.number },
          "caught up with the head",
        );
      }
      progress.phase("following");
      if (head.number !== recordedHead) {
        const at = { block: head.number, time: new Date(head.timestamp * 1000) };
        await withTransaction(args.db, async (client) => {
          await args.fence(client);
          await recordHead(client, chain.id, at);
        });
        recordedHead = head.number;
      }
      if (!options.follow) return "done";
      args.worked();
      await args.supplies.refresh();
      // Until a new-head notification, the poll interval, or the next supply refresh.
      await args.heads.wait(Math.min(chain.pollIntervalMs, args.supplies.untilDue(10)));
      return "again";
    },
  };
}
