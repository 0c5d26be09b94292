import type { ChainConfig, Config } from "../config/schema.js";
import { LaunchError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import { createRpcClient } from "../rpc/client.js";
import { deleteChainRow, loadCheckpoint } from "../store/chain-state.js";
import type { Db } from "../store/db.js";

/** How long a node may take to tell its head for the check (it is skipped without an answer). */
const HEAD_TIMEOUT_MS = 10_000;

/** The start block the stored data of a chain was indexed from, kept in `settings`. */
const startBlockSetting = (chainId: number) => `start_block:${chainId}`;

const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * Checks each chain's `startBlock` before an indexing process starts, so that it is never silently
 * ignored nor a cause of endless retries:
 * - past the node's head (a node that answers), with nothing indexed yet: a LaunchError naming both;
 * - changed since the stored data was indexed: applied when nothing was indexed yet (the chain's
 *   stored state, such as pools found by the factory scan, is dropped and indexing starts afresh
 *   from the new block), refused with a LaunchError otherwise (the indexer only moves forward
 *   from its checkpoint: an earlier start would leave the history below missing, a later one keep it).
 */
export async function checkStartBlocks(options: { config: Config; db: Db; logger: Logger }): Promise<void> {
  const { config, db } = options;
  for (const [index, chain] of config.chains.entries()) {
    const logger = options.logger.child({ chain_id: chain.id });
    const setting = `TOKENMARKET__chains__${index}__startBlock`;
    const checkpoint = await loadCheckpoint(db, chain.id);
    const recorded = await recordedStartBlock(db, chain.id);
    // Nothing indexed yet: the checkpoint is still the block before the start it was made for
    // (without a hash: no batch has moved it), and no trade is stored (a replay stores no hashes).
    const nothingIndexed =
      checkpoint === null || (checkpoint.hash === null && !(await hasSwaps(db, chain.id)));
    const stored = checkpoint === null ? null : nothingIndexed ? checkpoint.block + 1 : recorded;
    const changed = stored !== null && stored !== chain.startBlock;
    if (changed && !nothingIndexed) {
      throw new LaunchError(
        `chain ${chain.id} (${chain.name}): the database holds this chain indexed from block ${fmt(stored)} ` +
          `up to ${fmt(checkpoint.block)}, but the configured startBlock is ${fmt(chain.startBlock)}: ` +
          `set startBlock back to ${stored} (${setting}), or index from ${chain.startBlock} into another database`,
      );
    }
    // Checked before anything is written: a start that fails here changes nothing.
    if (nothingIndexed) await checkHead(chain, setting, logger);
    if (changed) {
      await deleteChainRow(db, chain.id);
      logger.warn(
        { old_start_block: stored, start_block: chain.startBlock },
        "startBlock changed before anything was indexed: the chain's stored state is dropped and it starts from the new block",
      );
    }
    if (checkpoint === null || changed || recorded === null)
      await recordStartBlock(db, chain.id, chain.startBlock);
  }
}

/** A start block past the head of a node that answers is the operator's to fix, naming both numbers. */
async function checkHead(chain: ChainConfig, setting: string, logger: Logger): Promise<void> {
  if (chain.startBlock === 0) return;
  let head: number;
  try {
    const rpc = createRpcClient({
      chain,
      logger,
      options: { attempts: 2, timeoutMs: HEAD_TIMEOUT_MS / 2 },
      signal: AbortSignal.timeout(HEAD_TIMEOUT_MS),
    });
    head = await rpc.getBlockNumber();
  } catch (error) {
    // The indexer retries the node and /readyz says why; no figure to compare with here.
    logger.warn({ err: error }, "the node's head is unknown: startBlock not checked against it");
    return;
  }
  if (chain.startBlock > head) {
    throw new LaunchError(
      `chain ${chain.id} (${chain.name}): startBlock ${fmt(chain.startBlock)} is past the node's head ${fmt(head)}: ` +
        `set startBlock (${setting}) to a block at or below ${head}, or point the chain's RPC URL at a node of that network that has it`,
    );
  }
}

async function hasSwaps(db: Db, chainId: number): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM swaps WHERE chain_id = $1 LIMIT 1", [chainId]);
  return rows.length > 0;
}

async function recordedStartBlock(db: Db, chainId: number): Promise<number | null> {
  const { rows } = await db.query<{ value: number }>("SELECT value FROM settings WHERE key = $1", [
    startBlockSetting(chainId),
  ]);
  const value = rows[0]?.value;
  return typeof value === "number" ? value : null;
}

async function recordStartBlock(db: Db, chainId: number, startBlock: number): Promise<void> {
  await db.query(
    `INSERT INTO settings (key, value) VALUES ($1, $2::jsonb)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [startBlockSetting(chainId), JSON.stringify(startBlock)],
  );
}
