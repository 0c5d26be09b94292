import { parseConfig } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { createApiKey } from "../store/api-keys.js";
import type { Db } from "../store/db.js";

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

/** Fills the database and creates two API keys: one active, one revoked. */
export async function loadMarketFixture(db: Db): Promise<{ key: string; revokedKey: string }> {
  const f = fixture;
  await db.query(`INSERT INTO chains (chain_id, name, genesis_hash) VALUES (1, 'Ethereum', '0x00')`);
  await db.query(
    `INSERT INTO sync_state (chain_id, indexed_block, indexed_block_time, head_block, head_block_time)
     VALUES (1, $1, $2, $3, $4)`,
    [f.indexedBlock, blockTime(f.indexedBlock), f.indexedBlock + 2, blockTime(f.indexedBlock + 2)],
  );
  const tokens: [string, string | null, string | null, number | null, string | null][] = [
    [f.usdc, "USD Coin", "USDC", 6, "26000000000000000"],
    [f.fakeUsdc, "USD Coin", "USDC", 6, "1000000000000"],
    [f.weth, "Wrapped Ether", "WETH", 18, "3000000000000000000000000"],
    [f.wbtc, "Wrapped BTC", "WBTC", 8, "15000000000000"],
    [f.unpriced, null, "ZZZ", null, null],
  ];
  for (const [address, name, symbol, decimals, supply] of tokens) {
    await db.query(
      `INSERT INTO tokens (chain_id, address, name, symbol, decimals, total_supply) VALUES (1, $1, $2, $3, $4, $5)`,
      [address, name, symbol, decimals, supply],
    );
  }
  const pools: [string, string, string, string, string][] = [
    [f.pair, f.usdc, f.weth, "40000000000000", "13000000000000000000000"],
    [f.fakePair, f.fakeUsdc, f.weth, "100000000", "33000000000000000"],
  ];
  for (const [address, token0, token1, reserve0, reserve1] of pools) {
    await db.query(
      `INSERT INTO pools (chain_id, address, dex, protocol, factory, token0, token1, fee, created_block, created_log_index, reserve0, reserve1)
       VALUES (1, $1, 'Uniswap V2', 'v2', $2, $3, $4, 3000, 900, 0, $5, $6)`,
      [address, f.factory, token0, token1, reserve0, reserve1],
    );
  }
  for (let i = 0; i < f.swaps; i++) {
    const s = fixtureSwap(i);
    await db.query(
      `INSERT INTO swaps (chain_id, block_number, log_index, block_hash, block_time, tx_hash, tx_index, pool, maker, exchange,
         sender, recipient, amount0_in, amount1_in, amount0_out, amount1_out, reserve0, reserve1, price,
         token0_usd, token1_usd, volume_usd)
       VALUES (1, $1, $2, '0xbb', $3, $4, 0, $5, $6, $7, $7, $6, $8, $9, $10, $11, $12, $13, 3000, 1, 3000, 3000)`,
      [
        s.block,
        s.logIndex,
        blockTime(s.block),
        `0x${i.toString(16).padStart(64, "0")}`,
        f.pair,
        `0x${"9".repeat(40)}`,
        f.router,
        s.amount0In.toString(),
        s.amount1In.toString(),
        s.amount0Out.toString(),
        s.amount1Out.toString(),
        String(40_000_000_000000n + BigInt(i)),
        "13000000000000000000000",
      ],
    );
  }
  const prices: [string, number | null][] = [
    [f.usdc, 1],
    [f.weth, 3000.5],
    [f.fakeUsdc, null],
  ];
  for (const [token, usd] of prices) {
    await db.query(
      `INSERT INTO token_prices (chain_id, token, usd_price, block_number, block_time, provenance)
       VALUES (1, $1, $2, $3, $4, $5)`,
      [
        token,
        usd,
        f.indexedBlock,
        blockTime(f.indexedBlock),
        JSON.stringify({
          method: usd === 1 ? "anchor" : "pools",
          pools: [],
          confidence: usd === null ? 0 : 1,
        }),
      ],
    );
  }
  const stats: [string, number | null, number][] = [
    [f.usdc, 0.01, 80_000_000],
    [f.weth, -2.5, 80_000_000],
    [f.fakeUsdc, null, 0],
  ];
  for (const [token, change, liquidity] of stats) {
    await db.query(
      `INSERT INTO token_stats (chain_id, token, price_change_24h, volume_usd_24h, liquidity_usd) VALUES (1, $1, $2, 0, $3)`,
      [token, change, liquidity],
    );
  }
  await db.query(
    `INSERT INTO pair_stats (chain_id, pool, volume_usd_24h, liquidity_usd, price_change_24h)
     VALUES (1, $1, 750000, 80000000, 1.5), (1, $2, 0, NULL, NULL)`,
    [f.pair, f.fakePair],
  );
  const { key } = await createApiKey(db, "test");
  const { key: revokedKey } = await createApiKey(db, "revoked");
  await db.query("UPDATE api_keys SET revoked_at = now() WHERE name = 'revoked'");
  return { key, revokedKey };
}
