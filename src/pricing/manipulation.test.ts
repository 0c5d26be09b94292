import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestDb, type TestDb } from "../_test/db.js";
import {
  createSyntheticChain,
  ingestSyntheticChain,
  prepareSyntheticChain,
  type SyntheticChain,
} from "../_test/synthetic-chain.js";
import type { Hex } from "../decode/types.js";
import { createSilentLogger } from "../internal/logger.js";
import { createPricing, type Pricing } from "./pricing.js";

const CHAIN = 903;
const E18 = 10n ** 18n;
const E6 = 10n ** 6n;

type PriceRow = {
  token: string;
  usd_price: number | null;
  provenance: { method: string; dropped: { pool: string }[]; pools: { pool: string }[] };
};

describe("prices a thin pool cannot fake", () => {
  let t: TestDb;
  let chain: SyntheticChain;
  let pricing: Pricing;
  const tok: Record<string, Hex> = {};
  const pool: Record<string, Hex> = {};

  const prices = async () => {
    const { rows } = await t.db.query<PriceRow>(
      "SELECT token, usd_price, provenance FROM token_prices WHERE chain_id = $1",
      [CHAIN],
    );
    return new Map(rows.map((r) => [r.token, r]));
  };
  const ingest = () => ingestSyntheticChain(t.db, pricing, chain);

  before(async () => {
    t = await createTestDb();
    chain = createSyntheticChain({ chainId: CHAIN, startTime: Date.parse("2024-06-01T00:00:00Z") / 1000 });
    for (const [symbol, decimals] of [
      ["USDC", 6],
      ["WETH", 18],
      ["LINK", 18],
      ["FAKEUSDC", 6],
      ["SCAM", 18],
      ["DUST", 12],
    ] as const) {
      tok[symbol] = chain.token(symbol, decimals);
    }
    const h = (s: string) => tok[s] as Hex;
    const add = (key: string, a: string, b: string, amountA: bigint, amountB: bigint) => {
      pool[key] = chain.pool(h(a), h(b));
      chain.mint(pool[key] as Hex, { [h(a)]: amountA, [h(b)]: amountB });
    };
    add("usdcWeth", "USDC", "WETH", 3_000_000n * E6, 1000n * E18); // WETH 3,000
    add("linkUsdc", "LINK", "USDC", 133_333n * E18, 2_000_000n * E6); // LINK 15, $4M deep
    add("linkWeth", "LINK", "WETH", 2000n * E18, 10n * E18); // LINK 15, $60k: above the floor
    add("fakeWeth", "FAKEUSDC", "WETH", 6000n * E6, E18 / 2n); // the look-alike at 0.25, $3k of WETH
    add("fakeUsdc", "FAKEUSDC", "USDC", 100n * E6, 100n * E6); // $200 against the real USDC
    add("scamFake", "SCAM", "FAKEUSDC", 1_000_000n * E18, 100_000_000n * E6); // "deep" only in the fake
    add("dustWeth", "DUST", "WETH", 1_000_000n * 10n ** 12n, E18); // $6,000 of WETH: below the floor
    chain.mine();
    chain.swap(pool.linkUsdc as Hex, h("USDC"), 1000n * E6);
    chain.swap(pool.usdcWeth as Hex, h("USDC"), 1000n * E6);
    chain.mine();
    pricing = createPricing({
      config: {
        pricing: { liquidityFloorUsd: 10_000, maxDeviation: 0.1 },
        chains: [
          {
            id: CHAIN,
            referenceTokens: {
              stablecoins: [h("USDC")],
              wrappedNative: h("WETH"),
              wrappedBtc: [],
              others: [],
            },
          },
        ],
      },
      logger: createSilentLogger(),
      now: () => new Date("2024-06-01T01:00:00Z"),
    });
    await prepareSyntheticChain(t.db, CHAIN, 1);
    await ingest();
  });
  after(() => t.drop());

  it("(a) the look-alike USDC changes neither the real USDC nor anything priced through it", async () => {
    const before = await prices();
    // Push the look-alike to 1 USD and beyond in both its pools, in one block.
    chain.swap(pool.fakeUsdc as Hex, tok.USDC as Hex, 5_000n * E6);
    chain.swap(pool.fakeWeth as Hex, tok.WETH as Hex, 5n * E18);
    chain.swap(pool.scamFake as Hex, tok.FAKEUSDC as Hex, 1_000_000n * E6);
    chain.mine();
    await ingest();
    const after = await prices();
    assert.equal(after.get(tok.FAKEUSDC as string)?.usd_price, null, "the look-alike has no USD price");
    assert.equal(after.get(tok.SCAM as string)?.usd_price, null, "nothing is priced through it");
    for (const symbol of ["USDC", "WETH", "LINK"]) {
      const token = tok[symbol] as string;
      assert.equal(after.get(token)?.usd_price, before.get(token)?.usd_price, `${symbol} unchanged`);
    }
    const { rows } = await t.db.query<{ volume_usd: number | null }>(
      "SELECT volume_usd FROM swaps WHERE chain_id = $1 AND pool = $2",
      [CHAIN, pool.scamFake],
    );
    assert.deepEqual(rows, [{ volume_usd: null }], "a trade of two unpriced tokens has no USD value");
  });

  it("(b) one trade moving a thin pool of a real token 10× moves its USD price by less than 1 %", async () => {
    const link = tok.LINK as string;
    const before = (await prices()).get(link)?.usd_price as number;
    // Paying (√10 − 1) × 10 WETH (and the fee) into the 10-WETH pool multiplies LINK's price there by 10.
    chain.swap(pool.linkWeth as Hex, tok.WETH as Hex, 21_700_000_000_000_000_000n);
    chain.mine();
    await ingest();
    const { reserve0, reserve1, token0 } = chain.reserves(pool.linkWeth as Hex);
    const [rLink, rWeth] = token0 === link ? [reserve0, reserve1] : [reserve1, reserve0];
    const thinPrice = (Number(rWeth) / Number(rLink)) * 3000;
    assert.ok(thinPrice > 140, `the thin pool now says ${thinPrice}`);
    const after = (await prices()).get(link);
    const moved = Math.abs((after?.usd_price as number) / before - 1);
    assert.ok(moved < 0.01, `LINK moved ${(moved * 100).toFixed(4)} %`);
    assert.deepEqual(
      after?.provenance.dropped.map((p) => p.pool),
      [pool.linkWeth],
      "dropped as an outlier",
    );
    const { rows } = await t.db.query<{
      token0_usd: number;
      token1_usd: number;
      token0_series_usd: number | null;
      token1_series_usd: number | null;
    }>(
      "SELECT token0_usd, token1_usd, token0_series_usd, token1_series_usd FROM swaps WHERE chain_id = $1 AND pool = $2 ORDER BY block_number DESC LIMIT 1",
      [CHAIN, pool.linkWeth],
    );
    const trade = rows[0];
    const linkUsd = token0 === link ? trade?.token0_usd : trade?.token1_usd;
    assert.ok(Math.abs((linkUsd as number) / before - 1) < 0.01, "the trade's LINK price is the robust one");
    const linkSeries = token0 === link ? trade?.token0_series_usd : trade?.token1_series_usd;
    assert.equal(linkSeries, null, "the pushed trade stays out of LINK's USD series");
  });

  it("(c) a token whose only pool is below the floor has no USD price, and one trade cannot lift it", async () => {
    const dust = (await prices()).get(tok.DUST as string);
    assert.equal(dust?.usd_price, null, "$6,000 < $10,000");
    assert.equal(dust?.provenance.method, "none", "method none");
    // Ten WETH paid in: the pool now holds $66,000 of WETH, but only because of this trade.
    chain.swap(pool.dustWeth as Hex, tok.WETH as Hex, 10n * E18);
    chain.mine();
    await ingest();
    assert.equal(
      (await prices()).get(tok.DUST as string)?.usd_price,
      null,
      "depth is the balance before the trade",
    );
  });
});
