import { decodeDecimals, decodeStringOrBytes32, decodeUint, erc20Selectors } from "../decode/erc20.js";
import type { Hex } from "../decode/types.js";
import { BaseError } from "../internal/errors.js";
import type { Token } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";
import type { CallRequest } from "../rpc/types.js";

/** Calls per Multicall3 aggregate3: 100 tokens' four reads, well under a node's eth_call gas cap. */
const MULTICALL_CHUNK = 400;

/**
 * Reads name, symbol, decimals and totalSupply of tokens at one block: with batched eth_calls, or
 * (`multicall`, where Multicall3 is deployed) in one eth_call per 100 tokens through aggregate3,
 * each call allowed to fail, which gives the same answers for a fraction of the JSON-RPC calls. A
 * bytes32 name or symbol is decoded to text; a missing function, a revert or malformed data gives
 * null for that field, never an error. Transport failures do throw (the batch retries).
 */
export async function readTokens(
  rpc: RpcClient,
  addresses: readonly Hex[],
  blockNumber: number | "latest",
  how: { multicall?: boolean; native?: Token } = {},
): Promise<Token[]> {
  // The chain's native coin (address zero, a V4 currency) is no contract: it is answered as given.
  const native = how.native;
  if (native && addresses.includes(native.address)) {
    const others = await readTokens(
      rpc,
      addresses.filter((a) => a !== native.address),
      blockNumber,
      { multicall: how.multicall },
    );
    const byAddress = new Map(others.map((t) => [t.address, t]));
    return addresses.map((a) => (a === native.address ? native : (byAddress.get(a) as Token)));
  }
  if (addresses.length === 0) return [];
  const selectors = [
    erc20Selectors.name,
    erc20Selectors.symbol,
    erc20Selectors.decimals,
    erc20Selectors.totalSupply,
  ];
  const calls = addresses.flatMap((to) => selectors.map((data) => ({ to, data: data as Hex })));
  const results = how.multicall
    ? await callsViaMulticall(rpc, calls, blockNumber)
    : await rpc.calls(calls, blockNumber);
  return addresses.map((address, i) => {
    const [name, symbol, decimals, totalSupply] = results.slice(i * 4, i * 4 + 4);
    return {
      address,
      name: name ? decodeStringOrBytes32(name) : null,
      symbol: symbol ? decodeStringOrBytes32(symbol) : null,
      decimals: decimals ? decodeDecimals(decimals) : null,
      totalSupply: totalSupply ? decodeUint(totalSupply) : null,
    };
  });
}

/** Reads totalSupply of tokens at the head (the periodic refresh). */
export async function readSupplies(
  rpc: RpcClient,
  addresses: readonly Hex[],
): Promise<{ address: Hex; totalSupply: bigint | null }[]> {
  const results = await rpc.calls(
    addresses.map((to) => ({ to, data: erc20Selectors.totalSupply as Hex })),
    "latest",
  );
  return addresses.map((address, i) => {
    const data = results[i];
    return { address, totalSupply: data ? decodeUint(data) : null };
  });
}

/**
 * The calls through Multicall3, MULTICALL_CHUNK at a time (the chunks' eth_calls share a JSON-RPC
 * batch). A chunk whose aggregate3 fails as a whole for a reason retrying cannot fix (a token that
 * burns the node's gas cap) is read with plain eth_calls instead.
 */
async function callsViaMulticall(
  rpc: RpcClient,
  calls: readonly CallRequest[],
  blockNumber: number | "latest",
): Promise<(Hex | null)[]> {
  const chunks: CallRequest[][] = [];
  for (let i = 0; i < calls.length; i += MULTICALL_CHUNK) chunks.push(calls.slice(i, i + MULTICALL_CHUNK));
  const answers = await Promise.all(
    chunks.map((chunk) =>
      rpc.multicall(chunk, blockNumber).catch((error: unknown) => {
        if (error instanceof BaseError && !error.retryable) return rpc.calls(chunk, blockNumber);
        throw error;
      }),
    ),
  );
  return answers.flat();
}
