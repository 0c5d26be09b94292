import { NATIVE_COIN, type WindowFigures } from "../model/index.js";

/**
 * The token whose USD series (line chart, USD candles) a token answers: the wrapped native token's
 * for the native coin, which has no price of its own (computeUsdPrices gives it the wrapped
 * token's), so that both ids answer the same points; any other token its own.
 */
export function usdSeriesToken(token: string, wrappedNative: string | undefined): string {
  const address = token.toLowerCase();
  return address === NATIVE_COIN && wrappedNative !== undefined ? wrappedNative.toLowerCase() : address;
}

/**
 * The native coin's market windows with the wrapped native token's price changes: the windows'
 * change of a token is that of its USD series (the native coin's is the wrapped token's), while
 * the volumes, counts and makers stay the native coin's own trades'.
 */
export function withSeriesChanges<W extends WindowFigures>(
  own: readonly W[] | null,
  series: readonly WindowFigures[] | null,
): W[] | null {
  if (own === null) return null;
  return own.map((w, i) => ({ ...w, priceChange: series?.[i]?.priceChange ?? null }));
}
