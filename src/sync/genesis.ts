import type { ChainConfig } from "../config/schema.js";
import { BaseError, ChainIdMismatchError, GenesisMismatchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { RpcClient } from "../rpc/client.js";
import { deleteChainRow, getChainRow, insertChainRow } from "../store/chain-state.js";
import { type Db, withTransaction } from "../store/db.js";

/**
 * Compares the node's chain id and genesis hash with the database: an unknown chain is recorded;
 * the same genesis resumes; a different genesis drops the chain's data (cascade) and starts
 * afresh on a devnet, and throws GenesisMismatchError on a real chain.
 * Returns "new", "resumed" or "reborn".
 */
export async function checkGenesis(args: {
  db: Db;
  rpc: RpcClient;
  chain: Pick<ChainConfig, "id" | "name" | "devnet">;
  logger: Logger;
}): Promise<"new" | "resumed" | "reborn"> {
  const { db, rpc, chain, logger } = args;
  const nodeChainId = await rpc.getChainId();
  if (nodeChainId !== chain.id) {
    throw new ChainIdMismatchError(
      `chain ${chain.id} (${chain.name}): the RPC endpoint serves chain id ${nodeChainId}`,
    );
  }
  const genesis = await rpc.getBlock(0);
  if (!genesis) throw new BaseError(`chain ${chain.id}: the node has no block 0`);
  const row = { chainId: chain.id, name: chain.name, genesisHash: genesis.hash, devnet: chain.devnet };
  const stored = await getChainRow(db, chain.id);
  if (!stored) {
    await insertChainRow(db, row);
    logger.info({ genesis_hash: genesis.hash }, "new chain");
    return "new";
  }
  if (stored.genesisHash === genesis.hash) return "resumed";
  if (!chain.devnet) {
    throw new GenesisMismatchError(
      `chain ${chain.id} (${chain.name}): the node's genesis ${genesis.hash} is not the stored ${stored.genesisHash}; ` +
        "the RPC endpoint serves another network, or the database belongs to another one",
    );
  }
  await withTransaction(db, async (client) => {
    await deleteChainRow(client, chain.id);
    await insertChainRow(client, row);
  });
  logger.warn(
    { old_genesis_hash: stored.genesisHash, genesis_hash: genesis.hash },
    "devnet reborn with a new genesis: its old data is dropped and it is indexed afresh",
  );
  return "reborn";
}
