/**
 * The market records of GET /v1/tokens/market, /api/v1/pairs/market and /api/v1/pools/top
 * (extensions beyond the specification): their JSON schemas with examples, and the records made
 * from the store's rows. Numbers are made at this edge: raw supplies decimal-adjusted, non-finite
 * values null.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { ReferenceTokens } from "../config/schema.js";
import { finite, type ProtocolName } from "../model/index.js";
import { protocolNames, uniswapV2 } from "../protocols/index.js";
import type { PairMarketRow, StoredWindow, TokenMarketRow } from "../store/market-windows.js";
import { unitsOrNull } from "./numbers.js";
import { poolLabelFields, poolLabels } from "./pool-labels.js";
import { dateTime, examples, Nullable } from "./schemas.js";
import { toIso } from "./times.js";

const WindowFiguresSchema = Type.Object(
  {
    price_change: Nullable(
      Type.Number({
        description:
          "Percent change (5.2 = +5.2 %) from the price after the latest trade before the window (else its first trade) to the price after the latest trade; null when either is unknown.",
      }),
    ),
    volume_usd: Type.Number({ description: "USD volume of the window's trades (exact sum, rounded once)." }),
    buys: Type.Integer({ description: "Trades in which the token (pair: token0) left the pool." }),
    sells: Type.Integer({ description: "Trades in which it entered the pool." }),
    makers: Type.Integer({ description: "Distinct transaction senders among the window's trades." }),
  },
  { additionalProperties: false },
);

const WindowsSchema = Type.Object(
  {
    "5m": WindowFiguresSchema,
    "1h": WindowFiguresSchema,
    "6h": WindowFiguresSchema,
    "24h": WindowFiguresSchema,
  },
  {
    additionalProperties: false,
    description:
      "Per window, the trades of the last 5, 60, 360 or 1,440 one-minute UTC buckets up to the current minute (docs/API.md, Market windows).",
  },
);

const windowExample = (scale: number) => ({
  price_change: 0.1 * scale,
  volume_usd: 1234.5 * scale,
  buys: 3 * scale,
  sells: 2 * scale,
  makers: 4 * scale,
});
const windowsExample = {
  "5m": windowExample(1),
  "1h": windowExample(12),
  "6h": windowExample(70),
  "24h": windowExample(280),
};

export const TokenMarketRecord = Type.Object(
  {
    token_id: Type.String({ description: "Token id `<address>:<network id>`." }),
    chain: Type.Integer({ description: "Network id." }),
    contract: Type.String({ description: "Token contract address, lowercase." }),
    name: Nullable(Type.String()),
    symbol: Nullable(Type.String()),
    decimals: Nullable(Type.Integer()),
    usd_price: Nullable(
      Type.Number({ description: "Current USD price; null when no qualifying pool routes it." }),
    ),
    windows: WindowsSchema,
    liquidity_usd: Nullable(
      Type.Number({
        description: "USD liquidity of its pools at or above the liquidity floor whose tokens are priced.",
      }),
    ),
    total_supply: Nullable(Type.Number({ description: "Decimal-adjusted." })),
    fdv: Nullable(Type.Number({ description: "total_supply × usd_price." })),
    circulating_supply: Nullable(
      Type.Number({ description: "As configured (`pricing.circulatingSupply`); else null." }),
    ),
    market_cap: Nullable(Type.Number({ description: "circulating_supply × usd_price." })),
    pools: Type.Integer({ description: "Pools holding the token." }),
    first_trade_at: Nullable(dateTime("Time of its first indexed trade; null when none.")),
  },
  {
    additionalProperties: false,
    examples: [
      {
        token_id: examples.wethId,
        chain: 1,
        contract: examples.WETH,
        name: "Wrapped Ether",
        symbol: "WETH",
        decimals: 18,
        usd_price: 3012.5,
        windows: windowsExample,
        liquidity_usd: 123456.7,
        total_supply: 1000000,
        fdv: 3012500000,
        circulating_supply: null,
        market_cap: null,
        pools: 12,
        first_trade_at: "2026-11-21T10:00:00Z",
      },
    ],
  },
);

/** A pool's DEX family: one of the names the registry of families lists. */
export const ProtocolSchema = Type.Unsafe<ProtocolName>({ type: "string", enum: [...protocolNames] });

const pairFields = {
  pair_id: Type.String({ description: "Pair id `<pair address>:<network id>`." }),
  chain: Type.Integer({ description: "Network id." }),
  pair_address: Type.String({ description: "Without network suffix." }),
  factory_name: Type.String({ description: "The DEX's configured name." }),
  factory_address: Type.String(),
  protocol: ProtocolSchema,
  token0_address: Type.String({ description: "Token id, with network suffix." }),
  token1_address: Type.String({ description: "Token id, with network suffix." }),
  token0_symbol: Nullable(Type.String()),
  token1_symbol: Nullable(Type.String()),
  ...poolLabelFields,
  price: Nullable(
    Type.Number({ description: "Pool price of token0 in token1 after the latest trade; null when none." }),
  ),
  token0_usd_price: Nullable(Type.Number()),
  token1_usd_price: Nullable(Type.Number()),
  windows: WindowsSchema,
  liquidity_usd: Nullable(Type.Number({ description: "USD value of both balances; null when unknown." })),
  created_block: Type.Integer({ description: "Block of the pool's creation." }),
  created_at: Nullable(dateTime("Time of that block; null when no stored block of the index tells it.")),
  first_trade_at: Nullable(dateTime("Time of its first indexed trade; null when none.")),
};

