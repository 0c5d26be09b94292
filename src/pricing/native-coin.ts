import { NATIVE_COIN } from "../model/index.js";

/**
 * The token whose USD series (line chart, USD candles) a token answers: the wrapped native token's
 * for the native coin, which has no price of its own (computeUsdPrices gives it the wrapped
 * token's), so that both ids answer the same points; any other token its own.
 */
export function usdSeriesToken(token: string, wrappedNative: string | undefined): string {
  const address = token.toLowerCase();
  return address === NATIVE_COIN && wrappedNative !== undefined ? wrappedNative.toLowerCase() : address;
}
