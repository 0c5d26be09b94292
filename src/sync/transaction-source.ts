import { BaseError } from "../internal/errors.js";
import type { RpcClient } from "../rpc/client.js";
import type { TransactionSource } from "../rpc/types.js";

/** What the probe found: the source to use and why, for the start-up log. */
export type ProbedSource = { source: TransactionSource; reason: string };

/** The JSON-RPC method behind each source. */
export const sourceMethod: Record<TransactionSource, string> = {
  blockReceipts: "eth_getBlockReceipts",
  fullBlocks: "eth_getBlockByNumber",
  transactions: "eth_getTransactionByHash",
};

/** One block-level method asked of the node: does it serve it, and why we think so. */
type Probe = { served: boolean; why: string };

/**
 * Which block-level transaction data the node serves, asked once of block `block` (the head at
 * start). In order of preference:
 *
 * 1. `fullBlocks`: eth_getBlockByNumber(n, true) answers transaction objects: one call per block
 *    with swaps gives its header (hash, parent, time) and its senders and targets. Its answer is
 *    the leaner one: a receipt repeats every log of its transaction and a 256-byte bloom, and
 *    carries no parent hash (the headers of the blocks whose links are checked are then asked
 *    besides). On the uniswap-v2 shape the ingestion reads full blocks 1.4× faster than receipts
 *    (BENCHMARKS.md), and providers that bill by method price eth_getBlockReceipts far above
 *    eth_getBlockByNumber.
 * 2. `blockReceipts`: eth_getBlockReceipts answers a list, its logs with `blockTimestamp` (else a
 *    header per block besides), when full blocks are not served.
 * 3. `transactions`: eth_getTransactionByHash per swap.
 *
 * An error that retrying cannot fix (the method does not exist, invalid parameters) means "not
 * served"; a retryable one (the node is down) propagates: the chain restarts and probes again.
 */
export async function probeTransactionSource(rpc: RpcClient, block: number): Promise<ProbedSource> {
  const full = await probeFullBlocks(rpc, block);
  if (full.served) return { source: "fullBlocks", reason: full.why };
  const receipts = await probeReceipts(rpc, block);
  if (receipts.served) return { source: "blockReceipts", reason: `${full.why}; ${receipts.why}` };
  return { source: "transactions", reason: `${full.why}; ${receipts.why}` };
}

/** Null when the node serves `source` (asked of block `block`), else why not. */
export async function checkTransactionSource(
  rpc: RpcClient,
  block: number,
  source: TransactionSource,
): Promise<string | null> {
  if (source === "transactions") return null;
  const probe =
    source === "blockReceipts" ? await probeReceipts(rpc, block) : await probeFullBlocks(rpc, block);
  return probe.served ? null : probe.why;
}

type ProbeReceipt = { logs?: { blockTimestamp?: unknown }[] } | null;

async function probeReceipts(rpc: RpcClient, block: number): Promise<Probe> {
  try {
    const receipts = await rpc.request<unknown>("eth_getBlockReceipts", [quantity(block)]);
    if (!Array.isArray(receipts)) {
      const what = receipts === null ? "null" : "no list";
      return { served: false, why: `eth_getBlockReceipts answered ${what} for block ${block}` };
    }
    const logged = (receipts as ProbeReceipt[]).find((r) => (r?.logs?.length ?? 0) > 0);
    if (!logged) {
      const why = `eth_getBlockReceipts answers (block ${block} has no logs to show blockTimestamp)`;
      return { served: true, why };
    }
    const stamp = logged.logs?.[0]?.blockTimestamp;
    return typeof stamp === "string" && Number(stamp) > 0
      ? { served: true, why: "eth_getBlockReceipts answers, its logs with blockTimestamp" }
      : { served: true, why: "eth_getBlockReceipts answers, its logs without blockTimestamp" };
  } catch (error) {
    if (!servedNot(error)) throw error;
    return { served: false, why: `eth_getBlockReceipts: ${(error as Error).message}` };
  }
}

async function probeFullBlocks(rpc: RpcClient, block: number): Promise<Probe> {
  try {
    const full = await rpc.request<{ transactions?: unknown[] } | null>("eth_getBlockByNumber", [
      quantity(block),
      true,
    ]);
    const txs = full?.transactions;
    if (Array.isArray(txs) && txs.every((tx) => tx !== null && typeof tx === "object"))
      return { served: true, why: "eth_getBlockByNumber(n, true) answers transactions" };
    const what = Array.isArray(txs) ? "transaction hashes" : "no block";
    return { served: false, why: `eth_getBlockByNumber(n, true) answered ${what} for block ${block}` };
  } catch (error) {
    if (!servedNot(error)) throw error;
    return { served: false, why: `eth_getBlockByNumber(n, true): ${(error as Error).message}` };
  }
}

const quantity = (n: number) => `0x${n.toString(16)}`;

/** An error that says the node does not serve the call (asking again would not change it). */
const servedNot = (error: unknown): boolean => error instanceof BaseError && !error.retryable;
