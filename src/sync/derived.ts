import type { BatchSwap, IngestBatch, RollbackInfo, SwapUsd } from "../model/index.js";
import type { DbClient } from "../store/db.js";

/** A batch as the pricing sees it before its swaps are inserted (after its tokens and pools). */
export type BatchToPrice = Pick<
  IngestBatch,
  "chainId" | "fromBlock" | "toBlock" | "headBlock" | "swaps" | "poolEvents" | "newTokens"
>;

/** A batch priced before its rows are inserted: each swap's USD figures, and what derives from it. */
export type PricedBatch = {
  /** The USD figures of one of the batch's swaps, written with its row (undefined: none; null: no swap has any). */
  usdOf: ((swap: BatchSwap) => SwapUsd | undefined) | null;
  /**
   * Called inside the batch's transaction after its rows are inserted (`batch.swaps`: the ones
   * inserted) and before the commit: writes everything derived from the batch.
   */
  write(client: DbClient, batch: IngestBatch): Promise<void>;
};

/**
 * The pricing stage's seam: it computes USD prices, candles and statistics from what the
 * indexer stored, inside the indexer's own transactions, so that a batch and everything derived
 * from it commit (or vanish) together.
 */
export type DerivedData = {
  /**
   * Called inside the batch's transaction before its swaps are inserted (after its tokens and
   * pools): prices the batch once; the swaps are inserted with its figures, then `write` runs.
   */
  priceBatch(client: DbClient, batch: BatchToPrice): Promise<PricedBatch>;
  /** Called inside the rollback's transaction, after the rows above the ancestor are deleted. */
  afterRollback(client: DbClient, rollback: RollbackInfo): Promise<void>;
};

/** Raw ingestion only (tests, benchmarks): derives nothing. */
export const noDerivedData: DerivedData = {
  priceBatch: async () => ({ usdOf: null, write: async () => {} }),
  afterRollback: async () => {},
};
