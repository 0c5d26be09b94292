import { v2Signatures, v2Topics } from "./uniswap-v2/abi.js";
import { v3Signatures, v3Topics } from "./uniswap-v3/abi.js";

/**
 * Event signatures of the Uniswap V2/V3-style contracts and their topic0, as the families in
 * src/protocols define them (kept here under one name for the tests and tools that encode logs).
 */
export const eventSignatures = { ...v2Signatures, ...v3Signatures } as const;

export type EventName = keyof typeof eventSignatures;

/** topic0 of each event, lowercase hex. */
export const topics = { ...v2Topics, ...v3Topics } as Record<EventName, `0x${string}`>;
