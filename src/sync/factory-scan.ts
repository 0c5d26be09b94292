import type { DexConfig } from "../config/schema.js";
import type { Hex } from "../decode/types.js";
import { RangeTooLargeError, RetryableRpcError } from "../internal/errors.js";
import type { Logger } from "../internal/logger.js";
import type { FactoryScan } from "../model/index.js";
import { creationTopicOf, familyOf } from "../protocols/index.js";
import type { RpcClient } from "../rpc/client.js";
import { timedOutWaiting } from "../rpc/errors.js";
import { loadFactoryScans, saveFactoryScan } from "../store/chain-state.js";
import { type Db, type DbClient, withTransaction } from "../store/db.js";
import { insertPools } from "../store/pools.js";
import { type Pool, poolFromCreation } from "./pools.js";
import { createRangeSizer } from "./ranges.js";

/** Where the scan of all configured factories stands (for logs, `/readyz` and `/metrics`). */
export type FactoryScanProgress = {
  /** Blocks scanned and to scan, over all factories, from each one's deployment to its target. */
  blocksDone: number;
  blocksTotal: number;
  /** 0…1 (1 when there is nothing to scan). */
  fraction: number;
  /** Pools stored by this run of the scan (a resumed scan counts from its restart). */
  poolsFound: number;
};

/**
 * One range's eth_getLogs, retries included, ends within this (ms). A node that cannot answer a
 * dense range in time (the client waits 15 s a request) then has it split after two or three
 * attempts, not after the client's eight (about 2.5 minutes a range).
 */
const RANGE_DEADLINE_MS = 40_000;

/** Logs asked per range at most: a range over it is made smaller (about 6 MB of JSON). */
const TARGET_LOGS = 10_000;

/**
 * Finds the pools that configured factories created below the indexed range: scans each
 * factory's creation events from its deployment up to `checkpoint` (startBlock − 1 on a new
 * chain, or the current checkpoint for a DEX added later), in adaptive ranges (creation logs are
 * sparse, except in a chain's first blocks), split whenever the provider refuses one; factories
 * at the same point are scanned together (one eth_getLogs for all).
 *
 * Bounded memory at any pool count: each range's pools are stored with the factory's progress in
 * one transaction (a restart resumes from there, every pool stored once) and handed to `onPools`,
 * then dropped; nothing accumulates here. Progress: an info line every `logIntervalMs` (factory,
 * block reached, pools found, rates, ETA) and `onProgress` after each range. Returns how many
 * pools this run stored.
 */
