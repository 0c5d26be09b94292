import { finite } from "../model/index.js";
import type { TokenRow } from "../store/tokens.js";
import { unitsOrNull } from "./numbers.js";

/** The fields every token record shares, decimal-adjusted, null where unknown. */
export function tokenFields(row: TokenRow) {
  return {
    name: row.name,
    symbol: row.symbol,
    usd_price: finite(row.usd_price),
    price_change: finite(row.price_change),
    decimals: row.decimals,
    total_supply: finite(unitsOrNull(row.total_supply, row.decimals)),
  };
}
