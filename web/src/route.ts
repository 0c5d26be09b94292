// Hash routes: `#/` (search) and `#/token/<address>:<chain>?pair=…&side=0|1&interval=…&days=…`.
// The token page's choices live in the hash so that a view can be bookmarked, shared and reloaded.

export const intervals = ["1m", "5m", "15m", "30m", "1h", "4h", "1d"] as const;
export type Interval = (typeof intervals)[number];

export const lineDays = [1, 7, 30, 90] as const;
export type LineDays = (typeof lineDays)[number];

export const defaultInterval: Interval = "15m";
export const defaultDays: LineDays = 7;

export type TokenRoute = {
  name: "token";
  /** `<address>:<chain>`, address lowercase. */
  tokenId: string;
  /** The pair charted; absent: the page picks the pair with the most volume. */
  pairId?: string;
  /** asset_id of the candles and trades: token0 (0) or token1 (1) of the pair; absent: the page's token. */
  side?: 0 | 1;
  interval: Interval;
  days: LineDays;
};

export type Route = { name: "home" } | TokenRoute | { name: "notFound"; hash: string };

const idPattern = /^(0x[0-9a-fA-F]{40}):([1-9][0-9]*)$/;
/** A pool is a contract's address, or a 32-byte pool id inside a pool manager (Uniswap V4). */
const pairIdPattern = /^(0x(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})):([1-9][0-9]*)$/;

function normalised(pattern: RegExp, value: string): string | undefined {
  const match = pattern.exec(value.trim());
  if (!match) return undefined;
  return `${(match[1] as string).toLowerCase()}:${match[2]}`;
}

/** `<address>:<chain>` normalised to a lowercase address, or undefined when malformed. */
export function parseId(value: string): string | undefined {
  return normalised(idPattern, value);
}

/** A pair id (`<address>:<chain>` or `<pool id>:<chain>`) normalised, or undefined when malformed. */
export function parsePairId(value: string): string | undefined {
  return normalised(pairIdPattern, value);
}

function isInterval(value: string | null): value is Interval {
  return value !== null && (intervals as readonly string[]).includes(value);
}

function isDays(value: number): value is LineDays {
  return (lineDays as readonly number[]).includes(value);
}

/** Reads a location hash (`#/token/…`); unknown or malformed parameters fall back to defaults. */
export function parseRoute(hash: string): Route {
  const body = hash.replace(/^#/, "");
  if (body === "" || body === "/") return { name: "home" };
  const [path = "", query = ""] = body.split("?", 2);
  const tokenMatch = /^\/token\/([^/]+)$/.exec(path);
  if (!tokenMatch) return { name: "notFound", hash };
  const tokenId = parseId(decodeURIComponent(tokenMatch[1] as string));
  if (!tokenId) return { name: "notFound", hash };
  const params = new URLSearchParams(query);
  const route: TokenRoute = { name: "token", tokenId, interval: defaultInterval, days: defaultDays };
  const pairId = parsePairId(params.get("pair") ?? "");
  if (pairId) route.pairId = pairId;
  const side = params.get("side");
  if (side === "0" || side === "1") route.side = side === "0" ? 0 : 1;
  const interval = params.get("interval");
  if (isInterval(interval)) route.interval = interval;
  const days = Number(params.get("days"));
  if (isDays(days)) route.days = days;
  return route;
}

/** The hash of a route; defaults are left out so that plain token links stay short. */
export function formatRoute(route: Route): string {
  if (route.name === "home") return "#/";
  if (route.name === "notFound") return route.hash;
  const params = new URLSearchParams();
  if (route.pairId) params.set("pair", route.pairId);
  if (route.side !== undefined) params.set("side", String(route.side));
  if (route.interval !== defaultInterval) params.set("interval", route.interval);
  if (route.days !== defaultDays) params.set("days", String(route.days));
  const query = params.toString();
  return `#/token/${route.tokenId}${query ? `?${query.replaceAll("%3A", ":")}` : ""}`;
}

/** The link to a token's page. */
export function tokenHref(address: string, chain: string | number): string {
  return `#/token/${address.toLowerCase()}:${chain}`;
}
