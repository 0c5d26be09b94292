import { keccak256, stringToBytes } from "viem";
import type { Hex, RawLog } from "../decode/types.js";
import type { Token } from "../model/index.js";
import { buildBatch } from "../sync/batch.js";
import type { Pool } from "../sync/pools.js";
import { logAt } from "./encode-log.js";

/**
 * The canonical form of an event as its contract publishes it ("event Swap(address indexed
 * sender, …)" is "Swap(address,…)"): types only, no names, no spaces.
 */
export function canonicalSignature(published: string): string {
  const match = /^(?:event )?(\w+)\((.*)\)$/.exec(published);
  if (!match) throw new Error(`not an event signature: ${published}`);
  const types = (match[2] as string).split(",").map((param) => param.trim().split(" ")[0]);
  return `${match[1]}(${types.join(",")})`;
}

/** topic0 of a published event: keccak-256 of its canonical form (not viem's parsing of the text). */
export const publishedTopic = (published: string): Hex =>
  keccak256(stringToBytes(canonicalSignature(published)));

/** The trader of the tests' transactions (their sender and the swaps' recipient). */
export const user = "0x00000000000000000000000000000000000000ee" as Hex;

/** A transaction hash of the tests' logs from a short prefix ("0x01" is 0x0100…00). */
export const txHash = (tx: string): Hex => tx.padEnd(66, "0") as Hex;

/** The block the tests' logs are in. */
const block = { number: 2, hash: "0xb2" as Hex, timestamp: 1_700_000_000 };

/**
 * An encoder of test logs in block 2, numbered in the order they are made: `signature` (with or
 * without `event`) and `args` by input name, at `address`, in transaction `tx`.
 */
export function logWriter(): (
  signature: string,
  args: Record<string, unknown>,
  address: Hex,
  tx?: string,
) => RawLog {
  let logIndex = 0;
  return (signature, args, address, tx = "0x01") =>
    logAt(signature, args, {
      address,
      blockNumber: block.number,
      logIndex: logIndex++,
      transactionHash: txHash(tx),
    });
}

/**
 * buildBatch over logs of block 2, whose transactions (`txs`, by their prefixes) `from` (the
 * tests' `user`) sent to `to`, each its block's first.
 */
export function buildBlock(input: {
  logs: RawLog[];
  pools: Map<Hex, Pool>;
  tokens: Map<Hex, Token>;
  txs: string[];
  from: Hex;
  to: Hex;
}): ReturnType<typeof buildBatch> {
  const { from, to } = input;
  return buildBatch({
    logs: input.logs,
    pools: input.pools,
    tokens: input.tokens,
    blocks: new Map([[block.number, { hash: block.hash, timestamp: block.timestamp }]]),
    transactions: new Map(
      input.txs.map((tx) => {
        const hash = txHash(tx);
        return [
          hash,
          { hash, from, to, blockHash: block.hash, blockNumber: block.number, transactionIndex: 0 },
        ];
      }),
    ),
  });
}

/** A token of the tests: no supply. */
export const testToken = (address: Hex, symbol: string, decimals: number, name = symbol): [Hex, Token] => [
  address,
  { address, name, symbol, decimals, totalSupply: null },
];
