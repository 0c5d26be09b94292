/**
 * Catching up blocks the indexer stored while no pricing was attached (or before the chain's
 * first priced batch): their stored rows are priced in chunks of about `CATCH_UP_SWAPS` swaps,
 * each chunk's swaps updated with their USD figures and folded into the aggregates.
 */
import type { DbClient } from "../store/db.js";
import { loadMarketEvents } from "../store/pool-events.js";
import { chunkEndBlock } from "../store/swaps.js";
import type { Market } from "./market-cache.js";
import type { StatsChanges } from "./market-stats.js";
import { priceEvents, writePriced } from "./priced-writes.js";
import type { Stage } from "./stage.js";

/** Swaps per catch-up chunk. */
export const CATCH_UP_SWAPS = 20_000;

/** Prices the stored blocks (fromExclusive, toBlock], in chunks; returns the number of swaps priced. */
export async function catchUpStored(
  stage: Stage,
  client: DbClient,
  chainId: number,
  market: Market,
  fromExclusive: number,
  toBlock: number,
  changes: StatsChanges,
  chunkSwaps = CATCH_UP_SWAPS,
): Promise<number> {
  let swaps = 0;
  let cursor = fromExclusive;
  while (cursor < toBlock) {
    const end = await chunkEndBlock(client, chainId, cursor, toBlock, chunkSwaps);
    const events = await loadMarketEvents(client, chainId, cursor, end);
    if (events.length > 0) {
      const result = await priceEvents(stage, client, chainId, market, events, true);
      // Stored rows: their USD figures are written now, once.
      swaps += await writePriced(stage, client, chainId, market, result, result.swaps, changes);
    }
    cursor = end;
  }
  return swaps;
}
