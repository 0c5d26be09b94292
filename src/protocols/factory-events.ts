import type { PoolCreation, Protocol, RawLog } from "../decode/types.js";
import { familyOf } from "./index.js";

/**
 * Decodes a factory's pool-creation log for the family `protocol` (V2 PairCreated, V3
 * PoolCreated, …). Returns null for any other log or a malformed one.
 */
export function decodePoolCreation(log: RawLog, protocol: Protocol): PoolCreation | null {
  return familyOf(protocol).decodeCreation(log);
}
