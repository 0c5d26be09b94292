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
