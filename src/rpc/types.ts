import type { Hex } from "../decode/types.js";

/** The fields of a block header the indexer uses. */
export type BlockHeader = {
  number: number;
  hash: Hex;
  parentHash: Hex;
  /** Seconds since the epoch. */
  timestamp: number;
};

/** The fields of a transaction the indexer stores with a swap. */
export type TransactionInfo = {
  hash: Hex;
  from: Hex;
  /** Null for a contract creation. */
  to: Hex | null;
  blockHash: Hex | null;
  blockNumber: number | null;
  transactionIndex: number | null;
};

export type LogFilter = {
  fromBlock: number;
  toBlock: number;
  /** Omitted: logs of every address (filtered by topics only). */
  address?: Hex[] | undefined;
  /** topics[0]: any of these. */
  topic0: Hex[];
};

/** An eth_call to make; `result` is null when it reverted. */
export type CallRequest = { to: Hex; data: Hex };

/**
 * What one block-level answer (a block's receipts, or the block with its transactions) says of
 * a block: its hash and time, and the transactions asked for, found in it.
 */
export type BlockTransactions = {
  number: number;
  /** Null when the answer names no block (receipts of an empty block, an empty answer). */
  hash: Hex | null;
  /** A full block's parent hash; null from receipts, which carry none. */
  parentHash: Hex | null;
  /**
   * Seconds since the epoch: a full block's timestamp, or the receipts' logs' `blockTimestamp`
   * (geth ≥ 1.16, reth, Erigon, Nethermind and Besu give it); null when the answer did not say.
   */
  timestamp: number | null;
  /** The wanted transactions of the block, in block order; a wanted one the answer lacks is absent. */
  transactions: TransactionInfo[];
};

/**
 * Where the indexer reads swaps' senders and targets: a block's receipts (eth_getBlockReceipts),
 * the block with its transactions (eth_getBlockByNumber(n, true)), or each transaction by hash.
 */
export type TransactionSource = "blockReceipts" | "fullBlocks" | "transactions";
export const transactionSources: readonly TransactionSource[] = [
  "blockReceipts",
  "fullBlocks",
  "transactions",
];
