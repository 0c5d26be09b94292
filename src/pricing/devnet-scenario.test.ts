import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Address, encodeDeployData, encodeFunctionData } from "viem";
import { pairWindowOf } from "../_test/aggregates.js";
import { exactly, v2Out } from "../_test/bit-exact.js";
import { createTestDb, type TestDb } from "../_test/db.js";
import {
  type Exact,
  exact,
  exactMul,
  type ReferenceQuote,
  referenceUsdPrice,
  reservesPrice,
  sqrtPriceOf,
  toDouble,
  tradePrice,
  unitsOf,
} from "../_test/exact.js";
import { pipelineConfig } from "../_test/pipeline.js";
import { getPairCandles } from "../api/charts.js";
import { devnetTokenAbi, erc20Abi } from "../devnet/abis.js";
import { compileDevnetContracts } from "../devnet/compile.js";
import { type Deployment, deployMarket } from "../devnet/deploy.js";
import { type HardhatNode, startHardhatNode } from "../devnet/node.js";
import { approveTx, v2AddLiquidityTx, v2SwapTx } from "../devnet/periphery.js";
import { decodePoolStates, poolStateCalls } from "../devnet/pool-state.js";
import { createDevnetRpc, type DevnetRpc } from "../devnet/rpc.js";
import { executeTransactions, type NonceBook, readNonces } from "../devnet/transactions.js";
import { createSilentLogger } from "../internal/logger.js";
import { CANDLE_INTERVALS } from "../model/index.js";
import { getSyncStatus } from "../store/chain-state.js";
import { createIndexer } from "../sync/indexer.js";
import { createPricing } from "./pricing.js";

const CHAIN = 31337;
const E18 = 10n ** 18n;
const E9 = 10n ** 9n;
const E6 = 10n ** 6n;

/**
 * A scripted devnet day: the deployed market (real Uniswap V2/V3 contracts) plus two fresh tokens
 * in fresh V2 pairs whose amounts are chosen here, traded at chosen times, indexed by the real
 * indexer with the pricing attached. Expectations are worked out from those amounts.
 */
