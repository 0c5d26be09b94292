import type { Config } from "../config/schema.js";
import type { Logger } from "../internal/logger.js";
import { createRpcClient } from "../rpc/client.js";
import { deleteChainRow, getChainRow, loadCheckpoint } from "../store/chain-state.js";
import type { Db } from "../store/db.js";

/** How long the node of a devnet chain may take to answer the check (a few calls). */
const CHECK_TIMEOUT_MS = 10_000;

export type DevnetDataCheck = {
  chainId: number;
  /** "kept": the stored data is on the node's chain; "dropped": it was not, and is gone; "unchecked": no data, or no answer. */
  outcome: "kept" | "dropped" | "unchecked";
  reason?: string;
};

/**
 * Run before the API of an indexing process listens, so that no answer ever comes from a chain
 * that is no longer there. A devnet can be made anew at a start (another genesis), or reloaded
 * from an older saved state (the same genesis, but without the blocks indexed last): the stored
 * data of a devnet chain is kept only when the node has the stored genesis and the stored
 * checkpoint block, with the same hashes; otherwise it is dropped here (the indexer then indexes
 * the chain afresh). A real chain is the indexer's to check: another genesis stops it (fatal), a
 * checkpoint no longer canonical is rolled back by its reorg handling.
 */
export async function dropVanishedDevnetData(options: {
  config: Config;
  db: Db;
  logger: Logger;
}): Promise<DevnetDataCheck[]> {
  const { config, db } = options;
  const results: DevnetDataCheck[] = [];
  for (const chain of config.chains.filter((c) => c.devnet)) {
    const logger = options.logger.child({ chain_id: chain.id });
    const stored = await getChainRow(db, chain.id);
    if (!stored) {
      results.push({ chainId: chain.id, outcome: "unchecked", reason: "nothing stored" });
      continue;
    }
    const stop = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    const rpc = createRpcClient({
      chain,
      logger,
      options: { attempts: 3, timeoutMs: CHECK_TIMEOUT_MS / 2 },
      signal: stop,
    });
    let reason: string | null;
    try {
      reason = await vanished(rpc, stored.genesisHash, await loadCheckpoint(db, chain.id));
    } catch (error) {
      // The indexer checks the genesis again before it writes; until then readiness tells.
      logger.warn({ err: error }, "could not compare the stored devnet data with the node");
      results.push({ chainId: chain.id, outcome: "unchecked", reason: (error as Error).message });
      continue;
    }
    if (reason === null) {
      results.push({ chainId: chain.id, outcome: "kept" });
      continue;
    }
    await deleteChainRow(db, chain.id);
    logger.warn(
      { reason },
      "the stored data of this devnet is not of the chain its node serves now: dropped",
    );
    results.push({ chainId: chain.id, outcome: "dropped", reason });
  }
  return results;
}

/** Why the stored data is not of the node's chain, or null when it is. */
async function vanished(
  rpc: ReturnType<typeof createRpcClient>,
  genesisHash: string,
  checkpoint: { block: number; hash: string | null } | null,
): Promise<string | null> {
  const genesis = await rpc.getBlock(0);
  if (genesis?.hash !== genesisHash)
    return `the node's genesis is ${genesis?.hash ?? "missing"}, the stored one ${genesisHash}`;
  if (checkpoint === null || checkpoint.hash === null || checkpoint.block <= 0) return null;
  const block = await rpc.getBlock(checkpoint.block);
  if (block === null) return `the node has no block ${checkpoint.block}, the last indexed`;
  if (block.hash !== checkpoint.hash)
    return `the node's block ${checkpoint.block} is ${block.hash}, the indexed one ${checkpoint.hash}`;
  return null;
}
