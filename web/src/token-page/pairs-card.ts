// The pairs card: the token's pairs by 24 h volume, each named base/quote with the base's USD
// price and 24 h change; a click charts a pair.

import type { Pair, TokenMarket } from "../api.js";
import { type CardState, setCardState } from "../controls.js";
import { h, replace } from "../dom.js";
import { formatUsdCompact } from "../format.js";
import { pairName, sortPairs } from "../market.js";
import { basePrice, poolVenueTitle } from "../pool-label.js";
import { isAbort, messageOf, type PageContext } from "./context.js";

export type PairsCard = {
  element: HTMLElement;
  /** The pairs last loaded, sorted as shown. */
  readonly pairs: readonly Pair[];
  setState(state: CardState, message?: string): void;
  /**
   * Redraws the table (`venues`: each pair's DEX line, as pairVenues gives it; `markets`: the
   * market records of the pairs' bases, for their 24 h change).
   */
  render(venues: ReadonlyMap<string, string | undefined>, markets: ReadonlyMap<string, TokenMarket>): void;
  /** Loads the pairs; `quiet` (a live refresh) keeps the card's state meanwhile and shows errors only without pairs. */
  load(quiet?: boolean): Promise<void>;
};

/** What the rest of the page does with the pairs. */
export type PairsEvents = {
  /** A new list is in `pairs`: draw it wherever pairs are shown. */
  listed(): void;
  /** The token has no pair. */
  empty(): void;
  /** After listed (and empty): choose the pair and load what depends on it. */
  loaded(): Promise<void>;
  /** The pairs could not be loaded. */
  failed(message: string): void;
};

export function createPairsCard(context: PageContext, events: PairsEvents): PairsCard {
  const { api, signal, tokenId, selection } = context;
  let pairs: Pair[] = [];
  let seq = 0;

  const body = h("tbody");
  const status = h("p", { class: "card-status" });
  const element = h(
    "section",
    { class: "card pairs-card", "aria-labelledby": "pairs-title" },
    h(
      "div",
      { class: "card-head" },
      h("h2", { id: "pairs-title" }, "Pairs"),
      h("span", { class: "muted" }, "by 24\u00a0h volume"),
    ),
    status,
    h(
      "div",
      { class: "table-wrap", role: "region", "aria-labelledby": "pairs-title", tabindex: 0 },
      h(
        "table",
        { class: "table", "data-testid": "pairs" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Pair · DEX"),
            h(
              "th",
              { scope: "col", class: "r", title: "The base's USD price and its USD change over 24 h" },
              "Price",
              h("span", { class: "cell-sub" }, "change 24\u00a0h"),
            ),
            h("th", { scope: "col", class: "r" }, "Liquidity"),
            h("th", { scope: "col", class: "r" }, "Volume 24\u00a0h"),
          ),
        ),
        body,
      ),
    ),
  );
  const setState = (state: CardState, message = "") => setCardState(element, status, state, message);

  return {
    element,
    get pairs() {
      return pairs;
    },
    setState,
    render(venues, markets) {
      replace(
        body,
        ...pairs.map((p) => {
          const selected = p.pair_id === selection.pair?.pair_id;
          const { price, change } = basePrice(p, markets, "24h");
          return h(
            "tr",
            { class: selected ? "is-selected" : "", "data-pair-id": p.pair_id, "data-protocol": p.protocol },
            h(
              "th",
              { scope: "row" },
              h(
                "button",
                {
                  type: "button",
                  class: "link",
                  "aria-current": selected ? "true" : null,
                  title: `Chart ${pairName(p)}`,
                  onclick: () => context.navigate({ ...selection.route, pairId: p.pair_id, side: undefined }),
                },
                pairName(p),
              ),
              h("span", { class: "cell-sub venue", title: poolVenueTitle(p) }, venues.get(p.pair_id)),
            ),
            h(
              "td",
              { class: "r num" },
              price,
              h("span", { class: `cell-sub change ${change.direction}` }, change.text),
            ),
            h("td", { class: "r num" }, formatUsdCompact(p.liquidity_value)),
            h("td", { class: "r num" }, formatUsdCompact(p.volume)),
          );
        }),
      );
    },
    async load(quiet = false) {
      const n = ++seq;
      if (!quiet) setState("loading", "Loading pairs…");
      try {
        const list = await api.pairs(tokenId, signal);
        if (n !== seq) return;
        pairs = sortPairs(list);
        events.listed();
        if (pairs.length === 0) {
          setState("empty", "No pairs contain this token yet.");
          events.empty();
        } else setState("ready");
        await events.loaded();
      } catch (error) {
        if (isAbort(error) || n !== seq) return;
        context.reportError(error);
        if (!quiet || pairs.length === 0) {
          const message = messageOf(error);
          setState("error", message);
          events.failed(message);
        }
      }
    },
  };
}
