import type { DexConfig } from "../config/schema.js";
import type { Hex, PoolCreation, RawLog } from "../decode/types.js";
import { InconsistentAnswerError } from "../internal/errors.js";
import type { Token } from "../model/index.js";
import {
  creationTopicOf,
  familyOf,
  swapTopics as familySwapTopics,
  poolTopicsOf,
} from "../protocols/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { BlockHeader, TransactionInfo, TransactionSource } from "../rpc/types.js";
import type { BlockInfo } from "./batch.js";
import { fetchBlockData } from "./block-data.js";

/** Everything the node says about one block range, checked for consistency. */
export type RangeData = {
  from: number;
  to: number;
  /** Logs of configured factories and of known or new pools, ascending by (block, log index). */
  logs: RawLog[];
  /** Pools created in the range by configured factories (not known before). */
  creations: { creation: PoolCreation; dex: DexConfig }[];
  /** Full headers: of `from`, `to` and every block of the reorg window, and of others read with them. */
  headers: Map<number, BlockHeader>;
  /** Hash and time of `from`, `to`, every block with a pool log, and every block of the reorg window. */
  blocks: Map<number, BlockInfo>;
  /** Headers to store as the canonical chain: the range's part of the reorg window, and `to`. */
  canonical: BlockHeader[];
  transactions: Map<Hex, TransactionInfo>;
  /**
   * Tokens of the range's new pools read ahead with it (fetch-ahead: while earlier batches
   * commit); whatever else the batch needs is read when it is built.
   */
  tokens?: Token[] | undefined;
};

export type FetchRangeArgs = {
  rpc: RpcClient;
  dexes: readonly DexConfig[];
  /** Is this address a known pool? */
  isKnownPool(address: Hex): boolean;
  knownPools(): Iterable<Hex>;
  knownPoolCount: number;
  from: number;
  to: number;
  /** The last block the indexer will go to now (head − confirmations); the window is (target − reorgWindow, target]. */
  target: number;
  reorgWindow: number;
  /**
   * The hash of block from − 1, which the range must continue (null: not known, no check). A
   * promise when the range before is still being fetched (fetch-ahead.ts): awaited after this
   * range's logs, before its headers and transactions.
   */
  parentHash: Hex | null | Promise<Hex | null>;
  /**
   * Called once the range's logs are read (before its headers and transactions): how many, and
   * the pools created in it. The next range's logs can then be asked (it needs those pools).
   */
  onLogs?: ((found: { logs: number; newPools: readonly Hex[] }) => void) | undefined;
  /** Up to this many addresses go into eth_getLogs' address filter; more: topic filter only. */
  addressFilterLimit: number;
  /** Where the swaps' senders and targets are read (see block-data.ts). */
  transactionSource: TransactionSource;
};

/** The range does not continue the stored chain: the parent of `from` is not our checkpoint. */
export type RangeReorg = { reorg: true; from: number; parentHash: Hex };

/**
 * Fetches a range: one eth_getLogs for the factories' creation events and the pools' events
 * (another for pools created inside the range when an address filter was used), then the headers
 * and swap transactions, batched, from the chain's transaction source (block-data.ts). Checks that every log's block hash is the fetched header's and
 * that the range's first block links to the checkpoint. RangeTooLargeError propagates; answers
 * that contradict each other (a log outside the range or in another block than its header, an
 * unlinked header inside the window, a swap's transaction elsewhere) are an InconsistentAnswerError.
 */
