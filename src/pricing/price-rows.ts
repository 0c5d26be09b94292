/**
 * The `token_prices` rows of computed prices, and which of them differ from the rows a market
 * last stored (docs/PRICING.md, *Token prices*): only those are serialised and sent.
 */
import { finite } from "../model/index.js";
import type { TokenPriceRow } from "../store/prices.js";
import { provenanceOf, sameRow } from "./provenance.js";
import type { PricingOptions, TokenPrice } from "./usd-prices.js";

/** The token_prices rows of computed prices (tokens whose pools never had an event get none). */
export function priceRows(prices: ReadonlyMap<string, TokenPrice>, options: PricingOptions): TokenPriceRow[] {
  const rows: TokenPriceRow[] = [];
  for (const price of prices.values()) {
    if (price.asOfBlock === null || price.asOfTime === null) continue;
    rows.push({
      token: price.token,
      usdPrice: price.usdPrice,
      blockNumber: price.asOfBlock,
      blockTime: price.asOfTime,
      provenance: provenanceOf(price, options),
    });
  }
  return rows.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
}

/** A USD price as `saveTokenPrices` stores it: not finite → null; -0 → 0 (JSON carries it so). */
export function storedUsd(value: number | null): number | null {
  const f = finite(value);
  return f === null ? null : f + 0;
}

/**
 * The prices whose token_prices rows differ from the stored ones (`stored`: per token, the price
 * whose row was last stored), in the rows' order (by token): every price but those stored
 * unchanged (the same object, or one that makes the same row: `sameRow`) and those without a row
 * (no pool event yet). A price that makes the same row from a new object becomes the stored one,
 * so that the next batch sees it unchanged by identity.
 */
export function freshPrices(
  stored: Map<string, TokenPrice>,
  prices: ReadonlyMap<string, TokenPrice>,
): TokenPrice[] {
  const fresh: TokenPrice[] = [];
  for (const [token, price] of prices) {
    if (price.asOfBlock === null || price.asOfTime === null) continue;
    const before = stored.get(token);
    if (before === price) continue;
    if (before && sameRow(before, price)) {
      stored.set(token, price);
      continue;
    }
    fresh.push(price);
  }
  return fresh.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
}

/**
 * The rows of fresh prices (`freshPrices`), which become the stored ones; with the tokens whose
 * USD price moved (a token not stored before counts as moved).
 */
export function newPriceRows(
  stored: Map<string, TokenPrice>,
  fresh: readonly TokenPrice[],
  options: PricingOptions,
): { rows: TokenPriceRow[]; usdMoved: Set<string> } {
  const byToken = new Map(fresh.map((price) => [price.token, price]));
  const rows = priceRows(byToken, options);
  const usdMoved = new Set<string>();
  for (const row of rows) {
    // Serialised once (saveTokenPrices sends it as it is).
    row.provenanceJson = JSON.stringify(row.provenance);
    const before = stored.get(row.token);
    stored.set(row.token, byToken.get(row.token) as TokenPrice);
    if (!before || !Object.is(finite(before.usdPrice), finite(row.usdPrice))) usdMoved.add(row.token);
  }
  return { rows, usdMoved };
}
