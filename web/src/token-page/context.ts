// What the token page's cards share: the token, the API, and the choice of pair and side.

import { type ApiClient, ApiError, type Network, type Pair } from "../api.js";
import { type ExplorerLinks, explorerOf } from "../block-explorer.js";
import type { TokenRoute } from "../route.js";

/** The page's current choice; the composition (token-page.ts) updates it, the cards read it. */
export type Selection = {
  route: TokenRoute;
  pair: Pair | undefined;
  side: 0 | 1;
};

export type PageContext = {
  api: ApiClient;
  /** Aborted when the page is destroyed: every request of every card passes it. */
  signal: AbortSignal;
  tokenId: string;
  tokenAddress: string;
  chain: string;
  selection: Selection;
  /** Records a changed choice in the URL (without a history entry) and applies it. */
  navigate: (route: TokenRoute) => void;
  /** Passes an authentication failure (401/403) on to the key field. */
  reportError: (error: unknown) => void;
  /** Origins of token logos the page may load (`/web-config.json`). */
  logoHosts: readonly string[];
  /** The token's network (from /v1/networks) once known. */
  network: Network | undefined;
  /** Links to the chain's block explorer, where one is configured. */
  explorer: ExplorerLinks | undefined;
  /** Records the configured networks: the token's network and its explorer. */
  setNetworks(networks: readonly Network[]): void;
};

export function createPageContext(options: {
  api: ApiClient;
  signal: AbortSignal;
  route: TokenRoute;
  navigate: (route: TokenRoute) => void;
  onAuthError: (message: string) => void;
  logoHosts?: readonly string[];
}): PageContext {
  const tokenId = options.route.tokenId;
  const [tokenAddress = "", chain = ""] = tokenId.split(":");
  const context: PageContext = {
    api: options.api,
    signal: options.signal,
    tokenId,
    tokenAddress,
    chain,
    selection: { route: options.route, pair: undefined, side: 0 },
    navigate: options.navigate,
    reportError(error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        options.onAuthError(error.message);
      }
    },
    logoHosts: options.logoHosts ?? [],
    network: undefined,
    explorer: undefined,
    setNetworks(networks) {
      context.network = networks.find((n) => String(n.chain) === chain);
      context.explorer = explorerOf(networks, chain);
    },
  };
  return context;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const isAbort = (error: unknown) => (error as Error | undefined)?.name === "AbortError";

let firstChartMarked = false;

/** Marks the first time candles are on screen, for the browser test's time-to-first-chart. */
export function markFirstChart(): void {
  if (firstChartMarked) return;
  firstChartMarked = true;
  requestAnimationFrame(() => performance.mark("tokenmarket:first-chart"));
}
