import { eventTopics } from "../event-decoder.js";

/**
 * Event signatures of Algebra's factory and pools (Algebra V1: QuickSwap V3, THENA Fusion; Algebra
 * Integral). Algebra V1's and Integral 1.0/1.1's pool events have Uniswap V3's exact types, so
 * their topics are V3's; Integral 1.2.1-1.2.5's Swap adds the fees of the swap and their Burn the
 * plugin's fee (from 1.2.9 these are separate SwapFee/BurnFee events beside V3-typed Swap and Burn).
 */
export const algebraSignatures = {
  algebraPool: "Pool(address indexed token0, address indexed token1, address pool)",
  integralSwap:
    "Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)",
  integralBurn:
    "Burn(address indexed owner, int24 indexed bottomTick, int24 indexed topTick, uint128 liquidityAmount, uint256 amount0, uint256 amount1, uint24 pluginFee)",
  algebraFee: "Fee(uint16 fee)",
} as const;

/** topic0 of each event, lowercase hex. */
export const algebraTopics = eventTopics(algebraSignatures);
