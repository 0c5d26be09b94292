// The page's client of the tokenmarket HTTP API (docs/API.md). Same origin, `x-api-key` on
// every request, the API's error `message` kept so that the page shows it instead of a guess.
// Requests and answers are typed by the types generated from the API's OpenAPI document, so a
// change of the API that the page does not follow fails `npm run typecheck`.

import type { paths } from "./api-types.js";

/** The API's endpoints, from its OpenAPI document (web/src/api-types.ts, `npm run gen:api-types`). */
type Path = keyof paths;
type GetOf<P extends Path> = paths[P] extends { get: infer Operation } ? Operation : never;

/** The query parameters of `GET path`, as the API documents them. */
export type QueryOf<P extends Path> =
  GetOf<P> extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;

/** The JSON body of `GET path`'s 200 answer, as the API documents it. */
export type AnswerOf<P extends Path> =
  GetOf<P> extends { responses: { 200: { content: { "application/json": infer Body } } } } ? Body : never;

/** A search result (with `contract` and `project_info`). */
export type SearchToken = AnswerOf<"/v1/tokens/search">[number];

export type ProjectInfo = SearchToken["project_info"];

/** `/v1/tokens/metadata` with one token id: the token record without `contract` and `project_info`. */
export type TokenMetadata = Exclude<AnswerOf<"/v1/tokens/metadata">, readonly unknown[]>;

export type Pair = AnswerOf<"/api/v1/pairs">[number];

export type Candle = AnswerOf<"/api/v1/candles">[number];

export type Trade = AnswerOf<"/api/v1/trades">[number];

export type LineChart = AnswerOf<"/v1/tokens/line-chart">;

/** The statistics windows of `/v1/tokens/market` and the pair market records, shortest first. */
export const windowNames = ["5m", "1h", "6h", "24h"] as const;
export type WindowName = (typeof windowNames)[number];

/** A token's market record (`GET /v1/tokens/market`): price, windows, liquidity, FDV, market cap, pools. */
export type TokenMarket = AnswerOf<"/v1/tokens/market">[number];

/** The four windows' figures (trades with `block_time > now − window`): change, volume, buys, sells, makers. */
export type Windows = TokenMarket["windows"];
export type WindowStats = Windows[WindowName];

/** A row of `GET /api/v1/pools/top`: a pair market record with its rank. */
export type TopPool = AnswerOf<"/api/v1/pools/top">[number];

export type PoolSort = NonNullable<QueryOf<"/api/v1/pools/top">["sort"]>;

/** A configured chain (`GET /v1/networks`), with its block explorer's base URL. */
export type Network = AnswerOf<"/v1/networks">[number];

export type WebConfig = {
  demoKey?: string;
  /** Origins (`https://host`) whose token logos the page's Content-Security-Policy allows. */
  logoHosts?: string[];
};

/** An answer of the API that is not 2xx, or no answer at all (status 0). */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    /** HTTP status; 0 when the service could not be reached. */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** How fresh an answer is for one network: the last block fully indexed and its time. */
export type Freshness = { block: number | undefined; at: string | undefined };

/** Reads one network's entry of `X-Indexed-Block` / `X-Indexed-At` (`<chainId>=<value>,…`). */
export function parseFreshness(
  blockHeader: string | null,
  atHeader: string | null,
  chain: string,
): Freshness {
  const entry = (header: string | null) =>
    header
      ?.split(",")
      .map((part) => part.trim().split("="))
      .find(([id]) => id === chain)?.[1];
  const raw = entry(blockHeader);
  const block = raw === undefined || raw === "" ? Number.NaN : Number(raw);
  return { block: Number.isSafeInteger(block) ? block : undefined, at: entry(atHeader) };
}

export type MetadataAnswer = { token: TokenMetadata; freshness: Freshness };

export type TradesPage = { trades: Trade[]; nextCursor: string | undefined };

export type CandleQuery = {
  assetId: string;
  pairId: string;
  from: Date;
  to: Date;
  interval: QueryOf<"/api/v1/candles">["interval"];
};

export type TradesQuery = { assetId: string; pairId: string; limit?: number; cursor?: string | undefined };