const pairExample = {
  pair_id: examples.pairId,
  chain: 1,
  pair_address: examples.PAIR,
  factory_name: "Uniswap V2",
  factory_address: "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
  protocol: uniswapV2.name,
  token0_address: examples.usdcId,
  token1_address: examples.wethId,
  token0_symbol: "USDC",
  token1_symbol: "WETH",
  name: "WETH/USDC",
  base_address: examples.wethId,
  quote_address: examples.usdcId,
  hooks: null,
  price: 0.000332,
  token0_usd_price: 1,
  token1_usd_price: 3012.5,
  windows: windowsExample,
  liquidity_usd: 80246912.4,
  created_block: 10008355,
  created_at: "2020-05-05T21:09:32Z",
  first_trade_at: "2020-05-05T21:30:12Z",
};

export const PairMarketRecord = Type.Object(pairFields, {
  additionalProperties: false,
  examples: [pairExample],
});

export const TopPoolRecord = Type.Object(
  {
    ...pairFields,
    rank: Type.Integer({ minimum: 1, description: "1 for the first." }),
    trending_score: Type.Optional(
      Type.Number({ description: "sort=trending only: volume_usd(1h) ÷ (volume_usd(24h) ÷ 24)." }),
    ),
  },
  { additionalProperties: false, examples: [{ ...pairExample, rank: 1, trending_score: 3.2 }] },
);

type WindowsRecord = Static<typeof WindowsSchema>;

/** The windows of a record: zero volumes and counts, null changes, for a pool or token without trades. */
function windowsRecord(windows: readonly StoredWindow[] | null): WindowsRecord {
  const figure = (i: number) => {
    const w = windows?.[i];
    return {
      price_change: finite(w?.priceChange ?? null),
      volume_usd: finite(w?.volumeUsd ?? 0) ?? 0,
      buys: w?.buys ?? 0,
      sells: w?.sells ?? 0,
      makers: w?.makers ?? 0,
    };
  };
  return { "5m": figure(0), "1h": figure(1), "6h": figure(2), "24h": figure(3) };
}

const product = (a: number | null, b: number | null) => (a === null || b === null ? null : finite(a * b));

/** A token's market record; `circulating` is the configured circulating supply by token id. */
export function tokenMarketRecord(
  row: TokenMarketRow,
  circulating: Readonly<Record<string, number>>,
): Static<typeof TokenMarketRecord> {
  const id = `${row.token}:${row.chainId}`;
  const usdPrice = finite(row.usdPrice);
  const totalSupply = finite(unitsOrNull(row.totalSupply, row.decimals));
  const circulatingSupply = finite(circulating[id] ?? null);
  return {
    token_id: id,
    chain: row.chainId,
    contract: row.token,
    name: row.name,
    symbol: row.symbol,
    decimals: row.decimals,
    usd_price: usdPrice,
    windows: windowsRecord(row.windows),
    liquidity_usd: finite(row.liquidityUsd),
    total_supply: totalSupply,
    fdv: product(totalSupply, usdPrice),
    circulating_supply: circulatingSupply,
    market_cap: product(circulatingSupply, usdPrice),
    pools: row.pools,
    first_trade_at: row.firstTradeAt === null ? null : toIso(row.firstTradeAt),
  };
}

/** A pair's market record; `reference` names it (base/quote). */
export function pairMarketRecord(
  row: PairMarketRow,
  reference: ReferenceTokens | undefined,
): Static<typeof PairMarketRecord> {
  return {
    pair_id: `${row.pool}:${row.chainId}`,
    chain: row.chainId,
    pair_address: row.pool,
    factory_name: row.dex,
    factory_address: row.factory,
    protocol: row.protocol,
    token0_address: `${row.token0}:${row.chainId}`,
    token1_address: `${row.token1}:${row.chainId}`,
    token0_symbol: row.symbol0,
    token1_symbol: row.symbol1,
    ...poolLabels(reference, row),
    price: finite(row.lastPrice),
    token0_usd_price: finite(row.usd0),
    token1_usd_price: finite(row.usd1),
    windows: windowsRecord(row.windows),
    liquidity_usd: finite(row.liquidityUsd),
    created_block: row.createdBlock,
    created_at: row.createdAt === null ? null : toIso(row.createdAt),
    first_trade_at: row.firstTradeAt === null ? null : toIso(row.firstTradeAt),
  };
}
