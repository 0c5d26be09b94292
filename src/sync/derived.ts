import type { BatchSwap, IngestBatch, RollbackInfo } from "../model/index.js";
import type { DbClient } from "../store/db.js";
import type { SwapUsdFigures } from "../store/swaps.js";

/**
 * The pricing stage's seam: it computes USD prices, candles and statistics from what the
 * indexer stored, inside the indexer's own transactions, so that a batch and everything derived
 * from it commit (or vanish) together.
 */
export type DerivedData = {
  /**
   * Optional, called inside the batch's transaction before its swaps are inserted (after its
   * tokens and pools): the USD figures of each of the batch's swaps, written with its row; null
   * when they are computed in afterBatch instead.
   */
  swapUsd?(
    client: DbClient,
    batch: Pick<
      IngestBatch,
      "chainId" | "fromBlock" | "toBlock" | "headBlock" | "swaps" | "poolEvents" | "newTokens"
    >,
  ): Promise<((swap: BatchSwap) => SwapUsdFigures | undefined) | null>;
  /** Called inside the batch's transaction, after its rows are inserted and before the commit. */
  afterBatch(client: DbClient, batch: IngestBatch): Promise<void>;
  /** Called inside the rollback's transaction, after the rows above the ancestor are deleted. */
  afterRollback(client: DbClient, rollback: RollbackInfo): Promise<void>;
};

/** Raw ingestion only (tests, benchmarks): derives nothing. */
export const noDerivedData: DerivedData = {
  afterBatch: async () => {},
  afterRollback: async () => {},
};
