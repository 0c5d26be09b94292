import type { Protocol, RawLog, SwapEventLayout } from "../decode/types.js";
import { familyOf, type PoolEvent } from "./index.js";

export { decodeV2Log } from "./uniswap-v2/index.js";
export { decodeV3Log } from "./uniswap-v3/index.js";

/**
 * Decodes a log emitted by a pool of the family `protocol`. Returns null for a log that is not
 * one of the decoded events of that family (or of that Swap layout), or whose topics or data do
 * not have the event's shape.
 */
export function decodePoolLog(
  log: Pick<RawLog, "topics" | "data">,
  protocol: Protocol,
  swapEvent: SwapEventLayout,
): PoolEvent | null {
  return familyOf(protocol).decodeLog(log, swapEvent) as PoolEvent | null;
}
