import { topics } from "./abi.js";
import type { PoolCreation, Protocol, RawLog } from "./types.js";
import { addressAt, intAt, topicAddress, topicInt, wordCount } from "./words.js";

/**
 * Decodes a factory's pool-creation log: V2 PairCreated or V3 PoolCreated. Returns null for any
 * other log or a malformed one.
 */
export function decodePoolCreation(log: RawLog, protocol: Protocol): PoolCreation | null {
  const { topics: t, data } = log;
  const position = { factory: log.address, blockNumber: log.blockNumber, logIndex: log.logIndex };
  if (protocol === "v2") {
    if (t[0] !== topics.v2PairCreated || t.length !== 3 || wordCount(data) !== 2) return null;
    return {
      ...position,
      token0: topicAddress(t[1] as string),
      token1: topicAddress(t[2] as string),
      pool: addressAt(data, 0),
      fee: null,
      tickSpacing: null,
    };
  }
  if (t[0] !== topics.v3PoolCreated || t.length !== 4 || wordCount(data) !== 2) return null;
  return {
    ...position,
    token0: topicAddress(t[1] as string),
    token1: topicAddress(t[2] as string),
    fee: Number(topicInt(t[3] as string)),
    tickSpacing: Number(intAt(data, 0)),
    pool: addressAt(data, 1),
  };
}
