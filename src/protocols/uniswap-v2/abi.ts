import { eventTopics } from "../event-decoder.js";

/** Event signatures of a Uniswap V2-style factory and pair. */
export const v2Signatures = {
  v2PairCreated: "PairCreated(address indexed token0, address indexed token1, address pair, uint256)",
  v2Sync: "Sync(uint112 reserve0, uint112 reserve1)",
  v2Swap:
    "Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
  v2Mint: "Mint(address indexed sender, uint256 amount0, uint256 amount1)",
  v2Burn: "Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to)",
} as const;

/** topic0 of each event, lowercase hex. */
export const v2Topics = eventTopics(v2Signatures);
