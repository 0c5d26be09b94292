import { parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { BatchSwap, Hex, NewPool, Token } from "../model/index.js";
import { createApiKey, revokeApiKey } from "../store/api-keys.js";
import { advanceCheckpoint, initSyncState, insertChainRow } from "../store/chain-state.js";
import type { Db } from "../store/db.js";
import { saveWindows } from "../store/market-windows.js";
import { insertPools } from "../store/pools.js";
import { saveTokenPrices } from "../store/prices.js";
import { savePairLiquidity, saveTokenStats } from "../store/stats.js";
import { insertSwaps, saveSwapUsd } from "../store/swaps.js";
import { insertTokens } from "../store/tokens.js";

/**
 * A small hand-made market in the database, for the API's tests: chain 1 with the real USDC, a
 * look-alike "USDC" with no liquidity, WETH, a token without a price, two USDC/WETH pools and
 * 250 swaps on the real one. Every figure is known, so answers can be checked exactly.
 */
export const fixture = {
  chainId: 1,
  usdc: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
  fakeUsdc: "0x1111111111111111111111111111111111111111",
  weth: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
  wbtc: "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599",
  unpriced: "0x3333333333333333333333333333333333333333",
  pair: "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc",
  fakePair: "0x4444444444444444444444444444444444444444",
  factory: "0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f",
  router: "0x7a250d5630b4cf539739df2c5dacb4c659f2488d",
  swaps: 250,
  firstBlock: 1000,
  indexedBlock: 1300,
  /** Block time of block b: 12 s per block from this instant. */
  genesis: Date.parse("2026-11-20T00:00:00Z"),
} as const;

export const blockTime = (block: number) => new Date(fixture.genesis + block * 12_000);

/** The configuration the fixture goes with: chain 1 and the coins ETH (priced) and BTC (no price). */
export function fixtureConfig(overrides: Record<string, unknown> = {}): Config {
  return parseConfig({
    devnet: { enabled: false },
    tokenLists: ["@uniswap/default-token-list"],
    coins: { ETH: { chain: 1, token: fixture.weth }, BTC: { chain: 1, token: fixture.wbtc } },
    chains: [
      {
        id: 1,
        name: "Ethereum",
        rpc: ["http://127.0.0.1:9"],
        dexes: [{ name: "Uniswap V2", protocol: "v2", factory: fixture.factory, fee: 3000 }],
        referenceTokens: {
          stablecoins: [fixture.usdc],
          wrappedNative: fixture.weth,
          wrappedBtc: [fixture.wbtc],
        },
      },
    ],
    ...overrides,
  });
}

/** Swap i of the real pool: even ones sell 3000 USDC for 1 WETH, odd ones sell 1 WETH for 2990 USDC. */
export function fixtureSwap(i: number) {
  const block = fixture.firstBlock + Math.floor(i / 2);
  const logIndex = (i % 2) * 3 + 1;
  const usdcSold = i % 2 === 0;
  return {
    block,
    logIndex,
    amount0In: usdcSold ? 3000_000000n : 0n,
    amount1In: usdcSold ? 0n : 10n ** 18n,
    amount0Out: usdcSold ? 0n : 2990_000000n,
    amount1Out: usdcSold ? 10n ** 18n : 0n,
  };
}

/**
 * Fills the database and creates two API keys: one active, one revoked. Written with the store's
 * own writers, so the rows are what the indexer and the pricing would store.
 */
export async function loadMarketFixture(db: Db): Promise<{ key: string; revokedKey: string }> {
  const f = fixture;
  const chainId = f.chainId;
  await insertChainRow(db, { chainId, name: "Ethereum", genesisHash: "0x00", devnet: false });
  await initSyncState(db, chainId, f.firstBlock);
  await advanceCheckpoint(db, {
    chainId,
    previous: f.firstBlock - 1,
    next: { block: f.indexedBlock, hash: null, time: blockTime(f.indexedBlock) },
    figures: {
      headBlock: f.indexedBlock + 2,
      headBlockTime: blockTime(f.indexedBlock + 2),
      blocksPerSecond: null,
      swapsPerSecond: null,
    },
  });
  const tokens: Token[] = [
    { address: f.usdc, name: "USD Coin", symbol: "USDC", decimals: 6, totalSupply: 26000000000000000n },
    { address: f.fakeUsdc, name: "USD Coin", symbol: "USDC", decimals: 6, totalSupply: 1000000000000n },
    {
      address: f.weth,
      name: "Wrapped Ether",
      symbol: "WETH",
      decimals: 18,
      totalSupply: 3000000000000000000000000n,
    },
    { address: f.wbtc, name: "Wrapped BTC", symbol: "WBTC", decimals: 8, totalSupply: 15000000000000n },
    { address: f.unpriced, name: null, symbol: "ZZZ", decimals: null, totalSupply: null },
  ];
  await insertTokens(db, chainId, tokens);
  const pool = (address: Hex, token0: Hex, token1: Hex, reserve0: bigint, reserve1: bigint): NewPool => ({
    address,
    dex: "Uniswap V2",
    protocol: "v2",
    factory: f.factory,
    token0,
    token1,
    fee: 3000,
    tickSpacing: null,
    createdBlock: 900,
    createdLogIndex: 0,
    base: { reserve0, reserve1, sqrtPriceX96: null, liquidity: null, tick: null, block: 900, logIndex: null },
  });
  await insertPools(db, chainId, [
    pool(f.pair, f.usdc, f.weth, 40000000000000n, 13000000000000000000000n),
    pool(f.fakePair, f.fakeUsdc, f.weth, 100000000n, 33000000000000000n),
  ]);
  const maker: Hex = `0x${"9".repeat(40)}`;
  const swaps: BatchSwap[] = [];
  for (let i = 0; i < f.swaps; i++) {
    const s = fixtureSwap(i);
    swaps.push({
      pool: f.pair,
      dex: "Uniswap V2",
      protocol: "v2",
      token0: f.usdc,
      token1: f.weth,
      decimals0: 6,
      decimals1: 18,
      blockNumber: s.block,
      logIndex: s.logIndex,
      blockHash: "0xbb",
      blockTime: blockTime(s.block),
      txHash: `0x${i.toString(16).padStart(64, "0")}`,
      txIndex: 0,
      maker,
      exchange: f.router,
      sender: f.router,
      recipient: maker,
      amount0In: s.amount0In,
      amount1In: s.amount1In,
      amount0Out: s.amount0Out,
      amount1Out: s.amount1Out,
      reserve0: 40_000_000_000000n + BigInt(i),
      reserve1: 13000000000000000000000n,
      sqrtPriceX96: null,
      liquidity: null,
      tick: null,
      price: 3000,
    });
  }
  await insertSwaps(db, chainId, swaps);
  await saveSwapUsd(
    db,
    chainId,
    swaps.map((s) => ({
      blockNumber: s.blockNumber,
      logIndex: s.logIndex,
      time: s.blockTime.getTime(),
      token0Usd: 1,
      token1Usd: 3000,
      volumeUsd: 3000,
      series0Usd: null,
      series1Usd: null,
    })),
  );
  const prices: [string, number | null][] = [
    [f.usdc, 1],
    [f.weth, 3000.5],
    [f.fakeUsdc, null],
  ];
  await saveTokenPrices(
    db,
    chainId,
    prices.map(([token, usd]) => ({
      token,
      usdPrice: usd,
      blockNumber: f.indexedBlock,
      blockTime: blockTime(f.indexedBlock).getTime(),
      provenance: { method: usd === 1 ? "anchor" : "pools", pools: [], confidence: usd === null ? 0 : 1 },
    })),
  );
  await saveTokenStats(db, chainId, [
    { token: f.usdc, priceChange: 0.01, liquidityUsd: 80_000_000 },
    { token: f.weth, priceChange: -2.5, liquidityUsd: 80_000_000 },
    { token: f.fakeUsdc, priceChange: null, liquidityUsd: 0 },
  ]);
  await savePairLiquidity(db, chainId, [
    {
      pool: f.pair,
      token0: f.usdc,
      token1: f.weth,
      liquidityUsd: 80_000_000,
      liquidityExact: { digits: 80_000_000n, scale: 0 },
    },
    { pool: f.fakePair, token0: f.fakeUsdc, token1: f.weth, liquidityUsd: null, liquidityExact: null },
  ]);
  // The real pair's 24 hours: $750,000 traded, its price up 1.5 %; nothing in the shorter windows.
  const now = Date.now();
  const none = { priceChange: null, volumeUsd: 0, buys: 0, sells: 0, makers: 0 };
  await saveWindows(db, chainId, "pool", [
    {
      owner: f.pair,
      minute: now,
      windows: [none, none, none, { priceChange: 1.5, volumeUsd: 750_000, buys: 0, sells: 0, makers: 0 }],
      last: null,
      firstTradeAt: null,
    },
  ]);
  const { key } = await createApiKey(db, "test");
  const { key: revokedKey } = await createApiKey(db, "revoked");
  await revokeApiKey(db, "revoked");
  return { key, revokedKey };
}
