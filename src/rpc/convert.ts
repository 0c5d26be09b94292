/**
 * The JSON-RPC answers the client reads, as the node sends them (hex quantities, mixed-case
 * hashes), and their conversion to the project's types: lower-case hashes, numbers.
 */
import type { Hex, RawLog } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import type { BlockHeader, BlockTransactions, TransactionInfo } from "./types.js";

export type RpcBlock = { number: string; hash: string; parentHash: string; timestamp: string };
export type RpcLog = {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string | null;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
  removed?: boolean;
};
export type RpcTx = {
  hash: string;
  from: string;
  to: string | null;
  blockHash: string | null;
  blockNumber: string | null;
  transactionIndex: string | null;
};

/** A receipt's fields the indexer reads (eth_getBlockReceipts). */
export type RpcReceipt = {
  transactionHash: string;
  transactionIndex: string;
  blockHash: string | null;
  blockNumber: string | null;
  from: string;
  to: string | null;
  logs?: { blockTimestamp?: string }[];
};
/** eth_getBlockByNumber(n, true): transactions as objects (a hash string: the node ignored `true`). */
export type RpcFullBlock = RpcBlock & { transactions?: (RpcTx | string)[] };

export const toQuantity = (n: number): Hex => `0x${n.toString(16)}`;
export const blockTag = (block: number | "latest"): Hex | "latest" =>
  block === "latest" ? "latest" : toQuantity(block);
export const lower = (s: string): Hex => s.toLowerCase() as Hex;

export function toHeader(raw: RpcBlock): BlockHeader {
  if (!raw?.hash) throw new BaseError("eth_getBlockByNumber answered a block without a hash");
  return {
    number: Number(raw.number),
    hash: lower(raw.hash),
    parentHash: lower(raw.parentHash),
    timestamp: Number(raw.timestamp),
  };
}

export function toRawLog(raw: RpcLog): RawLog {
  return {
    address: lower(raw.address),
    topics: raw.topics.map(lower),
    data: lower(raw.data),
    blockNumber: Number(raw.blockNumber),
    blockHash: raw.blockHash ? lower(raw.blockHash) : null,
    transactionHash: lower(raw.transactionHash),
    transactionIndex: Number(raw.transactionIndex),
    logIndex: Number(raw.logIndex),
  };
}

/**
 * A block's receipts → its hash, its time (the first log's `blockTimestamp`; 0, which geth 1.16.1
 * answers in some paths, counts as missing) and the wanted transactions. Only those are converted.
 */
export function fromReceipts(
  number: number,
  receipts: readonly RpcReceipt[],
  wanted: (hash: Hex) => boolean,
) {
  let hash: Hex | null = null;
  let timestamp: number | null = null;
  const transactions: TransactionInfo[] = [];
  for (const receipt of receipts) {
    if (hash === null && receipt.blockHash) hash = lower(receipt.blockHash);
    if (timestamp === null && receipt.logs && receipt.logs.length > 0) {
      const stamp = receipt.logs[0]?.blockTimestamp;
      if (stamp !== undefined && Number(stamp) > 0) timestamp = Number(stamp);
    }
    const txHash = lower(receipt.transactionHash);
    if (!wanted(txHash)) continue;
    transactions.push({
      hash: txHash,
      from: lower(receipt.from),
      to: receipt.to ? lower(receipt.to) : null,
      blockHash: receipt.blockHash ? lower(receipt.blockHash) : null,
      blockNumber: receipt.blockNumber === null ? null : Number(receipt.blockNumber),
      transactionIndex: Number(receipt.transactionIndex),
    });
  }
  return { number, hash, parentHash: null, timestamp, transactions } satisfies BlockTransactions;
}

/** A full block → its header fields and the wanted transactions (only those are converted). */
export function fromFullBlock(raw: RpcFullBlock, wanted: (hash: Hex) => boolean): BlockTransactions {
  const header = toHeader(raw);
  const transactions: TransactionInfo[] = [];
  for (const tx of raw.transactions ?? []) {
    if (typeof tx === "string") continue;
    const txHash = lower(tx.hash);
    if (wanted(txHash)) transactions.push(toTransaction(tx));
  }
  return { ...header, transactions };
}

export function toTransaction(raw: RpcTx): TransactionInfo {
  return {
    hash: lower(raw.hash),
    from: lower(raw.from),
    to: raw.to ? lower(raw.to) : null,
    blockHash: raw.blockHash ? lower(raw.blockHash) : null,
    blockNumber: raw.blockNumber === null ? null : Number(raw.blockNumber),
    transactionIndex: raw.transactionIndex === null ? null : Number(raw.transactionIndex),
  };
}