export type ApiClient = {
  search(searchString: string, signal?: AbortSignal): Promise<SearchToken[]>;
  /** The token's record and how fresh the data of its network is. */
  metadata(tokenId: string, signal?: AbortSignal): Promise<MetadataAnswer>;
  pairs(assetId: string, signal?: AbortSignal): Promise<Pair[]>;
  candles(query: CandleQuery, signal?: AbortSignal): Promise<Candle[]>;
  trades(query: TradesQuery, signal?: AbortSignal): Promise<TradesPage>;
  lineChart(tokenId: string, days: number, signal?: AbortSignal): Promise<LineChart>;
  /** The market records of up to 50 tokens, by token id; unknown tokens are left out. */
  tokenMarkets(tokenIds: readonly string[], signal?: AbortSignal): Promise<Map<string, TokenMarket>>;
  poolsTop(query: { chain: number; sort: PoolSort; limit: number }, signal?: AbortSignal): Promise<TopPool[]>;
  networks(signal?: AbortSignal): Promise<Network[]>;
  webConfig(): Promise<WebConfig>;
};

type Fetch = typeof fetch;

/** Seconds precision, `Z`: the shape the spec shows for `from`/`to`. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** The message of an error answer: the API's `message` when the body has one, else the status text. */
export async function errorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    if (typeof body.message === "string" && body.message !== "") return body.message;
    if (typeof body.error === "string" && body.error !== "") return body.error;
  } catch {
    // Not JSON (a proxy's page, say): fall through to the status line.
  }
  return `${response.status} ${response.statusText || "error"}`.trim();
}

/** A client of the API at `baseUrl` (empty: the page's own origin). `getKey` is read per request. */
export function createApiClient(options: {
  getKey: () => string;
  baseUrl?: string;
  fetch?: Fetch;
}): ApiClient {
  const baseUrl = options.baseUrl ?? "";
  const doFetch: Fetch = options.fetch ?? ((input, init) => fetch(input, init));

  async function request<P extends Path>(
    path: P,
    params: [QueryOf<P>] extends [never] ? Record<string, never> : QueryOf<P>,
    signal?: AbortSignal,
  ): Promise<{ body: AnswerOf<P>; response: Response }> {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
      if (value !== undefined) query.set(name, String(value));
    }
    const search = query.toString();
    const url = `${baseUrl}${path}${search ? `?${search}` : ""}`;
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: { "x-api-key": options.getKey(), accept: "application/json" },
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if ((error as Error).name === "AbortError") throw error;
      throw new ApiError(0, `Cannot reach the service: ${(error as Error).message}`);
    }
    if (!response.ok) throw new ApiError(response.status, await errorMessage(response));
    return { body: (await response.json()) as AnswerOf<P>, response };
  }

  return {
    async search(searchString, signal) {
      return (await request("/v1/tokens/search", { searchString }, signal)).body;
    },
    async metadata(tokenId, signal) {
      const { body, response } = await request("/v1/tokens/metadata", { tokenId }, signal);
      // One id (no comma) is answered with one record, never a list.
      if (Array.isArray(body)) throw new ApiError(response.status, "metadata of one token came as a list");
      const chain = tokenId.split(":")[1] ?? "";
      const freshness = parseFreshness(
        response.headers.get("x-indexed-block"),
        response.headers.get("x-indexed-at"),
        chain,
      );
      return { token: body, freshness };
    },
    async pairs(assetId, signal) {
      return (await request("/api/v1/pairs", { asset_id: assetId }, signal)).body;
    },
    async candles(query, signal) {
      const params = {
        asset_id: query.assetId,
        pair_id: query.pairId,
        from: isoSeconds(query.from),
        to: isoSeconds(query.to),
        interval: query.interval,
      };
      return (await request("/api/v1/candles", params, signal)).body;
    },
    async trades(query, signal) {
      const params: QueryOf<"/api/v1/trades"> = { asset_id: query.assetId, pair_id: query.pairId };
      if (query.limit !== undefined) params.limit = query.limit;
      if (query.cursor) params.cursor = query.cursor;
      const { body, response } = await request("/api/v1/trades", params, signal);
      return { trades: body, nextCursor: response.headers.get("x-next-cursor") || undefined };
    },
    async lineChart(tokenId, days, signal) {
      return (await request("/v1/tokens/line-chart", { tokenId, days }, signal)).body;
    },
    async tokenMarkets(tokenIds, signal) {
      if (tokenIds.length === 0) return new Map();
      const list = (await request("/v1/tokens/market", { tokenId: tokenIds.join(",") }, signal)).body;
      return new Map(list.map((t) => [t.token_id.toLowerCase(), t]));
    },
    async poolsTop(query, signal) {
      return (await request("/api/v1/pools/top", query, signal)).body;
    },
    async networks(signal) {
      return (await request("/v1/networks", {}, signal)).body;
    },
    async webConfig() {
      try {
        const response = await doFetch(`${baseUrl}/web-config.json`);
        return response.ok ? ((await response.json()) as WebConfig) : {};
      } catch {
        return {};
      }
    },
  };
}
