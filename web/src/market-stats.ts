// The market figures of a token or a pool as the page shows them: one row per window (change,
// volume, buys and sells, makers) and the token's facts (liquidity, FDV, market cap, pools). Pure.

import type { TokenMarket, WindowName, WindowStats, Windows } from "./api.js";
import { windowNames } from "./api.js";
import { type ChangeDirection, formatAge, formatChange, formatUsdCompact, missing } from "./format.js";

const locale = "en-US";

/** A count of trades or makers, grouped (`12,345`). */
export function formatCount(value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return missing;
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(value);
}

export type WindowRow = {
  window: WindowName;
  /** `5 min`, `1 h`, `6 h`, `24 h`. */
  label: string;
  change: { text: string; direction: ChangeDirection };
  volume: string;
  buys: string;
  sells: string;
  /** Share of buys among the window's trades, 0–1; null without trades (no bar drawn). */
  buyShare: number | null;
  makers: string;
  /** Trades in the window. */
  trades: number;
};

const windowLabels: Record<WindowName, string> = { "5m": "5 min", "1h": "1 h", "6h": "6 h", "24h": "24 h" };

/** One window's row; a window the answer lacks shows dashes, never zeros. */
export function windowRow(window: WindowName, stats: WindowStats | undefined): WindowRow {
  const buys = stats?.buys ?? 0;
  const sells = stats?.sells ?? 0;
  const trades = buys + sells;
  return {
    window,
    label: windowLabels[window],
    change: formatChange(stats?.price_change),
    volume: formatUsdCompact(stats?.volume_usd),
    buys: stats ? formatCount(buys) : missing,
    sells: stats ? formatCount(sells) : missing,
    buyShare: trades > 0 ? buys / trades : null,
    makers: stats ? formatCount(stats.makers) : missing,
    trades,
  };
}

/** The rows of the four windows, shortest first. */
export function windowRows(windows: Partial<Windows> | undefined): WindowRow[] {
  return windowNames.map((name) => windowRow(name, windows?.[name]));
}

export type MarketFact = { label: string; value: string; title?: string };

/**
 * The token's facts beside the windows. Market cap only where a circulating supply is
 * configured (else a dash with the reason in the title): FDV over the total supply is not it.
 */
export function marketFacts(market: TokenMarket, now: number): MarketFact[] {
  const facts: MarketFact[] = [
    { label: "Liquidity", value: formatUsdCompact(market.liquidity_usd) },
    {
      label: "FDV",
      value: formatUsdCompact(market.fdv),
      title: "Fully diluted valuation: total supply × USD price",
    },
    {
      label: "Market cap",
      value: formatUsdCompact(market.market_cap),
      title:
        market.market_cap === null
          ? "No circulating supply is configured for this token"
          : "Circulating supply × USD price",
    },
    { label: "Pools", value: formatCount(market.pools) },
  ];
  if (market.first_trade_at) {
    const first = Date.parse(market.first_trade_at);
    if (Number.isFinite(first)) {
      facts.push({
        label: "First trade",
        value: formatAge(first, now),
        title: `${new Date(first).toISOString().slice(0, 16).replace("T", " ")} UTC`,
      });
    }
  }
  return facts;
}