describe("pricing on the devnet: a scripted scenario", () => {
  let t: TestDb;
  let node: HardhatNode;
  let rpc: DevnetRpc;
  let deployment: Deployment;
  let scrpt: Address;
  let hop: Address;
  let t1: number;
  let t2: number;
  let now: Date;
  let config: ReturnType<typeof pipelineConfig>;

  before(async () => {
    const logger = createSilentLogger();
    t = await createTestDb();
    const until = Math.floor(Date.now() / 1000);
    node = await startHardhatNode({
      port: 0,
      chainId: CHAIN,
      initialDate: new Date((until - 3 * 86_400) * 1000),
      logger,
    });
    deployment = await deployMarket({ rpcUrl: node.rpcUrl, seed: 42, logger });
    rpc = createDevnetRpc(node.rpcUrl);
    // Several transactions per block, mined when asked (as the deployment and the simulator do).
    await rpc.request("evm_setAutomine", [false]);
    const me = deployment.accounts.deployer;
    const nonces: NonceBook = await readNonces(rpc, [me]);
    const periphery = {
      v2Router: deployment.v2.router,
      swapRouter: deployment.v3.swapRouter,
      positionManager: deployment.v3.positionManager,
    };
    const { DevnetToken } = compileDevnetContracts({ logger });
    const deploy = (name: string, symbol: string, decimals: number) => ({
      from: me,
      data: encodeDeployData({
        abi: devnetTokenAbi,
        bytecode: DevnetToken.bytecode,
        args: [name, symbol, decimals],
      }),
      gas: 3_000_000n,
      label: `deploy ${symbol}`,
    });
    const created = await executeTransactions(rpc, nonces, [
      deploy("Script", "SCRPT", 18),
      deploy("Hop", "HOP", 9),
    ]);
    scrpt = created[0]?.contractAddress as Address;
    hop = created[1]?.contractAddress as Address;
    const mint = (token: Address, amount: bigint) => ({
      from: me,
      to: token,
      data: encodeFunctionData({ abi: devnetTokenAbi, functionName: "mint", args: [me, amount] }),
      gas: 100_000n,
      label: `mint ${token}`,
    });
    await executeTransactions(rpc, nonces, [
      mint(scrpt, 1_000_000n * E18),
      mint(hop, 10_000_000n * E9),
      approveTx({ from: me, token: scrpt, spender: periphery.v2Router }),
      approveTx({ from: me, token: hop, spender: periphery.v2Router }),
    ]);
    const usdc = deployment.tokens.USDC.address;
    const weth = deployment.tokens.WETH.address;
    await executeTransactions(rpc, nonces, [
      v2AddLiquidityTx({
        periphery,
        from: me,
        tokenA: scrpt,
        tokenB: usdc,
        amountA: 100_000n * E18,
        amountB: 250_000n * E6,
        newPair: true,
      }),
      v2AddLiquidityTx({
        periphery,
        from: me,
        tokenA: hop,
        tokenB: weth,
        amountA: 1_000_000n * E9,
        amountB: 100n * E18,
        newPair: true,
      }),
    ]);
    t1 = until - 26 * 3600;
    t2 = until - 3600;
    await executeTransactions(
      rpc,
      nonces,
      [v2SwapTx({ periphery, from: me, path: [usdc, scrpt], amountIn: 1000n * E6 })],
      {
        timestamp: t1,
      },
    );
    await executeTransactions(
      rpc,
      nonces,
      [
        v2SwapTx({ periphery, from: me, path: [scrpt, usdc], amountIn: 500n * E18 }),
        v2SwapTx({ periphery, from: me, path: [weth, hop], amountIn: E18 / 2n }),
      ],
      { timestamp: t2 },
    );
    now = new Date((t2 + 120) * 1000);

    config = pipelineConfig(deployment, node.rpcUrl);
    const pricing = createPricing({ config, logger, now: () => now });
    const indexer = createIndexer({
      config,
      db: t.db,
      logger,
      derived: pricing,
      options: { progressBar: false },
    });
    const head = Number(await rpc.request<string>("eth_blockNumber"));
    await indexer.start();
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const [status] = await getSyncStatus(t.db, [CHAIN]);
        if (status && status.indexedBlock >= head) break;
        if (Date.now() > deadline) throw new Error(`not indexed up to ${head} (at ${status?.indexedBlock})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await indexer.stop();
    }
  });
  after(async () => {
    await node?.stop();
    await t?.drop();
  });

  // SCRPT/USDC: 100,000 SCRPT + 250,000 USDC; 1,000 USDC in at t1; 500 SCRPT in at t2.
  const scrptOut1 = v2Out(1000n * E6, 250_000n * E6, 100_000n * E18);
  const usdc1 = 251_000n * E6;
  const scrpt1 = 100_000n * E18 - scrptOut1;
  const usdcOut2 = v2Out(500n * E18, scrpt1, usdc1);
  const usdc2 = usdc1 - usdcOut2;
  const scrpt2 = scrpt1 + 500n * E18;
  // HOP/WETH: 1,000,000 HOP + 100 WETH; 0.5 WETH in at t2.
  const hopOut = v2Out(E18 / 2n, 100n * E18, 1_000_000n * E9);

  const price = async (token: string) =>
    (
      await t.db.query<{ usd_price: number | null; provenance: { route: string[] } }>(
        "SELECT usd_price, provenance FROM token_prices WHERE chain_id = $1 AND token = $2",
        [CHAIN, token.toLowerCase()],
      )
    ).rows[0];
  const poolOf = async (a: string, b: string) =>
    (
      await t.db.query<{ address: string; token0: string }>(
        "SELECT address, token0 FROM pools WHERE chain_id = $1 AND ((token0 = $2 AND token1 = $3) OR (token0 = $3 AND token1 = $2))",
        [CHAIN, a.toLowerCase(), b.toLowerCase()],
      )
    ).rows[0] as { address: string; token0: string };

  const balanceOf = async (token: Address, owner: Address) =>
    BigInt(
      await rpc.request<string>("eth_call", [
        { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [owner] }) },
        "latest",
      ]),
    );

  /**
   * A reference token's exact USD price from the node's own state, by the rule docs/PRICING.md
   * states ("USD price of a token"), computed here independently: its pools against the anchors
   * (stablecoins at exactly 1), each at its exact spot price (V2 reserves, V3 sqrtPriceX96),
   * qualifying when 2 × the stablecoin side's depth ≥ the floor, then the liquidity-weighted
   * median, the drop beyond maxDeviation and the liquidity-weighted mean (src/_test/exact.ts).
   * No such pool trades in the scenario (asserted), so a side's depth is its balance now.
   */
  async function anchoredUsdPrice(key: "WETH" | "WBTC"): Promise<Exact | null> {
    const chain = config.chains[0];
    assert.ok(chain, "the devnet chain");
    const anchors = new Set(chain.referenceTokens.stablecoins.map((a) => a.toLowerCase()));
    // By address: a V4 pool against the native coin carries WETH's key but holds ETH.
    const address = deployment.tokens[key].address;
    const pools = deployment.pools.filter((p) =>
      p.token0 === address
        ? anchors.has(p.token1.toLowerCase())
        : p.token1 === address && anchors.has(p.token0.toLowerCase()),
    );
    assert.ok(pools.length > 0, `${key} has pools against the stablecoins`);
    const traded = await t.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM swaps WHERE chain_id = $1 AND pool = ANY($2)",
      [CHAIN, pools.map((p) => p.address.toLowerCase())],
    );
    assert.equal(
      Number(traded.rows[0]?.n),
      0,
      `${key}'s stablecoin pools did not trade: depth = balance now`,
    );
    const states = decodePoolStates(pools, await rpc.batch<`0x${string}`>(poolStateCalls(pools)));
    const quotes: ReferenceQuote[] = [];
    for (const pool of pools) {
      const state = states.get(pool.key);
      assert.ok(state, pool.key);
      const side = pool.token0Key === key ? 0 : 1;
      const decimals0 = deployment.tokens[pool.token0Key].decimals as number;
      const decimals1 = deployment.tokens[pool.token1Key].decimals as number;
      const quoteDecimals = side === 0 ? decimals1 : decimals0;
      let spot: Exact;
      let quoteBalance: bigint;
      if (state.protocol === "v2") {
        if (state.reserve0 === 0n || state.reserve1 === 0n) continue;
        const [base, quote] =
          side === 0 ? [state.reserve0, state.reserve1] : [state.reserve1, state.reserve0];
        spot = reservesPrice(
          { reserve: base, decimals: side === 0 ? decimals0 : decimals1 },
          { reserve: quote, decimals: quoteDecimals },
        );
        quoteBalance = quote;
      } else {
        if (state.sqrtPriceX96 === 0n) continue;
        spot = sqrtPriceOf(state.sqrtPriceX96, decimals0, decimals1, side);
        quoteBalance = await balanceOf(side === 0 ? pool.token1 : pool.token0, pool.address);
      }
      const liquidityUsd = 2 * unitsOf(quoteBalance, quoteDecimals);
      if (liquidityUsd >= config.pricing.liquidityFloorUsd) quotes.push({ price: spot, liquidityUsd });
    }
    return referenceUsdPrice(quotes, config.pricing.maxDeviation);
  }

  it("prices a stablecoin-paired token from its pool's reserves", async () => {
    exactly(
      (await price(scrpt))?.usd_price,
      reservesPrice({ reserve: scrpt2, decimals: 18 }, { reserve: usdc2, decimals: 6 }),
      "USDC per SCRPT after t2",
    );
  });

  it("prices a WETH-only token through WETH (two hops), and WETH from its anchor pools", async () => {
    const weth = await price(deployment.tokens.WETH.address);
    const wethUsd = await anchoredUsdPrice("WETH");
    assert.ok(wethUsd, "WETH has qualifying stablecoin pools");
    exactly(weth?.usd_price, wethUsd, "WETH: its stablecoin pools by median, drop and weighted mean");
    const hopPrice = await price(hop);
    // Routed: HOP's exact price in WETH (the pair's reserves after t2) × WETH's exact USD price.
    const hopInWeth = reservesPrice(
      { reserve: 1_000_000n * E9 - hopOut, decimals: 9 },
      { reserve: 100n * E18 + E18 / 2n, decimals: 18 },
    );
    exactly(hopPrice?.usd_price, exactMul(hopInWeth, wethUsd), "WETH per HOP × WETH in USD");
    assert.deepEqual(
      hopPrice?.provenance.route.slice(0, 2),
      [hop.toLowerCase(), deployment.tokens.WETH.address.toLowerCase()],
      "HOP → WETH → a stablecoin",
    );
    assert.equal(hopPrice?.provenance.route.length, 3, "two hops");
  });

  it("prices WBTC from its stablecoin pool's sqrtPriceX96", async () => {
    assert.ok(
      deployment.pools.some((p) => p.key === "v3:WBTC/USDC:3000"),
      "the WBTC/USDC V3 pool is among WBTC's stablecoin pools",
    );
    const wbtcUsd = await anchoredUsdPrice("WBTC");
    assert.ok(wbtcUsd, "WBTC has qualifying stablecoin pools");
    exactly(
      (await price(deployment.tokens.WBTC.address))?.usd_price,
      wbtcUsd,
      "sqrtPriceX96²·10^(8 − 6) / 2^192 (or its reciprocal), rounded once",
    );
  });

  it("leaves the look-alike USDC and the thin DUST pool without a price", async () => {
    assert.equal((await price(deployment.tokens.FAKEUSDC.address))?.usd_price ?? null, null, "FAKEUSDC");
    assert.equal((await price(deployment.tokens.DUST.address))?.usd_price ?? null, null, "DUST: $2,000 pool");
  });

  it("computes the pair's 24-hour volume, liquidity and change", async () => {
    const pool = await poolOf(scrpt, deployment.tokens.USDC.address);
    const stats = await pairWindowOf(t.db, CHAIN, pool.address);
    exactly(
      stats?.volume_usd_24h,
      unitsOf(usdcOut2, 6),
      "only t2's trade (t1 is 26 hours ago): the USDC paid out",
    );
    // Exactly: USDC + SCRPT × (USDC / SCRPT) = 2 × USDC, rounded once.
    exactly(
      stats?.liquidity_usd,
      exactMul(exact(2n), exact(usdc2, E6)),
      "USDC + SCRPT at its price: twice the USDC",
    );
    const scrptIs0 = pool.token0 === scrpt.toLowerCase();
    // The pool's prices of token0 in token1 after each trade, exact from the reserves and rounded
    // once; the change is the documented percentage of the two doubles, (p2 / p1 − 1) × 100.
    const token0Price = (scrptReserve: bigint, usdcReserve: bigint) =>
      toDouble(
        scrptIs0
          ? reservesPrice({ reserve: scrptReserve, decimals: 18 }, { reserve: usdcReserve, decimals: 6 })
          : reservesPrice({ reserve: usdcReserve, decimals: 6 }, { reserve: scrptReserve, decimals: 18 }),
      );
    const p1 = token0Price(scrpt1, usdc1);
    const p2 = token0Price(scrpt2, usdc2);
    exactly(stats?.price_change_24h, (p2 / p1 - 1) * 100, "token0 in token1, t2 against t1");
    assert.deepEqual(
      [stats?.buys_24h, stats?.sells_24h],
      scrptIs0 ? [0, 1] : [1, 0],
      "t2 sold SCRPT for USDC",
    );
  });

  it("serves the pair's candles at every interval", async () => {
    const pool = await poolOf(scrpt, deployment.tokens.USDC.address);
    const scrptSide = pool.token0 === scrpt.toLowerCase() ? 0 : 1;
    const usdcPerScrpt1 = tradePrice(
      { amount: scrptOut1, decimals: 18 },
      { amount: 1000n * E6, decimals: 6 },
    );
    const usdcPerScrpt2 = tradePrice({ amount: 500n * E18, decimals: 18 }, { amount: usdcOut2, decimals: 6 });
    for (const interval of Object.values(CANDLE_INTERVALS)) {
      const candles = await getPairCandles(t.db, {
        chainId: CHAIN,
        pool: pool.address,
        side: scrptSide,
        intervalSeconds: interval,
        from: new Date((t1 - 86_400) * 1000),
        to: now,
        now,
      });
      const size = interval * 1000;
      const b1 = Math.floor((t1 * 1000) / size) * size;
      const b2 = Math.floor((t2 * 1000) / size) * size;
      const traded = candles.filter((c) => c.volume > 0);
      assert.deepEqual(
        traded.map((c) => c.time),
        [b1, b2],
        `${interval}s: the buckets of t1 and t2`,
      );
      exactly(traded[0]?.open, usdcPerScrpt1, `${interval}s: SCRPT in USDC at t1`);
      exactly(traded[1]?.close, usdcPerScrpt2, `${interval}s: SCRPT in USDC at t2`);
      exactly(traded[0]?.volume, unitsOf(scrptOut1, 18), `${interval}s: SCRPT bought at t1`);
      exactly(traded[1]?.volume, 500, `${interval}s: SCRPT sold at t2`);
      const lastBucket = Math.floor((now.getTime() - 1) / size) * size;
      assert.equal(
        candles.length,
        (lastBucket - b1) / size + 1,
        `${interval}s: every interval from t1's up to now`,
      );
    }
  });
});
