import type { SwapEventLayout } from "../decode/types.js";
import type { ProtocolName } from "../model/index.js";
import { familyOf } from "./index.js";
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

/** The topic0s a pool of the family `protocol` (and Swap layout) emits and the indexer decodes. */
export function poolTopics(protocol: ProtocolName, swapEvent: SwapEventLayout): `0x${string}`[] {
  return familyOf(protocol).poolTopics(swapEvent);
}

/** The topic0 of the pool-creation event of the family `protocol`'s factories. */
export function creationTopic(protocol: ProtocolName): `0x${string}` {
  return familyOf(protocol).creationTopic;
}
