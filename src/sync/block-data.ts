import type { Hex, RawLog } from "../decode/types.js";
import type { RpcClient } from "../rpc/client.js";
import type { BlockHeader, BlockTransactions, TransactionInfo, TransactionSource } from "../rpc/types.js";
import type { BlockInfo } from "./batch.js";

/** The headers, block times and swap transactions of a range. */
export type BlockData = {
  /** Full headers (parent hash included): the ones asked for, and full blocks'. */
  headers: Map<number, BlockHeader>;
  /** Hash and time of every block asked for: the headers, and blocks known from their receipts. */
  blocks: Map<number, BlockInfo>;
  /** The swaps' transactions by hash. */
  transactions: Map<Hex, TransactionInfo>;
};

export type BlockDataArgs = {
  rpc: RpcClient;
  source: TransactionSource;
  /** Blocks whose full header is needed (parent hash): the range's first and last, the reorg window. */
  linked: readonly number[];
  /** Blocks with pool logs: their hash and time are needed. */
  logged: readonly number[];
  /** The swaps' logs by transaction hash: their senders and targets are needed. */
  swapLogByTx: ReadonlyMap<Hex, RawLog>;
};

/**
 * Reads a range's headers and swap transactions from the source the chain uses:
 *
 * - `transactions`: the headers of `linked` and `logged` blocks, and eth_getTransactionByHash per
 *   swap (the two batched together).
 * - `fullBlocks`: eth_getBlockByNumber(n, true) of each block with swaps, which is also its header;
 *   headers of the other blocks.
 * - `blockReceipts`: eth_getBlockReceipts of each block with swaps, which gives its hash and (from
 *   the logs' blockTimestamp) its time; headers of the other blocks, and of the `linked` ones
 *   (receipts carry no parent hash).
 *
 * Whatever a block-level answer left out (no answer for a block, no time in its receipts, a swap's
 * transaction missing from it) is then read the per-transaction way, so every source gives the
 * same data. Answers of another block than the logs' are left for the caller's consistency checks.
 */
export async function fetchBlockData(args: BlockDataArgs): Promise<BlockData> {
  const { rpc, source, swapLogByTx } = args;
  const headers = new Map<number, BlockHeader>();
  const blocks = new Map<number, BlockInfo>();
  const transactions = new Map<Hex, TransactionInfo>();
  const addHeaders = (list: readonly BlockHeader[]) => {
    for (const header of list) {
      headers.set(header.number, header);
      blocks.set(header.number, header);
    }
  };
  const addTransactions = (found: ReadonlyMap<Hex, TransactionInfo>) => {
    for (const [hash, tx] of found) transactions.set(hash, tx);
  };

  if (source === "transactions" || swapLogByTx.size === 0) {
    const [list, found] = await Promise.all([
      rpc.getBlocks(sortedUnion(args.linked, args.logged)),
      swapLogByTx.size > 0 ? rpc.getTransactions([...swapLogByTx.keys()]) : new Map<Hex, TransactionInfo>(),
    ]);
    addHeaders(list);
    addTransactions(found);
    return { headers, blocks, transactions };
  }

  const swapBlocks: number[] = [];
  let last = -1;
  // The swaps' logs are in (block, log index) order: their blocks come ascending.
  for (const log of swapLogByTx.values()) {
    if (log.blockNumber !== last) swapBlocks.push(log.blockNumber);
    last = log.blockNumber;
  }
  const swapBlockSet = new Set(swapBlocks);
  const linkedSet = new Set(args.linked);
  // A full block is its own header; receipts stand in for a header only where no parent hash is needed.
  const needsHeader = (n: number) => !swapBlockSet.has(n) || (source === "blockReceipts" && linkedSet.has(n));
  const headerNumbers = sortedUnion(args.linked, args.logged).filter(needsHeader);
  const wanted = (hash: Hex) => swapLogByTx.has(hash);
  const [list, answers] = await Promise.all([
    rpc.getBlocks(headerNumbers),
    source === "fullBlocks"
      ? rpc.getFullBlocks(swapBlocks, wanted)
      : rpc.getBlockReceipts(swapBlocks, wanted),
  ]);
  addHeaders(list);

  const untimed: number[] = [];
  for (let i = 0; i < swapBlocks.length; i++) {
    const n = swapBlocks[i] as number;
    const answer = answers[i] as BlockTransactions | null;
    if (answer === null) {
      if (!blocks.has(n)) untimed.push(n);
      continue;
    }
    for (const tx of answer.transactions) transactions.set(tx.hash, tx);
    if (answer.hash === null || answer.timestamp === null) {
      if (!blocks.has(n)) untimed.push(n);
    } else if (answer.parentHash !== null) {
      const header = {
        number: n,
        hash: answer.hash,
        parentHash: answer.parentHash,
        timestamp: answer.timestamp,
      };
      headers.set(n, header);
      blocks.set(n, header);
    } else if (!blocks.has(n)) {
      blocks.set(n, { hash: answer.hash, timestamp: answer.timestamp });
    }
  }

  const missing: Hex[] = [];
  for (const hash of swapLogByTx.keys()) if (!transactions.has(hash)) missing.push(hash);
  if (untimed.length > 0 || missing.length > 0) {
    const [more, found] = await Promise.all([
      untimed.length > 0 ? rpc.getBlocks(untimed) : [],
      missing.length > 0 ? rpc.getTransactions(missing) : new Map<Hex, TransactionInfo>(),
    ]);
    addHeaders(more);
    addTransactions(found);
  }
  return { headers, blocks, transactions };
}

/** The numbers of both lists, ascending, each once. */
function sortedUnion(a: readonly number[], b: readonly number[]): number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}
