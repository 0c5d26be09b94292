// The search box: a combobox (WAI-ARIA pattern) whose list fills as the user types, debounced,
// each new query aborting the one before.

import { type ApiClient, ApiError, type SearchToken, type TokenMarket } from "./api.js";
import { h, replace } from "./dom.js";
import { chainName, formatChange, formatUsd, shortHex } from "./format.js";
import { allowedLogoUrl, monogram } from "./logo.js";
import { symbolOr } from "./market.js";
import { tokenHref } from "./route.js";

export const searchDebounceMs = 250;

/** A token's logo when the service serves it or its host is allowed (`logoHosts`), else its monogram. */
export function tokenAvatar(
  symbol: string,
  logoUrl: string | null | undefined,
  size: "s" | "l" = "s",
  logoHosts: readonly string[] = [],
): HTMLElement {
  const allowed = allowedLogoUrl(logoUrl, location.origin, logoHosts);
  if (allowed) {
    return h("img", {
      class: `avatar avatar-${size}`,
      src: allowed,
      alt: "",
      width: 32,
      height: 32,
      // No Referer to a logo host: which token page was open is nobody else's business.
      referrerpolicy: "no-referrer",
      loading: "lazy",
    });
  }
  const { letters, hue } = monogram(symbol);
  const avatar = h("span", { class: `avatar avatar-${size}`, "aria-hidden": "true" }, letters);
  // Through the CSSOM, not a style attribute: the page's Content-Security-Policy has no 'unsafe-inline'.
  avatar.style.setProperty("--hue", String(hue));
  return avatar;
}

export function createSearch(options: {
  input: HTMLInputElement;
  popup: HTMLElement;
  list: HTMLElement;
  status: HTMLElement;
  api: ApiClient;
  onAuthError: (message: string) => void;
  /** Logo hosts the page may load from (`/web-config.json`). */
  logoHosts?: readonly string[];
}): { close(): void } {
  const { input, popup, list, status, api } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let controller: AbortController | undefined;
  let results: SearchToken[] = [];
  /** The results' market records: their 24 h change, the same figure their token pages show. */
  let markets: ReadonlyMap<string, TokenMarket> = new Map();
  let active = -1;

  const setOpen = (open: boolean) => {
    popup.hidden = !open;
    input.setAttribute("aria-expanded", String(open && results.length > 0));
  };

  const close = () => {
    controller?.abort();
    if (timer !== undefined) clearTimeout(timer);
    setOpen(false);
    active = -1;
    input.removeAttribute("aria-activedescendant");
  };

  const go = (token: SearchToken) => {
    close();
    input.value = "";
    input.blur();
    location.hash = tokenHref(token.contract, token.chain);
  };

  const showStatus = (text: string, kind: "info" | "error" = "info") => {
    status.textContent = text;
    status.className = `search-status ${kind === "error" ? "is-error" : ""}`;
    status.hidden = text === "";
  };

  const setActive = (index: number) => {
    active = index;
    list.querySelectorAll<HTMLElement>("[role=option]").forEach((option, i) => {
      option.setAttribute("aria-selected", String(i === index));
      if (i === index) {
        input.setAttribute("aria-activedescendant", option.id);
        option.scrollIntoView({ block: "nearest" });
      }
    });
  };

  const render = () => {
    replace(
      list,
      ...results.map((token, i) => {
        const tokenId = `${token.contract.toLowerCase()}:${token.chain}`;
        const change = formatChange(markets.get(tokenId)?.windows["24h"].price_change);
        return h(
          "div",
          {
            id: `search-option-${i}`,
            role: "option",
            "aria-selected": "false",
            class: "search-option",
            "data-token-id": `${token.contract}:${token.chain}`,
            onmousedown: (event: Event) => event.preventDefault(), // keep focus in the input
            onclick: () => go(token),
          },
          tokenAvatar(
            symbolOr(token.symbol, token.contract),
            token.project_info?.logo_url,
            "s",
            options.logoHosts,
          ),
          h(
            "span",
            { class: "search-names" },
            h("span", { class: "search-symbol" }, symbolOr(token.symbol, token.contract)),
            h(
              "span",
              { class: "search-name" },
              token.name ?? "Unnamed token",
              // Look-alike tokens share names and symbols: the contract tells them apart.
              h("code", { class: "search-address", title: token.contract }, ` · ${shortHex(token.contract)}`),
            ),
          ),
          h("span", { class: "chip" }, chainName(token.chain)),
          h(
            "span",
            { class: "search-price" },
            h("span", { class: "num" }, formatUsd(token.usd_price)),
            h(
              "span",
              { class: `num change ${change.direction}`, title: "USD change over 24 h" },
              change.text,
            ),
          ),
        );
      }),
    );
    active = -1;
  };

  const run = async (query: string) => {
    controller?.abort();
    const current = new AbortController();
    controller = current;
    showStatus("Searching…");
    setOpen(true);
    try {
      const found = await api.search(query, current.signal);
      const ids = found.map((t) => `${t.contract.toLowerCase()}:${t.chain}`);
      // Without the records the results still show, with a dash for the change.
      const records = await api.tokenMarkets(ids, current.signal).catch(() => new Map<string, TokenMarket>());
      if (current.signal.aborted) return;
      results = found;
      markets = records;
      render();
      showStatus(results.length ? "" : `No token matches “${query}”.`);
    } catch (error) {
      if (current.signal.aborted || (error as Error).name === "AbortError") return;
      results = [];
      render();
      if (error instanceof ApiError && error.status === 404) {
        showStatus(`No token matches “${query}”.`);
      } else {
        const message = error instanceof ApiError ? error.message : String(error);
        showStatus(message, "error");
        if (error instanceof ApiError && (error.status === 401 || error.status === 403))
          options.onAuthError(message);
      }
    }
    setOpen(true);
  };

  input.addEventListener("input", () => {
    if (timer !== undefined) clearTimeout(timer);
    const query = input.value.trim();
    if (query === "") {
      controller?.abort();
      results = [];
      render();
      showStatus("");
      setOpen(false);
      return;
    }
    timer = setTimeout(() => void run(query), searchDebounceMs);
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" && results.length) {
      event.preventDefault();
      setOpen(true);
      setActive((active + 1) % results.length);
    } else if (event.key === "ArrowUp" && results.length) {
      event.preventDefault();
      setActive((active - 1 + results.length) % results.length);
    } else if (event.key === "Enter") {
      const chosen = results[active] ?? (results.length === 1 ? results[0] : undefined);
      if (chosen) {
        event.preventDefault();
        go(chosen);
      }
    } else if (event.key === "Escape") {
      close();
    }
  });

  input.addEventListener("focus", () => {
    if (input.value.trim() !== "" && (results.length || !status.hidden)) setOpen(true);
  });
  input.addEventListener("blur", () => setOpen(false));

  return { close };
}
