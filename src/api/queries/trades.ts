// The swap reads moved to src/store/swaps.ts; these names stay for src/api/trade-records.ts until it imports from there.
export type { SwapRow, TradePosition } from "../../store/swaps.js";
