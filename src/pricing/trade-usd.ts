import { ratio, ratioMul, ratioValue } from "../exact/ratio.js";
import type { ExactDecimal } from "../internal/exact-decimal.js";
import type { SwapUsd } from "../model/index.js";
import { deviationOf } from "./robust-price.js";
import { sideRatio, type Trade } from "./trade.js";
import {
  exactUsd,
  type GraphPool,
  type PricingOptions,
  type ReferenceTokens,
  sideRank,
  type TokenPrice,
} from "./usd-prices.js";

/** A side's exact amount times its token's exact USD price, correctly rounded (null: either unknown). */
function sideValue(amount: ExactDecimal | null, price: TokenPrice | undefined): number | null {
  if (amount === null || !price || price.usdPrice === null) return null;
  const value = ratioValue(ratioMul(ratio(amount.digits, 10n ** BigInt(amount.scale)), exactUsd(price)));
  return Number.isFinite(value) ? value : null;
}

/**
 * Values a trade of `pool` with the token prices of its block. The USD value comes from the
 * side whose token is the more trustworthy source (anchor > reference > other; then the higher
 * confidence; then token0).
 *
 * A side enters its token's USD series when the pool sets that token's price (it is among the
 * pools its price was computed from with a weight; a pool the median filter dropped does not) and
 * the trade's implied USD price (execution price × the quote's USD price) lies within
 * maxDeviation of the token's robust price (an outlier does not). What enters is the token's USD
 * price at the trade, the price every other figure of the trade carries, not the implied price:
 * an execution price includes the pool's fee and the trade's price impact, and a kept pool of
 * small weight may sit up to maxDeviation away from the others, so an hour whose only trades were
 * such would otherwise average a price no trade of the token was valued at. An anchor's series
 * records its trades at 1 USD in pools whose anchor side alone is above the liquidity floor.
 */
export function valueTrade(input: {
  pool: GraphPool;
  /** The trade's price and volumes; null when it has none (a zero side, decimals unknown). */
  trade: Trade | null;
  /** Each side's amount exactly, |net raw amount| / 10^decimals (null: decimals unknown). */
  amounts: { exact0: ExactDecimal | null; exact1: ExactDecimal | null };
  price0: TokenPrice | undefined;
  price1: TokenPrice | undefined;
  reference: ReferenceTokens;
  options: PricingOptions;
}): SwapUsd {
  const { pool, trade, amounts, price0, price1, reference, options } = input;
  const token0Usd = price0?.usdPrice ?? null;
  const token1Usd = price1?.usdPrice ?? null;

  // A side can value the trade when its token is priced and its amount known.
  const value0 = sideValue(amounts.exact0, price0);
  const value1 = sideValue(amounts.exact1, price1);
  let volumeUsd: number | null = value0 ?? value1;
  if (value0 !== null && value1 !== null) {
    const rank0 = sideRank(pool.token0, reference);
    const rank1 = sideRank(pool.token1, reference);
    const useToken0 =
      rank0 !== rank1 ? rank0 < rank1 : (price0?.confidence ?? 0) >= (price1?.confidence ?? 0);
    volumeUsd = useToken0 ? value0 : value1;
  }
  if (!trade) return { token0Usd, token1Usd, volumeUsd, series0Usd: null, series1Usd: null };

  const seriesPrice = (side: 0 | 1): number | null => {
    const own = side === 0 ? price0 : price1;
    if (!own || own.usdPrice === null) return null;
    if (own.method === "anchor") {
      const depth = side === 0 ? pool.depth0 : pool.depth1;
      return depth !== null && depth > 0 && 2 * depth * own.usdPrice >= options.liquidityFloorUsd
        ? own.usdPrice
        : null;
    }
    const quote = own.pools.find((q) => q.pool === pool.address);
    if (!quote || !(quote.weight > 0)) return null;
    // The trade's exact price of this side's token times the quote's exact USD price, rounded once.
    const implied = ratioValue(
      ratioMul(sideRatio(trade, side), quote.quoteUsdRatio ?? exactUsd({ usdPrice: quote.quoteUsd })),
    );
    if (!Number.isFinite(implied) || !(implied > 0)) return null;
    return deviationOf(implied, own.usdPrice) <= options.maxDeviation ? own.usdPrice : null;
  };

  return { token0Usd, token1Usd, volumeUsd, series0Usd: seriesPrice(0), series1Usd: seriesPrice(1) };
}
