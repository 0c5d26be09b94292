import { z } from "zod";
import { protocolNames } from "../protocols/index.js";

/** A 0x-prefixed 20-byte address, normalised to lowercase. */
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be 0x followed by 40 hex digits")
  .transform((a) => a.toLowerCase() as `0x${string}`);

const url = z.string().regex(/^(https?|wss?):\/\/\S+$/, "must be an http(s):// or ws(s):// URL");

export const dexSchema = z.strictObject({
  /** Shown as `factory_name` in the API. */
  name: z.string().min(1),
  /** The DEX family, one of those src/protocols registers. */
  protocol: z.enum(protocolNames),
  factory: address,
  /** V2 swap fee in hundredths of a bip (3000 = 0.3 %); V3 pools carry their own fee. */
  fee: z.number().int().min(0).max(1_000_000).optional(),
  /**
   * Swap event layout: "uniswap" (Uniswap V3's 7 fields, also Algebra V1's), "pancake"
   * (PancakeSwap V3, 9 fields, with protocolFeesToken0/1, so its topic0 differs) or "integral"
   * (Algebra Integral 1.2, with overrideFee and pluginFee).
   */
  swapEvent: z.enum(["uniswap", "pancake", "integral"]).default("uniswap"),
  /**
   * The block the factory (or manager) was deployed in: the factory scan starts there. Without
   * it the scan finds it by a binary search of eth_getCode, which needs the node's old state.
   */
  deployedBlock: z.number().int().min(0).optional(),
});

export const referenceTokensSchema = z.strictObject({
  /** USD anchors: priced at 1 USD. */
  stablecoins: z.array(address).min(1),
  /** The wrapped native coin (WETH, WBNB, WMATIC). */
  wrappedNative: address,
  /** Wrapped BTC tokens (WBTC, BTCB). */
  wrappedBtc: z.array(address).default([]),
  /** Further tokens trusted as routing hops once they are priced (for example WETH on Polygon). */
  others: z.array(address).default([]),
});

export const chainSchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string().min(1),
  /** JSON-RPC endpoints, tried in order on failure. */
  rpc: z.array(url).min(1),
  /** Optional WebSocket endpoint for new-head subscriptions; polling is used without it. */
  ws: url.optional(),
  /** Blocks behind the head that are indexed (0 = the head itself). */
  confirmations: z.number().int().min(0).default(0),
  /** First block to index. */
  startBlock: z.number().int().min(0).default(0),
  /** Depth of the kept window of block hashes for reorg detection. */
  reorgWindow: z.number().int().min(1).default(64),
  /** The chain counts as ready when its indexer is at most this many blocks behind the head. */
  maxLagBlocks: z.number().int().min(0).default(20),
  /**
   * The chain is not ready when its node has not answered the head for this long (ms): the
   * indexer cannot see how far the chain has moved, so its lag is unknown.
   */
  maxHeadAgeMs: z.number().int().min(100).default(20_000),
  pollIntervalMs: z.number().int().min(50).default(1000),
  /** Upper bound of the adaptive eth_getLogs range. */
  maxBlockRange: z.number().int().min(1).default(2000),
  /**
   * Where swaps' senders (maker) and targets (exchange) are read: "fullBlocks" (eth_getBlockByNumber
   * with transactions, one call per block with swaps, its header included), "blockReceipts"
   * (eth_getBlockReceipts, one call per block with swaps), "transactions" (eth_getTransactionByHash
   * per swap), or "auto": probed at start in that order of preference (see src/sync/README.md).
   */
  transactionSource: z.enum(["auto", "blockReceipts", "fullBlocks", "transactions"]).default("auto"),
  /**
   * A devnet chain is reborn at each start: when its genesis hash changes its old data is
   * dropped and it is indexed afresh. On a real chain a changed genesis is a fatal error.
   */
  devnet: z.boolean().default(false),
  /**
   * The chain's block explorer, for links (`${explorerUrl}/tx/<hash>`, `/address/<addr>`,
   * `/token/<addr>`, `/block/<n>`); shown by GET /v1/networks. No trailing slash is kept.
   */
  explorerUrl: z
    .string()
    .regex(/^https?:\/\/[^\s/]+(\/\S*)?$/, "must be an http(s):// URL")
    .transform((u) => u.replace(/\/+$/, ""))
    .optional(),
  /** The symbol of the chain's native coin (ETH, BNB, POL); shown by GET /v1/networks. */
  nativeSymbol: z.string().min(1).max(16).optional(),
  dexes: z.array(dexSchema).min(1),
  referenceTokens: referenceTokensSchema,
});

