import { eventTopics } from "../event-decoder.js";

/**
 * Event signatures of PancakeSwap Infinity's pool managers (BNB Chain): the CLPoolManager
 * (concentrated liquidity, as Uniswap V4) and the BinPoolManager (liquidity in discrete price
 * bins). Both hold their pools' tokens in the shared Vault.
 */
export const infinitySignatures = {
  clInitialize:
    "Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint160 sqrtPriceX96, int24 tick)",
  clModifyLiquidity:
    "ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
  clSwap:
    "Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee, uint16 protocolFee)",
  clDonate:
    "Donate(bytes32 indexed id, address indexed sender, uint256 amount0, uint256 amount1, int24 tick)",
  binInitialize:
    "Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, address hooks, uint24 fee, bytes32 parameters, uint24 activeId)",
  binSwap:
    "Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint24 activeId, uint24 fee, uint16 protocolFee)",
  binMint:
    "Mint(bytes32 indexed id, address indexed sender, uint256[] ids, bytes32 salt, bytes32[] amounts, bytes32 compositionFee, bytes32 feeToProtocol)",
  binBurn: "Burn(bytes32 indexed id, address indexed sender, uint256[] ids, bytes32 salt, bytes32[] amounts)",
} as const;

/** topic0 of each event, lowercase hex. */
export const infinityTopics = eventTopics(infinitySignatures);

/**
 * Hook permissions are the low 16 bits of a pool's `parameters`; these let the hook return
 * deltas on a swap (bits 10 and 11), so that the Swap's amounts may not be what the trader paid.
 */
export const INFINITY_SWAP_RETURNS_DELTA = (1 << 10) | (1 << 11);
