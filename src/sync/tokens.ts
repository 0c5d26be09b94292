import { decodeDecimals, decodeStringOrBytes32, decodeUint, erc20Selectors } from "../decode/erc20.js";
import type { Hex } from "../decode/types.js";
import type { Token } from "../model/index.js";
import type { RpcClient } from "../rpc/client.js";

/**
 * Reads name, symbol, decimals and totalSupply of tokens with batched eth_calls at one block.
 * A bytes32 name or symbol is decoded to text; a missing function, a revert or malformed data
 * gives null for that field, never an error. Transport failures do throw (the batch retries).
 */
export async function readTokens(
  rpc: RpcClient,
  addresses: readonly Hex[],
  blockNumber: number | "latest",
): Promise<Token[]> {
  if (addresses.length === 0) return [];
  const selectors = [
    erc20Selectors.name,
    erc20Selectors.symbol,
    erc20Selectors.decimals,
    erc20Selectors.totalSupply,
  ];
  const results = await rpc.calls(
    addresses.flatMap((to) => selectors.map((data) => ({ to, data: data as Hex }))),
    blockNumber,
  );
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
