import type { DexConfig } from "../config/schema.js";
import { creationTopic } from "../decode/abi.js";
import { decodePoolCreation } from "../decode/factory-events.js";
import type { Hex } from "../decode/types.js";
import { RangeTooLargeError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { FactoryScan } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import { loadFactoryScans, saveFactoryScan } from "../store/chain-state.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { insertPools } from "../store/pools.js";
import { type Pool, poolFromCreation } from "./pools.js";
import { createRangeSizer } from "./ranges.js";

/**
 * Finds the pools that configured factories created below the indexed range: scans each
 * factory's creation events from its deployment up to `checkpoint` (startBlock − 1 on a new
 * chain, or the current checkpoint for a DEX added later), in adaptive ranges (creation logs are
 * sparse), saving pools and progress together so that a restart resumes. Returns the pools found.
 */
export async function scanFactories(args: {
  db: Db;
  rpc: RpcClient;
  chainId: number;
  dexes: readonly DexConfig[];
  checkpoint: number;
  isKnownPool(address: Hex): boolean;
  maxRange: number;
  logger: Logger;
  isStopped(): boolean;
  /** The writer's fence (writer-lock.ts), run first in each write. */
  fence?: (client: DbClient) => Promise<void>;
}): Promise<Pool[]> {
  const { db, rpc, chainId, logger } = args;
  const scans = await loadFactoryScans(db, chainId);
  const found: Pool[] = [];
  for (const dex of args.dexes) {
    let scan: FactoryScan | undefined = scans.get(dex.factory);
    if (!scan) {
      const target = args.checkpoint;
      const deployed = target < 0 ? 0 : await findDeploymentBlock(rpc, dex.factory, target);
      scan = { scannedBlock: Math.min(deployed - 1, target), targetBlock: target };
      const first = scan;
      await withTransaction(db, async (client) => {
        await args.fence?.(client);
        await saveFactoryScan(client, chainId, dex.factory, first);
      });
      if (target >= 0) {
        logger.info(
          { dex: dex.name, from_block: deployed, to_block: target },
          "scanning factory for older pools",
        );
      }
    }
    const sizer = createRangeSizer({ initial: args.maxRange, max: args.maxRange, targetLogs: 20_000 });
    while (scan.scannedBlock < scan.targetBlock && !args.isStopped()) {
      const target: number = scan.targetBlock;
      const from = scan.scannedBlock + 1;
      const to = Math.min(target, from + sizer.size() - 1);
      let logs: Awaited<ReturnType<RpcClient["getLogs"]>>;
      try {
        logs = await rpc.getLogs({
          fromBlock: from,
          toBlock: to,
          address: [dex.factory],
          topic0: [creationTopic(dex.protocol)],
        });
      } catch (error) {
        if (error instanceof RangeTooLargeError && sizer.tooLarge(to - from + 1)) continue;
        if (error instanceof RangeTooLargeError) throw new RetryableRpcError(error.message, { cause: error });
        throw error;
      }
      sizer.succeeded(to - from + 1, logs.length, false);
      const pools: Pool[] = [];
      for (const log of logs) {
        const creation = decodePoolCreation(log, dex.protocol);
        if (creation && !args.isKnownPool(creation.pool)) pools.push(poolFromCreation(creation, dex, target));
      }
      const next: FactoryScan = { scannedBlock: to, targetBlock: target };
      await withTransaction(db, async (client) => {
        await args.fence?.(client);
        await insertPools(client, chainId, pools);
        await saveFactoryScan(client, chainId, dex.factory, next);
      });
      found.push(...pools);
      scan = next;
      if (pools.length > 0)
        logger.debug({ dex: dex.name, to_block: to, pools: pools.length }, "older pools found");
    }
  }
  return found;
}

/**
 * The block in which a contract was deployed (binary search on eth_getCode), or `upTo + 1` when
 * it has no code at `upTo`. A node without the history (not an archive) gives 0: scan everything.
 */
async function findDeploymentBlock(rpc: RpcClient, address: Hex, upTo: number): Promise<number> {
  try {
    if ((await rpc.getCode(address, upTo)) === "0x") return upTo + 1;
    let lo = 0;
    let hi = upTo;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await rpc.getCode(address, mid)) === "0x") lo = mid + 1;
      else hi = mid;
    }
    return lo;
  } catch (error) {
    if (error instanceof RetryableRpcError) throw error;
    return 0;
  }
}
