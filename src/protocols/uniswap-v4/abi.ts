import { eventTopics } from "../event-decoder.js";

/** Event signatures of Uniswap V4's PoolManager (v4-core `src/interfaces/IPoolManager.sol`). */
export const v4Signatures = {
  v4Initialize:
    "Initialize(bytes32 indexed id, address indexed currency0, address indexed currency1, uint24 fee, int24 tickSpacing, address hooks, uint160 sqrtPriceX96, int24 tick)",
  v4ModifyLiquidity:
    "ModifyLiquidity(bytes32 indexed id, address indexed sender, int24 tickLower, int24 tickUpper, int256 liquidityDelta, bytes32 salt)",
  v4Swap:
    "Swap(bytes32 indexed id, address indexed sender, int128 amount0, int128 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick, uint24 fee)",
  v4Donate: "Donate(bytes32 indexed id, address indexed sender, uint256 amount0, uint256 amount1)",
} as const;

/** topic0 of each event, lowercase hex. */
export const v4Topics = eventTopics(v4Signatures);

/**
 * Hook permissions are the low 14 bits of the hook's address (v4-core `src/libraries/Hooks.sol`).
 * These four let a hook return deltas, so that what the trader or the provider paid differs from
 * the event's amounts.
 */
export const hookFlags = {
  beforeSwapReturnDelta: 1 << 3,
  afterSwapReturnDelta: 1 << 2,
  afterAddLiquidityReturnDelta: 1 << 1,
  afterRemoveLiquidityReturnDelta: 1 << 0,
} as const;

/** Mask of the return-delta permissions (any of them: the pool's amounts may not be what was paid). */
export const RETURN_DELTA_FLAGS =
  hookFlags.beforeSwapReturnDelta |
  hookFlags.afterSwapReturnDelta |
  hookFlags.afterAddLiquidityReturnDelta |
  hookFlags.afterRemoveLiquidityReturnDelta;

/** The fee field of a pool with a dynamic fee (the fee charged is in each Swap). */
export const DYNAMIC_FEE_FLAG = 0x800000;
