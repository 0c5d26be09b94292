import type { Hex, Protocol } from "../model/index.js";

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

export type SwapEventLayout = "uniswap" | "pancake";

/** A pool announced by a factory's PairCreated / PoolCreated event. */
export type PoolCreation = {
  factory: Hex;
  pool: Hex;
  token0: Hex;
  token1: Hex;
  /** V3: the pool's fee in hundredths of a bip; V2: null (the DEX's configured fee applies). */
  fee: number | null;
  tickSpacing: number | null;
  blockNumber: number;
  logIndex: number;
};

/** A decoded pool event; amounts are raw integers. */
export type PoolEvent =
  | { type: "v2-sync"; reserve0: bigint; reserve1: bigint }
  | {
      type: "v2-swap";
      sender: Hex;
      to: Hex;
      amount0In: bigint;
      amount1In: bigint;
      amount0Out: bigint;
      amount1Out: bigint;
    }
  | { type: "v2-mint"; sender: Hex; amount0: bigint; amount1: bigint }
  | { type: "v2-burn"; sender: Hex; to: Hex; amount0: bigint; amount1: bigint }
  | { type: "v3-initialize"; sqrtPriceX96: bigint; tick: number }
  | {
      type: "v3-swap";
      sender: Hex;
      recipient: Hex;
      /** Signed, the pool's view: positive = paid into the pool. */
      amount0: bigint;
      amount1: bigint;
      sqrtPriceX96: bigint;
      liquidity: bigint;
      tick: number;
      /** PancakeSwap V3 only. */
      protocolFeesToken0: bigint | null;
      protocolFeesToken1: bigint | null;
    }
  | {
      type: "v3-mint";
      sender: Hex;
      owner: Hex;
      tickLower: number;
      tickUpper: number;
      amount: bigint;
      amount0: bigint;
      amount1: bigint;
    }
  | {
      type: "v3-burn";
      owner: Hex;
      tickLower: number;
      tickUpper: number;
      amount: bigint;
      amount0: bigint;
      amount1: bigint;
    }
  | {
      type: "v3-collect";
      owner: Hex;
      recipient: Hex;
      tickLower: number;
      tickUpper: number;
      amount0: bigint;
      amount1: bigint;
    }
  | { type: "v3-collect-protocol"; sender: Hex; recipient: Hex; amount0: bigint; amount1: bigint }
  | {
      type: "v3-flash";
      sender: Hex;
      recipient: Hex;
      amount0: bigint;
      amount1: bigint;
      paid0: bigint;
      paid1: bigint;
    };
