/**
 * The stream's data messages, serialised once per change and sent as is to every subscriber: each
 * carries the record its REST endpoint gives (pure).
 */

import type { PoolRow } from "../../store/pools.js";
import type { SwapRow } from "../../store/swaps.js";
import type { TokenRow } from "../../store/tokens.js";
import type { CandleRecord } from "../candle-records.js";
import { tokenFields } from "../token-records.js";
import { tradeRecord } from "../trade-records.js";
import type { CandlesSubscription } from "./messages.js";

/** A trade message: the /api/v1/trades record of `asset`'s side, with the asset it is seen from. */
export function tradeText(pool: PoolRow, row: SwapRow, assetIsToken0: boolean): string {
  const asset = `${assetIsToken0 ? pool.token0 : pool.token1}:${pool.chain_id}`;
  return JSON.stringify({ type: "trade", asset_id: asset, data: tradeRecord(pool, row, assetIsToken0) });
}

/** A price message: the token record as /api/v1/assets gives it; null for an unknown token. */
export function priceText(row: TokenRow | undefined): string | null {
  if (!row) return null;
  return JSON.stringify({
    type: "price",
    data: { contract: row.address, chain: row.chain_id, ...tokenFields(row) },
  });
}

/** A candle message: the /api/v1/candles record with the subscription's parameters. */
export function candleText(s: CandlesSubscription, data: CandleRecord): string {
  return JSON.stringify({
    type: "candle",
    pair_id: s.pair.id,
    asset_id: s.asset.id,
    interval: s.interval,
    currency: s.currency,
    data,
  });
}
