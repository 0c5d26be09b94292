import { toEventSelector } from "viem";

/**
 * Event signatures of Algebra's factory and pools (Algebra V1: QuickSwap V3, THENA Fusion; Algebra
 * Integral). Algebra V1's and Integral 1.0/1.1's pool events have Uniswap V3's exact types, so
 * their topics are V3's; Integral 1.2's Swap adds the fees of the swap.
 */
export const algebraSignatures = {
  algebraPool: "Pool(address indexed token0, address indexed token1, address pool)",
  integralSwap:
    "Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 price, uint128 liquidity, int24 tick, uint24 overrideFee, uint24 pluginFee)",
  algebraFee: "Fee(uint16 fee)",
} as const;

/** topic0 of each event, lowercase hex. */
export const algebraTopics = {
  algebraPool: toEventSelector(`event ${algebraSignatures.algebraPool}`),
  integralSwap: toEventSelector(`event ${algebraSignatures.integralSwap}`),
  algebraFee: toEventSelector(`event ${algebraSignatures.algebraFee}`),
} as const;
