// The market card: the token's windows (5 min, 1 h, 6 h, 24 h: price change, USD volume, buys and
// sells, makers) and its facts (liquidity, FDV, market cap, pools), from /v1/tokens/market. The
// same request brings the records of the bases of the token's pairs: the page shows every token's
// USD change from these records only, so the header, this card and the pairs agree.

import type { TokenMarket } from "../api.js";
import { setCardState } from "../controls.js";
import { h, replace } from "../dom.js";
import { marketFacts, windowRows } from "../market-stats.js";
import { isAbort, messageOf, type PageContext } from "./context.js";

export type MarketCard = {
  element: HTMLElement;
  /** Loads the figures; `quiet` (a refresh) keeps what is shown while it runs, and on failure. */
  load(quiet?: boolean): Promise<void>;
};

/** What the rest of the page does with the market records. */
export type MarketEvents = {
  /** Further tokens whose records the page shows (the bases of the token's pairs). */
  others(): readonly string[];
  /** New records: the token's own (undefined when the API does not know it) and the others'. */
  loaded(markets: ReadonlyMap<string, TokenMarket>): void;
};

export function createMarketCard(context: PageContext, events: MarketEvents): MarketCard {
  const { api, signal, tokenId } = context;
  let market: TokenMarket | undefined;
  let seq = 0;

  const facts = h("dl", { class: "facts market-facts", "data-testid": "market-facts" });
  const body = h("tbody");
  const status = h("p", { class: "card-status" });
  const element = h(
    "section",
    { class: "card market-card", "aria-labelledby": "market-title", "data-testid": "market" },
    h(
      "div",
      { class: "card-head" },
      h("h2", { id: "market-title" }, "Market"),
      h("span", { class: "muted" }, "all pools, USD"),
    ),
    status,
    facts,
    h(
      "div",
      { class: "table-wrap", role: "region", "aria-labelledby": "market-title", tabindex: 0 },
      h(
        "table",
        { class: "table windows", "data-testid": "windows" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Window"),
            h("th", { scope: "col", class: "r" }, "Change"),
            h("th", { scope: "col", class: "r" }, "Volume"),
            h("th", { scope: "col", class: "r" }, "Buys / sells"),
            h("th", { scope: "col", class: "r" }, "Makers"),
          ),
        ),
        body,
      ),
    ),
  );

  const render = (now: number) => {
    if (!market) return;
    replace(
      facts,
      ...marketFacts(market, now).map((fact) =>
        h("div", { title: fact.title }, h("dt", {}, fact.label), h("dd", { class: "num" }, fact.value)),
      ),
    );
    replace(
      body,
      ...windowRows(market.windows).map((row) => {
        const bar = h(
          "span",
          { class: "buy-sell-bar", "aria-hidden": "true" },
          h("span", { class: "buy-share" }),
        );
        // Through the CSSOM: the page's Content-Security-Policy allows no style attributes.
        if (row.buyShare !== null)
          bar.style.setProperty("--buy-share", `${(row.buyShare * 100).toFixed(1)}%`);
        else bar.hidden = true;
        return h(
          "tr",
          { "data-window": row.window },
          h("th", { scope: "row" }, row.label),
          h("td", { class: `r num change ${row.change.direction}` }, row.change.text),
          h("td", { class: "r num" }, row.volume),
          h(
            "td",
            { class: "r num" },
            h("span", { class: "up" }, row.buys),
            " / ",
            h("span", { class: "down" }, row.sells),
            bar,
          ),
          h("td", { class: "r num" }, row.makers),
        );
      }),
    );
  };

  return {
    element,
    async load(quiet = false) {
      const n = ++seq;
      if (!quiet) setCardState(element, status, "loading", "Loading market figures…");
      try {
        const ids = [tokenId, ...events.others().filter((id) => id !== tokenId)].slice(0, 50);
        const markets = await api.tokenMarkets(ids, signal);
        if (n !== seq) return;
        market = markets.get(tokenId);
        events.loaded(markets);
        if (!market) {
          replace(facts);
          replace(body);
          setCardState(element, status, "empty", "No market figures for this token yet.");
          return;
        }
        render(Date.now());
        setCardState(element, status, "ready");
      } catch (error) {
        if (isAbort(error) || n !== seq) return;
        context.reportError(error);
        if (!quiet || !market) setCardState(element, status, "error", messageOf(error));
      }
    },
  };
}
