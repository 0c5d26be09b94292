/** The rows one ingestion batch writes (src/sync builds them, the store inserts them, pricing reads them). */
import type { Hex } from "./chain.js";
import type { PoolInfo, PoolState, Protocol, Token } from "./pools.js";
import type { SwapAmounts } from "./pricing.js";

/** A token first stored by this batch, with its metadata (null where the contract gave none). */
export type BatchToken = Token;

/** The pool and token facts every stored swap or pool event is joined with. */
type PoolFacts = {
  pool: Hex;
  dex: string;
  protocol: Protocol;
  token0: Hex;
  token1: Hex;
  /** Null when the token's decimals() is unknown (reverted, missing). */
  decimals0: number | null;
  decimals1: number | null;
};

/** The facts of `pool` a batch row carries, its tokens' decimals looked up in `tokens` (null: unknown). */
export const poolFactsOf = (
  pool: Pick<PoolInfo, "address" | "dex" | "protocol" | "token0" | "token1">,
  tokens: { get(address: Hex): Pick<Token, "decimals"> | undefined },
): PoolFacts => ({
  pool: pool.address,
  dex: pool.dex,
  protocol: pool.protocol,
  token0: pool.token0,
  token1: pool.token1,
  decimals0: tokens.get(pool.token0)?.decimals ?? null,
  decimals1: tokens.get(pool.token1)?.decimals ?? null,
});

/** A swap inserted by this batch; keyed by (chainId, blockNumber, logIndex). Amounts are raw. */
export type BatchSwap = PoolFacts &
  SwapAmounts & {
    blockNumber: number;
    logIndex: number;
    /** Null only in replay (the recording has no block hashes). */
    blockHash: Hex | null;
    blockTime: Date;
    txHash: Hex;
    txIndex: number;
    /** The transaction's sender and the contract it called; null in replay. */
    maker: Hex | null;
    exchange: Hex | null;
    sender: Hex;
    recipient: Hex;
    /** The pool's balances after the swap; null when unknown. */
    reserve0: bigint | null;
    reserve1: bigint | null;
    sqrtPriceX96: bigint | null;
    liquidity: bigint | null;
    tick: number | null;
    /** Post-swap pool price of token0 in token1, decimal-adjusted; null when decimals are unknown. */
    price: number | null;
  };

export type PoolEventKind = "sync" | "mint" | "burn" | "collect" | "initialize" | "flash" | "donate";

/** A non-swap pool event inserted by this batch, with the pool's state after it. */
export type BatchPoolEvent = PoolFacts & {
  blockNumber: number;
  logIndex: number;
  blockTime: Date;
  txHash: Hex;
  kind: PoolEventKind;
  amount0: bigint | null;
  amount1: bigint | null;
  /** V3 mint (+) / burn (−) liquidity. */
  liquidityDelta: bigint | null;
  tickLower: number | null;
  tickUpper: number | null;
  reserve0: bigint | null;
  reserve1: bigint | null;
  liquidity: bigint | null;
  sqrtPriceX96: bigint | null;
  tick: number | null;
};

/** The latest state of a pool that this batch changed. */
export type BatchPoolState = { pool: Hex } & PoolState;

/** What one ingestion transaction wrote: a block range of one chain. */
export type IngestBatch = {
  chainId: number;
  fromBlock: number;
  toBlock: number;
  /** Time of `toBlock` (the checkpoint). */
  toBlockTime: Date | null;
  /**
   * The block the indexer was heading for when it took this batch (the node's head less the
   * confirmations); absent when unknown (a replay). A batch far below it is part of a backfill.
   */
  headBlock?: number | undefined;
  source: "rpc" | "replay";
  /** The pools first stored by this batch. */
  newPools: PoolInfo[];
  newTokens: BatchToken[];
  /** Ascending by (blockNumber, logIndex); only rows actually inserted (not already present). */
  swaps: BatchSwap[];
  poolEvents: BatchPoolEvent[];
  poolStates: BatchPoolState[];
};

export type RollbackInfo = {
  chainId: number;
  /** The common ancestor: every ingested row above it has been deleted. */
  ancestorBlock: number;
};
