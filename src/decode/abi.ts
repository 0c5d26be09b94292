import { toEventSelector } from "viem";

/**
 * Event signatures of the Uniswap V2/V3-style contracts the indexer reads, and their topic0.
 * PancakeSwap V3's Swap has two more fields (protocol fees), so its topic0 differs from
 * Uniswap V3's; every other V3 event has the same signature on both.
 */
export const eventSignatures = {
  v2PairCreated: "PairCreated(address indexed token0, address indexed token1, address pair, uint256)",
  v2Sync: "Sync(uint112 reserve0, uint112 reserve1)",
  v2Swap:
    "Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
  v2Mint: "Mint(address indexed sender, uint256 amount0, uint256 amount1)",
  v2Burn: "Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to)",
  v3PoolCreated:
    "PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)",
  v3Initialize: "Initialize(uint160 sqrtPriceX96, int24 tick)",
  v3Swap:
    "Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)",
  pancakeV3Swap:
    "Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint128 protocolFeesToken0, uint128 protocolFeesToken1)",
  v3Mint:
    "Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)",
  v3Burn:
    "Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)",
  v3Collect:
    "Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount0, uint128 amount1)",
  v3CollectProtocol:
    "CollectProtocol(address indexed sender, address indexed recipient, uint128 amount0, uint128 amount1)",
  v3Flash:
    "Flash(address indexed sender, address indexed recipient, uint256 amount0, uint256 amount1, uint256 paid0, uint256 paid1)",
} as const;

export type EventName = keyof typeof eventSignatures;

/** topic0 of each event, lowercase hex. */
export const topics = Object.fromEntries(
  Object.entries(eventSignatures).map(([name, signature]) => [name, toEventSelector(`event ${signature}`)]),
) as Record<EventName, `0x${string}`>;

/** The topic0s a pool of this protocol (and V3 Swap layout) emits and the indexer decodes. */
export function poolTopics(protocol: "v2" | "v3", swapEvent: "uniswap" | "pancake"): `0x${string}`[] {
  if (protocol === "v2") return [topics.v2Sync, topics.v2Swap, topics.v2Mint, topics.v2Burn];
  return [
    topics.v3Initialize,
    swapEvent === "pancake" ? topics.pancakeV3Swap : topics.v3Swap,
    topics.v3Mint,
    topics.v3Burn,
    topics.v3Collect,
    topics.v3CollectProtocol,
    topics.v3Flash,
  ];
}

/** The topic0 of a factory's pool-creation event. */
export function creationTopic(protocol: "v2" | "v3"): `0x${string}` {
  return protocol === "v2" ? topics.v2PairCreated : topics.v3PoolCreated;
}
