import type { ChainConfig } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import { DeepReorgError, InconsistentAnswerError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { Checkpoint } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { BlockHeader } from "../rpc/types.js";
import { loadKeptBlocks, loadOffCanonical, setOffCanonical } from "../store/chain-state.js";
import { notifyCommit } from "../store/commit-notify.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { rollbackAbove } from "../store/rollback.js";
import type { DerivedData } from "./derived.js";

/** A stored canonical block: its number, hash and time. */
export type StoredBlock = { number: number; hash: Hex; time: Date };

/**
 * The reorg's common ancestor: the highest of `stored` (highest first, as stored: the kept window
 * dense, older ranges' ends sparser) whose hash the node still has at its height. The node's
 * hashes are asked in chunks, highest first, the first of `firstChunk` blocks (the window, where
 * ordinary reorgs end) and each next one twice as large, so a reorg `d` blocks deep costs about
 * 2·d header reads at most, and a shallow one no more than before. Canonical blocks are a prefix
 * of the stored ones (each links to the one below), so the first match found is the ancestor.
 * Null when no stored block is canonical (a reorg deeper than every kept hash).
 */
export async function findCommonAncestor(
  stored: readonly StoredBlock[],
  hashesAt: (numbers: number[]) => Promise<(Hex | null)[]>,
  firstChunk: number,
): Promise<{ ancestor: StoredBlock | null; asked: number }> {
  let size = Math.max(1, firstChunk);
  let asked = 0;
  for (let i = 0; i < stored.length; i += size, size *= 2) {
    const chunk = stored.slice(i, i + size);
    const onChain = await hashesAt(chunk.map((b) => b.number));
    asked += chunk.length;
    const ancestor = chunk.find((b, j) => onChain[j] === b.hash);
    if (ancestor) return { ancestor, asked };
  }
  return { ancestor: null, asked };
}

export type ReorgHandler = {
  /** Is the checkpoint still on the node's chain? False after a rollback (see createReorgHandler). */
  verifyCheckpoint(head?: BlockHeader): Promise<boolean>;
  /** Walks back to the common ancestor and rolls back to it (see createReorgHandler). */
  handleReorg(reason: string, unlinked?: { block: number; parentHash: Hex }): Promise<void>;
  /** Reads whether the chain's data is marked off the canonical chain (at each reload). */
  loadMark(): Promise<void>;
};

/**
 * A chain's reorgs: the checkpoint's check against the node, the walk back to the common
 * ancestor (findCommonAncestor), the rollback in one transaction, and the off-canonical mark
 * that makes the API answer the chain's data with a 503 from the moment a reorg is known until
 * it is rolled back. `reload` reloads the chain's memory from the database after a rollback.
 */
export function createReorgHandler(args: {
  db: Db;
  rpc: RpcClient;
  chain: Pick<ChainConfig, "id" | "name" | "reorgWindow">;
  logger: Logger;
  derived: Pick<DerivedData, "afterRollback">;
  fence: (client: DbClient) => Promise<void>;
  checkpoint: () => Checkpoint;
  reload: () => Promise<void>;
}): ReorgHandler {
  const { db, rpc, chain, logger, derived, fence, reload } = args;
  const cp = args.checkpoint;
  /** The chain's data is marked off the canonical chain in `sync_state` (setOffCanonical). */
  let markedOffCanonical = false;

  /**
   * Sets (or clears: null) the mark that makes the API answer this chain's data with a 503, in a
   * fenced transaction of its own, announced like a commit so the API reads it at once.
   */
  const markOffCanonical = async (reason: string | null) => {
    await withTransaction(db, async (client) => {
      await fence(client);
      await setOffCanonical(client, chain.id, reason);
      await notifyCommit(client, { chainId: chain.id, block: cp().block });
    });
    markedOffCanonical = reason !== null;
  };

  /**
   * Is the stored checkpoint still on the node's chain? Rolls back when the node has another
   * block at that height, or when the node is below the checkpoint and its head is another block
   * than the one stored at that height (a chain that went back to a shorter branch). A node
   * without the checkpoint's block whose head is the stored one (a backend behind the others) is
   * no evidence of a reorg: the indexer waits for the chain to get there.
   */
  const verifyCheckpoint = async (head?: BlockHeader): Promise<boolean> => {
    if (cp().hash === null) return true;
    const block = head?.number === cp().block ? head : await rpc.getBlock(cp().block);
    if (block === null) {
      const top = head ?? (await rpc.getBlock("latest"));
      const mine = top ? (await loadKeptBlocks(db, chain.id, top.number)).at(-1) : undefined;
      if (top && mine?.number === top.number && mine.hash !== top.hash) {
        await handleReorg(
          `the node's head block ${top.number} is not the stored one and the node has no block ${cp().block}`,
        );
        return false;
      }
      logger.debug(
        { indexed_block: cp().block, head_block: top?.number },
        "the node is behind the checkpoint",
      );
      return true;
    }
    if (block.hash === cp().hash) {
      // A mark left by a process that stopped before its rollback, on a chain that came back.
      if (markedOffCanonical) await markOffCanonical(null);
      return true;
    }
    await handleReorg(`checkpoint block ${cp().block} is no longer canonical`);
    return false;
  };

  /**
   * Walks back through the stored blocks against the node's hashes to the highest one it still
   * has (the common ancestor: findCommonAncestor) and, in one transaction, deletes everything
   * above it, recomputes the touched pools' state, lets the derived data roll back and lowers the
   * checkpoint. From the moment the reorg is known until that transaction, the chain is marked
   * off the canonical chain (the API answers its data with a 503); a reorg deeper than every
   * kept hash leaves the mark and stops the chain.
   */
  const handleReorg = async (reason: string, unlinked?: { block: number; parentHash: Hex }) => {
    const unlinkedMessage = () =>
      unlinked
        ? `block ${unlinked.block}'s parent hash ${unlinked.parentHash} is not block ${cp().block}'s hash ${cp().hash}, which the node still has`
        : `block ${cp().block}'s hash changed and changed back (${reason})`;
    if (unlinked) {
      // The node still has our checkpoint: what looked like a reorg was a header that does not
      // link to its parent (hardhat_mine's blocks, two backends behind one URL). No reorg to undo;
      // asking again at once would only get the same answer, so it is an inconsistency.
      const [atCheckpoint] = await rpc.getBlocksOrNull([cp().block]);
      if (cp().hash !== null && atCheckpoint?.hash === cp().hash) {
        throw new InconsistentAnswerError("unlinked_header", [cp().block, unlinked.block], unlinkedMessage());
      }
    }
    await markOffCanonical(`chain ${chain.id}: a reorg is being rolled back (${reason})`);
    logger.warn(
      { reason, indexed_block: cp().block, rpc_host: rpc.host() },
      "reorg found; the chain's data is marked off the canonical chain until it is rolled back",
    );
    const stored = await loadKeptBlocks(db, chain.id);
    const { ancestor, asked } = await findCommonAncestor(
      stored,
      async (numbers) => (await rpc.getBlocksOrNull(numbers)).map((b) => b?.hash ?? null),
      chain.reorgWindow,
    );
    if (!ancestor) {
      const lowest = stored[stored.length - 1]?.number;
      const message = `chain ${chain.id} (${chain.name}): reorg deeper than the kept block hashes (no stored block from ${lowest ?? "none"} to ${cp().block} is canonical); indexing of this chain stops`;
      await markOffCanonical(message);
      throw new DeepReorgError(message);
    }
    if (ancestor.number === cp().block) {
      await markOffCanonical(null);
      throw new InconsistentAnswerError(
        "unlinked_header",
        [cp().block, unlinked?.block ?? cp().block],
        unlinkedMessage(),
      );
    }
    const previous = cp().block;
    const result = await withTransaction(db, async (client) => {
      await fence(client);
      // Also clears the off-canonical mark: the data is on the node's chain again.
      const r = await rollbackAbove(client, chain.id, previous, {
        block: ancestor.number,
        hash: ancestor.hash,
        time: ancestor.time,
      });
      await derived.afterRollback(client, { chainId: chain.id, ancestorBlock: ancestor.number });
      await notifyCommit(client, { chainId: chain.id, block: ancestor.number });
      return r;
    });
    markedOffCanonical = false;
    const depth = previous - ancestor.number;
    logger.warn(
      {
        reason,
        ancestor_block: ancestor.number,
        previous_block: previous,
        depth,
        reorg_window: chain.reorgWindow,
        hashes_asked: asked,
        deleted_swaps: result.deletedSwaps,
        deleted_pool_events: result.deletedEvents,
        recomputed_pools: result.affectedPools.length,
      },
      "reorg: rolled back to the common ancestor",
    );
    await reload();
  };

  return {
    verifyCheckpoint,
    handleReorg,
    loadMark: async () => {
      markedOffCanonical = (await loadOffCanonical(db, chain.id)) !== null;
    },
  };
}