export async function fetchRange(args: FetchRangeArgs): Promise<RangeData | RangeReorg> {
  const { rpc, dexes, from, to } = args;
  const factories = new Map(dexes.map((d) => [d.factory, d]));
  const poolTopic0 = unique(dexes.flatMap((d) => poolTopicsOf(d)));
  const creationTopic0 = unique(dexes.map((d) => creationTopicOf(d)));
  const useAddressFilter = args.knownPoolCount + factories.size <= args.addressFilterLimit;

  let logs = await rpc.getLogs({
    fromBlock: from,
    toBlock: to,
    // Pools inside a manager are not contracts: their logs come with their manager's address.
    address: useAddressFilter ? [...factories.keys(), ...contracts(args.knownPools())] : undefined,
    topic0: [...creationTopic0, ...poolTopic0],
  });

  const creations: RangeData["creations"] = [];
  const newPools = new Set<Hex>();
  for (const log of logs) {
    const dex = factories.get(log.address);
    if (!dex) continue;
    const creation = familyOf(dex.protocol).decodeCreation(log);
    if (!creation || args.isKnownPool(creation.pool) || newPools.has(creation.pool)) continue;
    creations.push({ creation, dex });
    newPools.add(creation.pool);
  }
  logs.sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex);
  // Pools inside a manager need no second call: their logs came with the manager's address.
  const newContracts = creations.filter((c) => c.creation.pool.length === 42);
  if (useAddressFilter && newContracts.length > 0) {
    // The address filter could not name pools created inside the range: ask again for their logs.
    const first = Math.min(...newContracts.map((c) => c.creation.blockNumber));
    const extra = await rpc.getLogs({
      fromBlock: first,
      toBlock: to,
      address: newContracts.map((c) => c.creation.pool),
      topic0: poolTopic0,
    });
    logs = mergeLogs(logs, extra);
  }

  args.onLogs?.({ logs: logs.length, newPools: [...newPools] });

  const outside = logs.find((log) => log.blockNumber < from || log.blockNumber > to);
  if (outside) {
    throw new InconsistentAnswerError(
      "log_outside_range",
      [outside.blockNumber],
      `eth_getLogs over blocks ${from}–${to} answered a log of block ${outside.blockNumber}`,
    );
  }

  const poolTopicSet = new Set<string>(poolTopic0);
  const known = (pool: Hex) => newPools.has(pool) || args.isKnownPool(pool);
  /** A log of a pool that lives inside its factory (a manager): the pool is its first topic. */
  const managedPoolLog = (log: RawLog) => {
    const dex = factories.get(log.address);
    const id = log.topics[1];
    return (
      dex !== undefined &&
      familyOf(dex.protocol).poolsInFactory &&
      id !== undefined &&
      poolTopicSet.has(log.topics[0] ?? "") &&
      known(id)
    );
  };
  const kept = logs.filter((log) =>
    factories.has(log.address)
      ? (log.topics[0] !== undefined && creationTopic0.includes(log.topics[0])) || managedPoolLog(log)
      : poolTopicSet.has(log.topics[0] ?? "") && known(log.address),
  );

  const windowStart = Math.max(from, args.target - args.reorgWindow + 1);
  const linked: number[] = [from];
  for (let n = Math.max(from + 1, windowStart); n <= to; n++) linked.push(n);
  if (linked[linked.length - 1] !== to) linked.push(to);
  const logged: number[] = [];
  const swapTopics = new Set<string>(familySwapTopics);
  const swapLogByTx = new Map<Hex, RawLog>();
  for (const log of kept) {
    if (factories.has(log.address) && !managedPoolLog(log)) continue;
    if (logged[logged.length - 1] !== log.blockNumber) logged.push(log.blockNumber);
    if (swapTopics.has(log.topics[0] ?? "")) swapLogByTx.set(log.transactionHash, log);
  }
  // The range before must be in first (its last hash, for the link check below), which also keeps
  // the block-level reads of one range at a time in flight: the node is not asked more at once.
  const parentHash = await args.parentHash;
  // Headers and transactions at once: viem batches them into shared JSON-RPC requests.
  const { headers, blocks, transactions } = await fetchBlockData({
    rpc,
    source: args.transactionSource,
    linked,
    logged,
    swapLogByTx,
  });

  const first = headers.get(from) as BlockHeader;
  if (parentHash !== null && first.parentHash !== parentHash)
    return { reorg: true, from, parentHash: first.parentHash };
  for (const log of kept) {
    const block = blocks.get(log.blockNumber);
    if (block && log.blockHash !== null && log.blockHash !== block.hash) {
      throw new InconsistentAnswerError(
        "log_block_mismatch",
        [log.blockNumber],
        `a log of block ${log.blockNumber} has block hash ${log.blockHash}, its header ${block.hash}`,
      );
    }
  }
  const canonical: BlockHeader[] = [];
  for (const n of linked) if (n >= windowStart || n === to) canonical.push(headers.get(n) as BlockHeader);
  for (let i = 1; i < canonical.length; i++) {
    const [prev, cur] = [canonical[i - 1] as BlockHeader, canonical[i] as BlockHeader];
    if (cur.number === prev.number + 1 && cur.parentHash !== prev.hash) {
      throw new InconsistentAnswerError(
        "unlinked_header",
        [prev.number, cur.number],
        `block ${cur.number}'s parent hash ${cur.parentHash} is not block ${prev.number}'s hash ${prev.hash}`,
      );
    }
  }
  for (const [hash, log] of swapLogByTx) {
    const tx = transactions.get(hash);
    if (!tx || (tx.blockHash !== null && log.blockHash !== null && tx.blockHash !== log.blockHash)) {
      throw new InconsistentAnswerError(
        "transaction_mismatch",
        [log.blockNumber],
        `transaction ${hash} is not in block ${log.blockNumber} where its log is`,
      );
    }
  }

  return { from, to, logs: kept, creations, headers, blocks, canonical, transactions };
}

