import type { Hex, PoolCreationFields, Protocol } from "../model/index.js";

// The chain vocabulary is defined in src/model (the store needs it too); decoders keep importing it from here.
export type { Hex, Protocol };

/** A log as eth_getLogs returns it, with quantities as numbers and hex in lowercase. */
export type RawLog = {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: number;
  /** Null where the source does not record it (the replay CSV). */
  blockHash: Hex | null;
  transactionHash: Hex;
  transactionIndex: number;
  logIndex: number;
};

/**
 * The layout of a family's Swap where one family has several: "uniswap" (Uniswap V3's 7 fields,
 * also Algebra V1's), "pancake" (PancakeSwap V3's 9, with protocol fees), "integral" (Algebra
 * Integral 1.2's 9, with the swap's fees).
 */
export type SwapEventLayout = "uniswap" | "pancake" | "integral";

/** A pool announced by a factory's PairCreated / PoolCreated event, at the event's position. */
export type PoolCreation = PoolCreationFields & {
  pool: Hex;
  blockNumber: number;
  logIndex: number;
};
