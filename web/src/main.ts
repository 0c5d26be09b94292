// The explorer page: wires the API key, the search box and the hash router.

import "./styles.css";
import { createApiClient, type Network } from "./api.js";
import { createApiKeyStore, keyStorageName } from "./api-key.js";
import { h, replace } from "./dom.js";
import { createHomePage, type HomePage } from "./home-page.js";
import { formatRoute, parseRoute, type Route, type TokenRoute } from "./route.js";
import { createSearch } from "./search.js";
import { createTokenPage, type TokenPage } from "./token-page.js";

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const main = byId<HTMLElement>("main");
const banner = byId<HTMLElement>("banner");
const keyForm = byId<HTMLFormElement>("key-form");
const keyInput = byId<HTMLInputElement>("api-key");
const searchInput = byId<HTMLInputElement>("search-input");

let keys = createApiKeyStore(undefined, undefined);
const api = createApiClient({ getKey: () => keys.get() });
let page: TokenPage | undefined;
let home: HomePage | undefined;
let demoKey: string | undefined;
let logoHosts: readonly string[] = [];
/** The configured networks, asked once per key (they change only with the configuration). */
let networks: { key: string; list: Promise<readonly Network[]> } | undefined;

function loadNetworks(): Promise<readonly Network[]> {
  const key = keys.get();
  if (networks?.key !== key) {
    const list = api.networks();
    // A failure is asked again next time (a page shown later, a key typed).
    list.catch(() => {
      if (networks?.list === list) networks = undefined;
    });
    networks = { key, list };
  }
  return networks.list;
}

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

function hideBanner(): void {
  banner.hidden = true;
  replace(banner);
}

/** A refused key: the API's own message, and a way back to the demo key when there is one. */
function showAuthError(message: string): void {
  const offerDemo = demoKey !== undefined && keys.get() !== demoKey;
  replace(
    banner,
    h("strong", {}, "API key refused: "),
    h("span", { "data-testid": "auth-error" }, message),
    offerDemo &&
      h(
        "button",
        {
          type: "button",
          class: "button",
          onclick: () => {
            keys.set("");
            keyInput.value = keys.get();
            applyKey();
          },
        },
        "Use the demo key",
      ),
  );
  banner.className = "banner is-error";
  banner.hidden = false;
}

function applyKey(): void {
  hideBanner();
  if (keys.get() === "") {
    replace(banner, "Enter an API key (the x-api-key of the service) to load data.");
    banner.className = "banner";
    banner.hidden = false;
  }
  // Everything on screen came with the previous key: start the page afresh.
  page?.destroy();
  page = undefined;
  home?.destroy();
  home = undefined;
  render(parseRoute(location.hash));
  if (searchInput.value.trim() !== "") searchInput.dispatchEvent(new Event("input"));
}

function renderHome(): void {
  document.title = "tokenmarket explorer";
  home?.destroy();
  home = createHomePage({
    root: main,
    api,
    networks: loadNetworks(),
    onAuthError: showAuthError,
    search(query) {
      searchInput.value = query;
      searchInput.focus();
      searchInput.dispatchEvent(new Event("input"));
    },
  });
}

function navigate(route: TokenRoute): void {
  history.replaceState(null, "", formatRoute(route));
  render(route);
}

function render(route: Route): void {
  if (route.name === "token") {
    if (page && page.tokenId === route.tokenId) {
      page.update(route);
      return;
    }
    page?.destroy();
    home?.destroy();
    home = undefined;
    page = createTokenPage(route, {
      root: main,
      api,
      getKey: () => keys.get(),
      networks: loadNetworks().catch(() => []),
      logoHosts,
      navigate,
      onAuthError: showAuthError,
    });
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
    return;
  }
  page?.destroy();
  page = undefined;
  if (route.name === "home") renderHome();
  else {
    home?.destroy();
    home = undefined;
    document.title = "Not found · tokenmarket explorer";
    replace(
      main,
      h(
        "section",
        { class: "card", "aria-labelledby": "nf-title" },
        h("h1", { id: "nf-title" }, "Page not found"),
        h(
          "p",
          {},
          "Token pages look like #/token/<address>:<chain id>. ",
          h("a", { href: "#/" }, "Back to search"),
        ),
      ),
    );
  }
}

async function boot(): Promise<void> {
  const config = await api.webConfig();
  demoKey = config.demoKey;
  logoHosts = config.logoHosts ?? [];
  keys = createApiKeyStore(storage(), demoKey);
  keyInput.value = keys.get();
  keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    keys.set(keyInput.value);
    keyInput.value = keys.get();
    applyKey();
  });
  window.addEventListener("storage", (event) => {
    // The key changed in another tab of the explorer.
    if (event.key !== keyStorageName) return;
    keys = createApiKeyStore(storage(), demoKey);
    keyInput.value = keys.get();
    applyKey();
  });
  createSearch({
    input: searchInput,
    popup: byId("search-popup"),
    list: byId("search-results"),
    status: byId("search-status"),
    api,
    onAuthError: showAuthError,
    logoHosts,
  });
  if (keys.get() === "") applyKey();
  window.addEventListener("hashchange", () => render(parseRoute(location.hash)));
  render(parseRoute(location.hash));
}

void boot();
