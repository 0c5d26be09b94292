import { type Address, type Hex, numberToHex } from "viem";
import { BaseError } from "../internal/errors.js";
import type { DevnetRpc, RpcCall } from "./rpc.js";

/** A transaction from one of the node's unlocked accounts; the node signs it. */
export type TxRequest = {
  from: Address;
  to?: Address;
  data: Hex;
  value?: bigint;
  /** Explicit, so that the node never estimates (estimating runs the transaction once more). */
  gas: bigint;
  /** What it does, for error messages ("approve USDC for the V2 router"). */
  label: string;
};

export type TxReceipt = {
  transactionHash: Hex;
  status: "0x1" | "0x0";
  blockNumber: Hex;
  gasUsed: Hex;
  to: Address | null;
  from: Address;
  contractAddress: Address | null;
  logs: { address: Address; topics: Hex[]; data: Hex; logIndex: Hex }[];
};

/** A transaction the node mined but reverted, or never mined. */
export class DevnetTxError extends BaseError {
  override name = "DevnetTxError";
}

/** Next nonce per account, kept by the sender so that a whole block is sent in one batch. */
export type NonceBook = Map<Address, number>;

/** Reads the next nonce of each account (pending transactions included). */
export async function readNonces(rpc: DevnetRpc, accounts: readonly Address[]): Promise<NonceBook> {
  const counts = await rpc.batch<Hex>(
    accounts.map((account) => ({ method: "eth_getTransactionCount", params: [account, "pending"] })),
  );
  return new Map(accounts.map((account, i) => [account.toLowerCase() as Address, Number(counts[i])]));
}

/** 1 gwei: gas is nearly free at a zero base fee; only the ordering part below matters. */
const baseGasPrice = 1_000_000_000n;

/**
 * The eth_sendTransaction calls of transactions to be mined in this order, with their nonces
 * taken from the book. The node's "priority" mempool orders a block by fee, not by arrival (and
 * a stock Hardhat node even runs a batch's requests concurrently), so every transaction gets a
 * unique, decreasing gas price: the block's order is the list's. Nonces are assigned in the same
 * order, so each sender's sequence agrees.
 */
export function sendTransactionCalls(nonces: NonceBook, txs: readonly TxRequest[]): RpcCall[] {
  return txs.map((tx, i) => {
    const from = tx.from.toLowerCase() as Address;
    const nonce = nonces.get(from);
    if (nonce === undefined) throw new DevnetTxError(`no nonce known for ${from} (${tx.label})`);
    nonces.set(from, nonce + 1);
    return {
      method: "eth_sendTransaction",
      params: [
        {
          from,
          ...(tx.to ? { to: tx.to } : {}),
          data: tx.data,
          value: numberToHex(tx.value ?? 0n),
          gas: numberToHex(tx.gas),
          gasPrice: numberToHex(baseGasPrice + BigInt(txs.length - i)),
          nonce: numberToHex(nonce),
        },
      ],
    };
  });
}

/**
 * Checks the answers of sendTransactionCalls: a refused transaction throws, after the nonce
 * book is read again (the refusal left a gap that would stall its sender).
 */
export async function checkSent(
  rpc: DevnetRpc,
  nonces: NonceBook,
  txs: readonly TxRequest[],
  results: readonly unknown[],
): Promise<Hex[]> {
  const failed = results.findIndex((r) => typeof r !== "string");
  if (failed >= 0) {
    const senders = [...new Set(txs.map((tx) => tx.from.toLowerCase() as Address))];
    const fresh = await readNonces(rpc, senders);
    for (const [account, nonce] of fresh) nonces.set(account, nonce);
    throw new DevnetTxError(`${txs[failed]?.label}: refused by the node: ${String(results[failed])}`, {
      cause: results[failed],
    });
  }
  return results as Hex[];
}

/** Sends transactions in one JSON-RPC batch, to be mined in this order; nothing is mined here. */
export async function sendTransactions(
  rpc: DevnetRpc,
  nonces: NonceBook,
  txs: readonly TxRequest[],
): Promise<Hex[]> {
  if (txs.length === 0) return [];
  const results = await rpc.batchSettled<Hex>(sendTransactionCalls(nonces, txs));
  return checkSent(rpc, nonces, txs, results);
}

/** Mines one block, at `timestamp` (unix seconds) when given. */
export async function mineBlock(rpc: DevnetRpc, timestamp?: number): Promise<void> {
  await rpc.request("evm_mine", timestamp === undefined ? [] : [timestamp]);
}

/**
 * Sends transactions, mines until all are included (a block holds what its gas limit allows)
 * and checks that none reverted: the step to use when later steps depend on these. With
 * `perBlock`, at most that many are sent before each block is mined (in order): anvil copies a
 * block's whole body to answer each receipt in it, so checking n transactions of one block costs
 * n² (seconds for a deployment's thousands). `timestamp` dates the first block.
 */
export async function executeTransactions(
  rpc: DevnetRpc,
  nonces: NonceBook,
  txs: readonly TxRequest[],
  options: { timestamp?: number; perBlock?: number } = {},
): Promise<TxReceipt[]> {
  const perBlock = Math.max(1, options.perBlock ?? txs.length);
  const receipts: TxReceipt[] = [];
  for (let start = 0; start < txs.length; start += perBlock) {
    const timestamp = start === 0 ? options.timestamp : undefined;
    receipts.push(...(await executeInBlocks(rpc, nonces, txs.slice(start, start + perBlock), timestamp)));
  }
  return receipts;
}

async function executeInBlocks(
  rpc: DevnetRpc,
  nonces: NonceBook,
  txs: readonly TxRequest[],
  timestamp: number | undefined,
): Promise<TxReceipt[]> {
  const hashes = await sendTransactions(rpc, nonces, txs);
  const receipts: (TxReceipt | null)[] = hashes.map(() => null);
  for (let round = 0; round < 100 && receipts.some((r) => r === null); round++) {
    await mineBlock(rpc, round === 0 ? timestamp : undefined);
    const missing = receipts.flatMap((r, i) => (r === null ? [i] : []));
    const fetched = await rpc.batch<TxReceipt | null>(
      missing.map((i) => ({ method: "eth_getTransactionReceipt", params: [hashes[i]] })),
    );
    missing.forEach((index, j) => {
      receipts[index] = fetched[j] ?? null;
    });
  }
  receipts.forEach((receipt, i) => {
    const label = txs[i]?.label ?? "transaction";
    if (receipt === null) throw new DevnetTxError(`${label}: not mined after 100 blocks`);
    if (receipt.status !== "0x1") throw new DevnetTxError(`${label}: reverted (${receipt.transactionHash})`);
  });
  return receipts as TxReceipt[];
}
