// The page's client of the tokenmarket HTTP API (docs/API.md). Same origin, `x-api-key` on
// every request, the API's error `message` kept so that the page shows it instead of a guess.

export type ProjectInfo = {
  website: string | null;
  logo_url: string | null;
  twitter: string | null;
  discord: string | null;
};

/** A search result (spec 2.2, with `contract` and `project_info`). */
export type SearchToken = {
  contract: string;
  chain: string;
  /** null when the contract does not tell. */
  name: string | null;
  symbol: string | null;
  usd_price: number | null;
  price_change: number | null;
  decimals: number | null;
  total_supply: number | null;
  project_info: ProjectInfo | null;
};

/** `/v1/tokens/metadata` with one token id: the token record without `contract` and `project_info`. */
export type TokenMetadata = Omit<SearchToken, "contract" | "project_info"> & { contract?: string };

export type Pair = {
  pair_id: string;
  chain: number;
  change: number | null;
  factory_address: string;
  factory_name: string;
  liquidity_value: number | null;
  pair_address: string;
  /** Token ids (`<address>:<chain>`). */
  token0_address: string;
  token1_address: string;
  token0_price: number | null;
  token1_price: number | null;
  token0_reserves: number | null;
  token1_reserves: number | null;
  token0_symbol: string | null;
  token1_symbol: string | null;
  volume: number | null;
};

export type Candle = {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  date: string;
  /** Interval start, milliseconds since the epoch. */
  time: number;
};

export type Trade = {
  pair_id: string;
  date: string;
  block_number: number;
  chain: number;
  /** The contract the transaction called; null when unknown. */
  exchange: string | null;
  factory_address: string;
  hash: string;
  log_index: number;
  /** The transaction's sender; null when unknown. */
  maker: string | null;
  pair_address: string;
  token0_address: string;
  token1_address: string;
  token0_amount: number | null;
  token1_amount: number | null;
  token0_price: number | null;
  token1_price: number | null;
  token0_reserves: number | null;
  token1_reserves: number | null;
  token0_symbol: string | null;
  token1_symbol: string | null;
  side: "buy" | "sell";
  price: number | null;
  /** USD value of the trade, null when unknown. */
  volume: number | null;
};

export type LineChart = { labels: string[]; data: number[] };

/** The statistics windows of `/v1/tokens/market` and the pair market records, shortest first. */
export const windowNames = ["5m", "1h", "6h", "24h"] as const;
export type WindowName = (typeof windowNames)[number];

/** One window's figures: trades with `block_time > now − window`. */
export type WindowStats = {
  /** Percent (5.2 means +5.2 %); null without a price at the window's start or now. */
  price_change: number | null;
  volume_usd: number | null;
  /** Trades in which the token (a pair: token0) left the pool. */
  buys: number;
  sells: number;
  /** Distinct transaction senders. */
  makers: number;
};

export type Windows = Record<WindowName, WindowStats>;

/** A token's market record (`GET /v1/tokens/market`). */
export type TokenMarket = {
  token_id: string;
  chain: number;
  contract: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
  usd_price: number | null;
  windows: Windows;
  liquidity_usd: number | null;
  total_supply: number | null;
  fdv: number | null;
  circulating_supply: number | null;
  market_cap: number | null;
  /** Pools holding the token. */
  pools: number;
  first_trade_at: string | null;
};

/** A pair's market record (`GET /api/v1/pairs/market`, and the rows of `pools/top`). */
export type PairMarket = {
  pair_id: string;
  chain: number;
  pair_address: string;
  factory_name: string;
  factory_address: string;
  protocol: string;
  /** Token ids (`<address>:<chain>`). */
  token0_address: string;
  token1_address: string;
  token0_symbol: string | null;
  token1_symbol: string | null;
  /** token0 in token1. */
  price: number | null;
  token0_usd_price: number | null;
  token1_usd_price: number | null;
  windows: Windows;
  liquidity_usd: number | null;
  created_block: number | null;
  created_at: string | null;
  first_trade_at: string | null;
};

export const poolSorts = ["volume", "liquidity", "trending", "new"] as const;
export type PoolSort = (typeof poolSorts)[number];

/** A row of `GET /api/v1/pools/top`. */
export type TopPool = PairMarket & { rank: number; trending_score?: number | null };

/** A configured chain (`GET /v1/networks`). */
export type Network = {
  chain: number;
  name: string;
  native_symbol: string | null;
  /** Block explorer base URL: `${explorer_url}/tx/<hash>`, `/address/…`, `/token/…`, `/block/<n>`. */
  explorer_url: string | null;
  indexed_block: number | null;
  indexed_at: string | null;
  ready: boolean;
  dexes: number;
  pools: number;
  tokens: number;
};

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
  interval: string;
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
  /** The token's market record; undefined when the API does not know the token. */
  tokenMarket(tokenId: string, signal?: AbortSignal): Promise<TokenMarket | undefined>;
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

  async function request(
    path: string,
    params: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<{ body: unknown; response: Response }> {
    const query = new URLSearchParams(params).toString();
    const url = `${baseUrl}${path}${query ? `?${query}` : ""}`;
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
    return { body: await response.json(), response };
  }

  return {
    async search(searchString, signal) {
      return (await request("/v1/tokens/search", { searchString }, signal)).body as SearchToken[];
    },
    async metadata(tokenId, signal) {
      const { body, response } = await request("/v1/tokens/metadata", { tokenId }, signal);
      const chain = tokenId.split(":")[1] ?? "";
      const freshness = parseFreshness(
        response.headers.get("x-indexed-block"),
        response.headers.get("x-indexed-at"),
        chain,
      );
      return { token: body as TokenMetadata, freshness };
    },
    async pairs(assetId, signal) {
      return (await request("/api/v1/pairs", { asset_id: assetId }, signal)).body as Pair[];
    },
    async candles(query, signal) {
      const params = {
        asset_id: query.assetId,
        pair_id: query.pairId,
        from: isoSeconds(query.from),
        to: isoSeconds(query.to),
        interval: query.interval,
      };
      return (await request("/api/v1/candles", params, signal)).body as Candle[];
    },
    async trades(query, signal) {
      const params: Record<string, string> = { asset_id: query.assetId, pair_id: query.pairId };
      if (query.limit !== undefined) params.limit = String(query.limit);
      if (query.cursor) params.cursor = query.cursor;
      const { body, response } = await request("/api/v1/trades", params, signal);
      return { trades: body as Trade[], nextCursor: response.headers.get("x-next-cursor") || undefined };
    },
    async lineChart(tokenId, days, signal) {
      return (await request("/v1/tokens/line-chart", { tokenId, days: String(days) }, signal))
        .body as LineChart;
    },
    async tokenMarket(tokenId, signal) {
      const list = (await request("/v1/tokens/market", { tokenId }, signal)).body as TokenMarket[];
      return list.find((t) => t.token_id === tokenId) ?? list[0];
    },
    async poolsTop(query, signal) {
      const params = { chain: String(query.chain), sort: query.sort, limit: String(query.limit) };
      return (await request("/api/v1/pools/top", params, signal)).body as TopPool[];
    },
    async networks(signal) {
      return (await request("/v1/networks", {}, signal)).body as Network[];
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