/** A retention in whole days: null or 0 keeps forever, anything else at least 2 (storage.retention). */
const retentionDays = z
  .number()
  .int()
  .min(0)
  .nullable()
  .default(null)
  .refine(
    (days) => days === null || days === 0 || days >= 2,
    "must be null or 0 (keep forever) or at least 2 days",
  );

export const configSchema = z.strictObject({
  database: z
    .strictObject({
      /** External Postgres ≥ 15. Without it the embedded Postgres is started. */
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL")
        .optional(),
      embedded: z
        .strictObject({
          dataDir: z.string().min(1).default(".data/postgres"),
          port: z.number().int().min(1).max(65535).default(54329),
        })
        .prefault({}),
      /** Connecting, up to the server's first answer (ms). */
      connectTimeoutMs: z.number().int().min(100).default(5000),
      /** Server-side statement_timeout of the indexer's pool (ms); the API has api.databaseTimeoutMs. */
      statementTimeoutMs: z.number().int().min(100).default(300_000),
      /** Server-side idle_in_transaction_session_timeout (ms). */
      idleInTransactionTimeoutMs: z.number().int().min(100).default(60_000),
      /**
       * Streaming replicas the API reads from (weighted choice among the healthy ones); writes
       * (API keys, rate limits) and the commit notifications stay on the primary.
       */
      replicas: z
        .array(
          z.strictObject({
            url: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL"),
            weight: z.number().min(0).default(1),
          }),
        )
        .default([]),
      /**
       * Share of reads the primary takes beside the replicas (weights compare with the replicas'); 0
       * leaves it as the fallback only. Without replicas the primary answers everything.
       */
      primaryReadWeight: z.number().min(0).default(0),
      /** A replica further behind the primary than this (seconds of replay) is skipped until it catches up. */
      replicaMaxLagSeconds: z.number().positive().default(5),
    })
    .prefault({}),
  /**
   * The time-partitioned tables (migration 011, docs/ARCHITECTURE.md "Partitions and retention"):
   * how far ahead their partitions are made and how long their rows are kept.
   */
  storage: z
    .strictObject({
      /**
       * Days kept, enforced by dropping whole partitions (a partition goes once all its rows are
       * older); null or 0: kept forever (the default). Hourly and daily candles and the hourly
       * USD series are always kept. At least 2 days: the 24-hour statistics read the last day of
       * 1-minute candles and 5-minute series, and a rollback rebuilds the day's candles from its swaps.
       */
      retention: z
        .strictObject({
          /** Swaps (trades): GET /api/v1/trades pages end at the oldest kept. */
          swapsDays: retentionDays,
          /** 1-minute pool candles: the 1m, 5m, 15m and 30m candles of GET /api/v1/candles. */
          candles1mDays: retentionDays,
          /** 5-minute USD series of tokens: the 5, 15 and 30 minute intervals of /v1/tokens/candle-chart. */
          series5mDays: retentionDays,
        })
        .prefault({}),
      /** Partitions made ahead of the current one, per table (a swaps partition is a day, the others a week). */
      partitionsAhead: z.number().int().min(1).max(60).default(3),
      /** How often the indexer's upkeep runs (partitions ahead, rows out of DEFAULT, retention); also at start. */
      upkeepIntervalMs: z.number().int().min(1000).default(3_600_000),
    })
    .prefault({}),
  api: z
    .strictObject({
      host: z.string().default("127.0.0.1"),
      /** Serves /v1/ and, unless dataPort is set, /api/v1/. */
      port: z.number().int().min(0).max(65535).default(8080),
      /** When set, /api/v1/ is served on this separate listener. */
      dataPort: z.number().int().min(0).max(65535).optional(),
      rateLimit: z
        .strictObject({
          /** Requests allowed per key per window. */
          max: z.number().int().min(1).default(1200),
          windowMs: z.number().int().min(100).default(60_000),
          /**
           * Where the counters live: "database" (one budget per key across every API process, in an
           * UNLOGGED table on the primary) or "memory" (per process; enough for a single `start`).
           */
          store: z.enum(["database", "memory"]).default("database"),
        })
        .prefault({}),
      /**
       * Origins allowed to call the API from a browser (CORS): "*" for any (keys travel in a
       * header, never in cookies, so this exposes nothing); [] turns CORS off.
       */
      corsOrigins: z
        .array(
          z.string().regex(/^(\*|https?:\/\/[^/\s]+)$/, 'must be "*" or an origin like https://app.example'),
        )
        .default(["*"]),
      /**
       * Print a demo key at start and offer it to the explorer page (same origin only). Only on a
       * devnet configuration and a loopback listener (api.host 127.0.0.1, ::1 or localhost).
       */
      demoKey: z.boolean().default(true),
      /** Most time an answer may take to drain to the client once sent; then the connection is closed. */
      writeTimeoutMs: z.number().int().min(100).default(30_000),
      /**
       * Most time a request may take to arrive whole (headers and body) from its first byte, and
       * a connection may stay silent before its first request: then it is closed (a client that
       * trickles its headers, slowloris, holds no connection longer). Checked every second.
       */
      requestTimeoutMs: z.number().int().min(100).default(30_000),
      /** An idle keep-alive connection between requests is closed after this long. */
      keepAliveTimeoutMs: z.number().int().min(100).default(5000),
      /**
       * The API's database bound: a request that cannot get a database answer within this long
       * is a 503 with Retry-After (client-side query timeout and server-side statement_timeout
       * of the API's pool).
       */
      databaseTimeoutMs: z.number().int().min(100).default(4000),
      /** Failed key checks allowed per client address per window before 429 (wrong keys flood). */
      failedKeyLimit: z
        .strictObject({
          max: z.number().int().min(1).default(20),
          windowMs: z.number().int().min(100).default(60_000),
        })
        .prefault({}),
      /** The WebSocket stream `/v1/stream` (docs/API.md "Stream"); limits are per API process. */
      stream: z
        .strictObject({
          /** Open stream connections one key may hold (per API process); one more is a 429 and close 4429. */
          connectionsPerKey: z.number().int().min(1).default(10),
          /** Subscriptions one connection may hold; each asset of a prices subscription counts as one. */
          subscriptionsPerConnection: z.number().int().min(1).default(100),
          /** Messages a client may send per second; the others of that second are answered 429 and ignored. */
          messagesPerSecond: z.number().int().min(1).default(50),
          /**
           * Bytes that may wait in a connection's send buffer; a message that would go beyond is
           * not sent and the connection is closed with 4008 (slow consumer).
           */
          maxBufferedBytes: z
            .number()
            .int()
            .min(1024)
            .default(1024 * 1024),
          /** Largest client message answered (bigger ones get a 400); frames over 1 MiB close the connection (1009). */
          maxMessageBytes: z.number().int().min(256).max(1_048_576).default(16_384),
          /** Time a connection without `x-api-key` has to send its auth message (then 403 and close 4403). */
          authTimeoutMs: z.number().int().min(100).default(10_000),
          /** How often the chains' indexed blocks are polled while commit notifications are down. */
          pollIntervalMs: z.number().int().min(50).default(1000),
        })
        .prefault({}),
    })
    .prefault({}),
  /** The `tokenmarket index` role's own listener for /healthz, /readyz and /metrics (0: a free port). */
  indexer: z
    .strictObject({
      host: z.string().default("127.0.0.1"),
      port: z.number().int().min(0).max(65535).default(8081),
    })
    .prefault({}),
  devnet: z
    .strictObject({
      enabled: z.boolean().default(true),
      /** Which configured chain the devnet serves. */
      chainId: z.number().int().positive().default(31337),
      port: z.number().int().min(1).max(65535).default(8545),
      seed: z.number().int().default(42),
      historyDays: z.number().min(0).max(30).default(7),
      /** Live trading: mean time between blocks with trades. */
      liveBlockIntervalMs: z.number().int().min(100).default(2000),
    })
    .prefault({}),
  pricing: z
    .strictObject({
      /** A pool whose quote-side liquidity is below this (USD) never moves a token's USD price. */
      liquidityFloorUsd: z.number().min(0).default(10_000),
      /**
       * A pool price further than this fraction from the token's liquidity-weighted median price
       * across its other pools is left out (a thin pool pushed by one trade).
       */
      maxDeviation: z.number().positive().default(0.1),
      /**
       * Circulating supplies (decimal-adjusted token units) by token id `<address>:<chain id>`:
       * the market cap of GET /v1/tokens/market is this × the USD price (null for other tokens).
       */
      circulatingSupply: z
        .record(
          z
            .string()
            .regex(/^0x[0-9a-fA-F]{40}:[1-9][0-9]{0,9}$/, "keys must be token ids <address>:<chain id>"),
          z.number().finite().min(0),
        )
        .transform((supplies) =>
          Object.fromEntries(Object.entries(supplies).map(([id, supply]) => [id.toLowerCase(), supply])),
        )
        .default({}),
      /**
       * A pool trends (GET /api/v1/pools/top?sort=trending) only with at least this USD volume in
       * the last hour, and a depth liquidity at or above liquidityFloorUsd.
       */
      trendingMinVolumeUsd: z.number().min(0).default(1000),
      /**
       * A chain with more than `fromPools` pools refreshes its market-wide figures (USD prices of
       * untraded tokens, liquidity, token statistics) a share per batch: the batch's own tokens and
       * pools, and the next `tokens` tokens and `pools` pools in turn (docs/PRICING.md). A smaller
       * chain, or a share of 0, refreshes all of them every batch.
       */
      figuresPerBatch: z
        .strictObject({
          tokens: z.number().int().min(0).default(1_000),
          pools: z.number().int().min(0).default(1_000),
          fromPools: z.number().int().min(0).default(10_000),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Coin symbols for /v1/coins/price: symbol → the reference token that prices it. */
  coins: z
    .record(
      z.string().regex(/^[A-Z0-9]{1,10}$/, "coin symbols are 1 to 10 upper-case letters or digits"),
      z.strictObject({ chain: z.number().int().positive(), token: address }),
    )
    .default({}),
  /** Token lists (Token Lists format) for logos; paths relative to the project or package names. */
  tokenLists: z.array(z.string()).default([]),
  /** The explorer page at `/`. */
  web: z
    .strictObject({
      /**
       * Origins the page may load token logos from (the token lists' logo hosts, for example
       * `https://assets.coingecko.com`): they join its Content-Security-Policy `img-src`; a logo on
       * any other host is not loaded (the token gets a monogram). Empty: only this server's logos.
       */
      logoHosts: z
        .array(
          z
            .string()
            .regex(
              /^https:\/\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?$/,
              "must be an https origin like https://assets.coingecko.com (lowercase, no path)",
            ),
        )
        .default([]),
    })
    .prefault({}),
  /** A curated JSON file of project info (website, twitter, discord, logo) keyed by token id. */
  projectInfoFile: z.string().optional(),
  chains: z.array(chainSchema).min(1),
});

export type Config = z.infer<typeof configSchema>;
export type ChainConfig = z.infer<typeof chainSchema>;
export type DexConfig = z.infer<typeof dexSchema>;
export type ReferenceTokens = z.infer<typeof referenceTokensSchema>;