/** The contract addresses among pool keys (a pool inside a manager has a 32-byte id instead). */
function contracts(pools: Iterable<Hex>): Hex[] {
  const out: Hex[] = [];
  for (const pool of pools) if (pool.length === 42) out.push(pool);
  return out;
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/** Merges two log lists, ascending by (block, log index), without duplicates. */
function mergeLogs(a: readonly RawLog[], b: readonly RawLog[]): RawLog[] {
  const seen = new Set<string>();
  const out: RawLog[] = [];
  for (const log of [...a, ...b]) {
    const key = `${log.blockNumber}:${log.logIndex}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(log);
  }
  return out.sort((x, y) => x.blockNumber - y.blockNumber || x.logIndex - y.logIndex);
}

/**
 * Consecutive ranges (each continuing the one before: fetched with its last hash as parent) as one,
 * to be committed in one transaction: their logs, creations and transactions in order, their
 * headers and block times, and their canonical headers (an earlier range's last header below the
 * reorg window is stored and dropped again in the same commit).
 */
export function mergeRanges(ranges: readonly RangeData[]): RangeData {
  const [first, ...rest] = ranges;
  if (!first) throw new RangeError("mergeRanges: no range");
  if (rest.length === 0) return first;
  const merged: RangeData = {
    from: first.from,
    to: first.to,
    logs: [...first.logs],
    creations: [...first.creations],
    headers: new Map(first.headers),
    blocks: new Map(first.blocks),
    canonical: [...first.canonical],
    transactions: new Map(first.transactions),
    tokens: [...(first.tokens ?? [])],
  };
  for (const range of rest) {
    if (range.from !== merged.to + 1)
      throw new RangeError(`mergeRanges: block ${range.from} does not follow block ${merged.to}`);
    merged.to = range.to;
    for (const log of range.logs) merged.logs.push(log);
    for (const creation of range.creations) merged.creations.push(creation);
    for (const [n, header] of range.headers) merged.headers.set(n, header);
    for (const [n, block] of range.blocks) merged.blocks.set(n, block);
    for (const header of range.canonical) merged.canonical.push(header);
    for (const [hash, tx] of range.transactions) merged.transactions.set(hash, tx);
    for (const token of range.tokens ?? []) merged.tokens?.push(token);
  }
  return merged;
}