export async function scanFactories(args: {
  db: Db;
  rpc: RpcClient;
  chainId: number;
  dexes: readonly DexConfig[];
  checkpoint: number;
  /** Pools the caller already has (skipped); the database's key refuses duplicates anyway. */
  isKnownPool?(address: Hex): boolean;
  /** Called after each committed range with its new pools (the indexer keeps what ingest needs). */
  onPools?(pools: readonly Pool[]): void;
  onProgress?(progress: FactoryScanProgress): void;
  maxRange: number;
  logger: Logger;
  /** Between progress lines (default 10 s). */
  logIntervalMs?: number;
  isStopped(): boolean;
  /** The writer's fence (writer-lock.ts), run first in each write. */
  fence?: (client: DbClient) => Promise<void>;
  now?: () => number;
  /**
   * How long one range's eth_getLogs may take, retries included (default RANGE_DEADLINE_MS):
   * a range the node leaves unanswered until then is split, as a refused one is.
   */
  rangeDeadlineMs?: number;
}): Promise<{ poolsFound: number }> {
  const { db, rpc, chainId, logger } = args;
  const now = args.now ?? Date.now;
  const logIntervalMs = args.logIntervalMs ?? 10_000;
  const stored = await loadFactoryScans(db, chainId);

  // Each factory's span (deployment … target) first, so that the progress has a denominator.
  const plans: { dex: DexConfig; scan: FactoryScan; origin: number }[] = [];
  for (const dex of args.dexes) {
    let scan = stored.get(dex.factory);
    if (!scan) {
      const target = args.checkpoint;
      const deployed =
        target < 0 ? 0 : (dex.deployedBlock ?? (await findDeploymentBlock(rpc, dex.factory, target)));
      const first: FactoryScan = { scannedBlock: Math.min(deployed - 1, target), targetBlock: target };
      await withTransaction(db, async (client) => {
        await args.fence?.(client);
        await saveFactoryScan(client, chainId, dex.factory, first);
      });
      scan = first;
      plans.push({ dex, scan, origin: first.scannedBlock });
    } else if (scan.scannedBlock < scan.targetBlock) {
      // Resumed: the deployment again (a binary search, ~log₂(target) eth_getCode), for the share done.
      const deployed = dex.deployedBlock ?? (await findDeploymentBlock(rpc, dex.factory, scan.targetBlock));
      plans.push({ dex, scan, origin: Math.min(deployed - 1, scan.scannedBlock) });
    } else {
      plans.push({ dex, scan, origin: scan.scannedBlock });
    }
  }
  const blocksTotal = plans.reduce((a, p) => a + Math.max(0, p.scan.targetBlock - p.origin), 0);
  let blocksDone = plans.reduce((a, p) => a + Math.max(0, p.scan.scannedBlock - p.origin), 0);
  let poolsFound = 0;
  const progress = (): FactoryScanProgress => ({
    blocksDone,
    blocksTotal,
    fraction: blocksTotal === 0 ? 1 : blocksDone / blocksTotal,
    poolsFound,
  });
  args.onProgress?.(progress());

  const startedAt = now();
  const blocksAtStart = blocksDone;
  let lastLog = startedAt;
  const logProgress = (dex: string, factory: readonly Hex[], scan: FactoryScan, force: boolean) => {
    const at = now();
    if (!force && at - lastLog < logIntervalMs) return;
    lastLog = at;
    const seconds = Math.max((at - startedAt) / 1000, 1e-3);
    const blocksPerSecond = (blocksDone - blocksAtStart) / seconds;
    const etaSeconds = blocksPerSecond > 0 ? (blocksTotal - blocksDone) / blocksPerSecond : null;
    logger.info(
      {
        dex,
        factory,
        scanned_block: scan.scannedBlock,
        target_block: scan.targetBlock,
        percent: Math.floor(progress().fraction * 1000) / 10,
        pools_found: poolsFound,
        pools_per_second: Math.round(poolsFound / seconds),
        blocks_per_second: Math.round(blocksPerSecond),
        eta_seconds: etaSeconds === null ? null : Math.round(etaSeconds),
      },
      "factory scan progress",
    );
  };

  // Factories at the same point (all of them on a new chain) are scanned together: one
  // eth_getLogs for all their creation events, so that each block is read once, not once a factory.
  const groups = new Map<string, { scan: FactoryScan; dexes: DexConfig[] }>();
  for (const plan of plans) {
    if (plan.scan.scannedBlock >= plan.scan.targetBlock) continue;
    const key = `${plan.scan.scannedBlock}:${plan.scan.targetBlock}`;
    const group = groups.get(key) ?? { scan: plan.scan, dexes: [] };
    group.dexes.push(plan.dex);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    let { scan } = group;
    const byFactory = new Map(group.dexes.map((d) => [d.factory.toLowerCase(), d]));
    const names = group.dexes.map((d) => d.name).join(", ");
    const factories = group.dexes.map((d) => d.factory);
    logger.info(
      { dex: names, factory: factories, from_block: scan.scannedBlock + 1, to_block: scan.targetBlock },
      "scanning factories for older pools",
    );
    const topics = [...new Set(group.dexes.map((d) => creationTopicOf(d)))];
    const sizer = createRangeSizer({ initial: args.maxRange, max: args.maxRange, targetLogs: TARGET_LOGS });
    while (scan.scannedBlock < scan.targetBlock && !args.isStopped()) {
      const target: number = scan.targetBlock;
      const from = scan.scannedBlock + 1;
      const to = Math.min(target, from + sizer.size() - 1);
      let logs: Awaited<ReturnType<RpcClient["getLogs"]>>;
      try {
        logs = await rpc.getLogs(
          { fromBlock: from, toBlock: to, address: factories, topic0: topics },
          { timeoutMs: args.rangeDeadlineMs ?? RANGE_DEADLINE_MS },
        );
      } catch (error) {
        // A range the node leaves unanswered until the deadline is as good as refused: smaller
        // ones are asked, rather than the same one again. Not when the deadline came while the
        // node failed otherwise (down, overloaded): a smaller range would fail as well.
        const tooLarge = error instanceof RangeTooLargeError || timedOutWaiting(error);
        if (tooLarge && sizer.tooLarge(to - from + 1)) {
          logger.debug(
            {
              dex: names,
              from_block: from,
              to_block: to,
              next_blocks: sizer.size(),
              error: error.message,
              detail: providerDetail(error as Error),
            },
            "factory scan range refused; splitting it",
          );
          continue;
        }
        if (error instanceof RangeTooLargeError) throw new RetryableRpcError(error.message, { cause: error });
        throw error;
      }
      sizer.succeeded(to - from + 1, logs.length, false);
      const pools: Pool[] = [];
      for (const log of logs) {
        const dex = byFactory.get(log.address.toLowerCase());
        const creation = dex && familyOf(dex.protocol).decodeCreation(log);
        if (dex && creation && !args.isKnownPool?.(creation.pool))
          pools.push(poolFromCreation(creation, dex, target));
      }
      const next: FactoryScan = { scannedBlock: to, targetBlock: target };
      const inserted = await withTransaction(db, async (client) => {
        await args.fence?.(client);
        const addresses = await insertPools(client, chainId, pools);
        for (const factory of factories) await saveFactoryScan(client, chainId, factory, next);
        return addresses.length;
      });
      blocksDone += (to - scan.scannedBlock) * factories.length;
      poolsFound += inserted;
      scan = next;
      if (pools.length > 0) args.onPools?.(pools);
      args.onProgress?.(progress());
      logProgress(names, factories, scan, scan.scannedBlock >= scan.targetBlock);
    }
  }
  return { poolsFound };
}

/** The provider's own words under a classified error (viem keeps them as `details`), if any. */
function providerDetail(error: Error): string | undefined {
  for (let e: unknown = error.cause; e instanceof Error; e = e.cause) {
    const details = (e as { details?: unknown }).details;
    if (typeof details === "string" && details.length > 0) return details;
  }
  return undefined;
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
