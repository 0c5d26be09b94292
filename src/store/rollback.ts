/**
 * A reorg's rollback of ingested rows: the one write that spans the ingestion tables. Each step
 * lives with its table; this is their order.
 */
import type { Hex } from "../model/index.js";
import { deleteBlocksAbove, lowerCheckpoint } from "./chain-state.js";
import type { Queryable } from "./db.js";
import { deleteLastSwapsAbove } from "./partitions.js";
import { deletePoolEventsAbove } from "./pool-events.js";
import { deletePoolsCreatedAbove, restorePoolStates } from "./pools.js";
import { deleteSwapsAbove } from "./swaps.js";
import { deleteUnusedTokens } from "./tokens.js";

/**
 * Deletes everything ingested above `ancestor` (swaps, pool events, blocks, pools created above
 * it and tokens no pool refers to any more), recomputes the latest state of the pools that lost
 * events from their latest remaining swap or pool event (their base state when none is left) and
 * lowers the checkpoint from `previous` to the ancestor. Run inside one transaction with the derived-data rollback.
 * Returns the pools whose state was recomputed.
 */
export async function rollbackAbove(
  client: Queryable,
  chainId: number,
  previous: number,
  ancestor: { block: number; hash: Hex; time: Date },
): Promise<{ affectedPools: Hex[]; deletedSwaps: number; deletedEvents: number }> {
  // First, to lock the chain's checkpoint row against a concurrent writer.
  await lowerCheckpoint(client, chainId, previous, ancestor);
  const swapPools = await deleteSwapsAbove(client, chainId, ancestor.block);
  await deleteLastSwapsAbove(client, chainId, ancestor.block);
  const eventPools = await deletePoolEventsAbove(client, chainId, ancestor.block);
  await deletePoolsCreatedAbove(client, chainId, ancestor.block);
  await deleteUnusedTokens(client, chainId);
  const affected = [...new Set([...swapPools, ...eventPools])];
  await restorePoolStates(client, chainId, affected);
  await deleteBlocksAbove(client, chainId, ancestor.block);
  return { affectedPools: affected, deletedSwaps: swapPools.length, deletedEvents: eventPools.length };
}
