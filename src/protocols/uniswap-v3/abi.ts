import { eventTopics } from "../event-decoder.js";

/**
 * Event signatures of a Uniswap V3-style factory and pool. PancakeSwap V3's Swap has two more
 * fields (protocol fees), so its topic0 differs from Uniswap V3's; every other event has the same
 * signature on both.
 */
export const v3Signatures = {
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

/** topic0 of each event, lowercase hex. */
export const v3Topics = eventTopics(v3Signatures);
